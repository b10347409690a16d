#!/bin/sh
# Write deploy/.env: random passwords for RabbitMQ, PostgreSQL and the
# operator (http_basic user "operator"), and for the "ha" profile
# (deploy/docker-compose.ha.yml) RabbitMQ's Erlang cookie and MariaDB's
# passwords, read by docker-compose.  Nothing
# secret is kept in the repository; run this once before the first
#   docker-compose -f deploy/docker-compose.yml up -d
# An existing file is kept (remove it to start afresh: the databases keep
# the old passwords).
set -eu
env_file="$(dirname "$0")/../.env"
if [ -e "$env_file" ]; then
    echo "$env_file exists; left as it is" >&2
    exit 0
fi
secret() {
    od -An -tx1 -N24 /dev/urandom | tr -d ' \n'
}
umask 077
{
    echo "RABBITMQ_PASSWORD=$(secret)"
    echo "POSTGRES_PASSWORD=$(secret)"
    echo "ASHLAR_OPERATOR_PASSWORD=$(secret)"
    echo "RABBITMQ_ERLANG_COOKIE=$(secret)"
    echo "MARIADB_PASSWORD=$(secret)"
    echo "MARIADB_ROOT_PASSWORD=$(secret)"
    echo "# The address the API is published on (127.0.0.1: this host only)."
    echo "ASHLAR_API_BIND=127.0.0.1"
} > "$env_file"
echo "wrote $env_file; the operator's password is its ASHLAR_OPERATOR_PASSWORD"
