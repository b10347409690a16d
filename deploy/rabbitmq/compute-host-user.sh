#!/bin/sh
# Create (or update) the RabbitMQ user of one compute host: it may call the
# api's RPC door (topic ashlar-api) and nothing else.  See README.md here for
# what every pattern allows and refuses.
#
#   compute-host-user.sh VHOST USER PASSWORD [CONTROL_EXCHANGE] [API_TOPIC]
#
# CONTROL_EXCHANGE  the exchange the door's topic lives on: "ashlar-door",
#                   the door's own (common.constants.DOOR_EXCHANGE), apart
#                   from the internal bus's control exchange ("ashlar").
# API_TOPIC         the door's topic, "ashlar-api".
#
# Environment:
# REPLY_QUEUE_HOST  optional.  Unset: the host's reply queues are the
#                   oslo.messaging default, reply_<32 hex digits>.  Set to
#                   the host's [oslo_messaging_rabbit] hostname when its
#                   agent runs with use_queue_manager = true: only
#                   reply_<REPLY_QUEUE_HOST>:... queues are then its own.
# RABBITMQCTL       the rabbitmqctl command (default: rabbitmqctl).
#
# Run it again to change the password or the patterns: the user's tags and
# its permissions and topic permissions on VHOST are replaced, its rights on
# other vhosts are left alone.  The password is passed to rabbitmqctl as an
# argument, as it is to this script (rabbitmqctl 3.10 alters some passwords
# read from its standard input: "$", leading and trailing blanks).
set -eu

usage() {
    echo "usage: $0 VHOST USER PASSWORD [CONTROL_EXCHANGE] [API_TOPIC]" >&2
    exit 2
}

[ "$#" -ge 3 ] && [ "$#" -le 5 ] || usage
VHOST=$1
USER_NAME=$2
PASSWORD=$3
EXCHANGE=${4:-ashlar-door}
TOPIC=${5:-ashlar-api}
CTL=${RABBITMQCTL:-rabbitmqctl}

for value in "$VHOST" "$USER_NAME" "$PASSWORD" "$EXCHANGE" "$TOPIC"; do
    [ -n "$value" ] || usage
done
case $USER_NAME in
    -*) echo "$0: a user name may not start with '-'" >&2; exit 2 ;;
esac

# A regular expression matching exactly the text $1.
literal() {
    printf '%s\n' "$1" | sed 's/[].[\\*^$()+?{}|]/\\&/g'
}

X=$(literal "$EXCHANGE")
T=$(literal "$TOPIC")
if [ -n "${REPLY_QUEUE_HOST:-}" ]; then
    REPLY="reply_$(literal "$REPLY_QUEUE_HOST"):.*"
else
    REPLY='reply_[0-9a-f]{32}'
fi

CONFIGURE="^($X|$REPLY)\$"   # declare the exchange (oslo.messaging always
                             # does) and the host's own reply queues
WRITE="^$X\$"                # publish to the exchange only (not amq.default)
READ="^$REPLY\$"             # consume only the reply queues
TOPIC_WRITE="^$T\$"          # ... with routing key API_TOPIC only
TOPIC_READ='^$'              # bind nothing

# Whether the first column of the listing $2 holds the name $1.
listed() {
    printf '%s\n' "$2" |
        N=$1 awk -F '\t' '$1 == ENVIRON["N"] { f = 1 } END { exit !f }'
}

VHOSTS=$("$CTL" -q list_vhosts --no-table-headers name)
USERS=$("$CTL" -q list_users --no-table-headers)
if ! listed "$VHOST" "$VHOSTS"; then
    echo "$0: no vhost $VHOST (rabbitmqctl add_vhost first)" >&2
    exit 1
fi
if listed "$USER_NAME" "$USERS"; then
    "$CTL" -q change_password "$USER_NAME" "$PASSWORD" >/dev/null
else
    "$CTL" -q add_user "$USER_NAME" "$PASSWORD" >/dev/null
fi
"$CTL" -q set_user_tags "$USER_NAME"
"$CTL" -q set_permissions -p "$VHOST" "$USER_NAME" \
    "$CONFIGURE" "$WRITE" "$READ"
"$CTL" -q clear_topic_permissions -p "$VHOST" "$USER_NAME"
"$CTL" -q set_topic_permissions -p "$VHOST" "$USER_NAME" "$EXCHANGE" \
    "$TOPIC_WRITE" "$TOPIC_READ"

echo "$USER_NAME on vhost $VHOST: configure '$CONFIGURE' write '$WRITE'" \
     "read '$READ'; topic exchange '$EXCHANGE' write '$TOPIC_WRITE'" \
     "read '$TOPIC_READ'"
