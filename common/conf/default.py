"""[DEFAULT] options: identity of this host, service liveness, state path,
how long user messages are kept."""

import socket

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

opts = [
    cfg.StrOpt("host", default=socket.gethostname(), sample_default="<hostname>",
               help="Name of this node, used in service records and in the "
                    "host@backend names of volume services."),
    cfg.StrOpt("state_path", default="./ashlar-data",
               help="Folder for local state: the embedded SQLite database and "
                    "the file backend's volumes."),
    cfg.StrOpt("storage_availability_zone", default="nova",
               help="Availability zone of this node's services and pools, "
                    "and, on the API, of a volume or group created without "
                    "one."),
    cfg.BoolOpt("allow_availability_zone_fallback", default=False,
                help="Create a volume or group that asks for a zone no "
                     "volume service is in in the default zone "
                     "(storage_availability_zone) instead of refusing it "
                     "(400)."),
    cfg.IntOpt("report_interval", default=10, min=1,
               help="Seconds between service heartbeats written to the "
                    "services table."),
    cfg.IntOpt("service_down_time", default=60, min=1,
               help="A service without a heartbeat for this many seconds is "
                    "reported down and its pools stop counting."),
    cfg.StrOpt("default_volume_type", default="__DEFAULT__",
               help="Volume type used when a create names none."),
    cfg.IntOpt("rpc_call_timeout", default=30, min=1,
               help="Seconds an RPC call waits for its answer."),
    cfg.IntOpt("message_ttl", default=2592000, min=1,
               help="Seconds a user message (GET /messages) is kept at "
                    "least: its guaranteed_until is its creation plus "
                    "this."),
    cfg.IntOpt("message_reap_interval", default=86400, min=1,
               help="Seconds between the schedulers' deletions of user "
                    "messages past their guaranteed_until."),
]


def _messaging_opts() -> list:
    """oslo.messaging's [DEFAULT] options (transport_url and friends)."""
    messaging.set_transport_defaults(control_exchange="ashlar")
    return [opt for group, group_opts in messaging_opts.list_opts()
            if group is None for opt in group_opts]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)
    conf.register_opts(_messaging_opts())


def list_opts() -> list:
    return [("DEFAULT", opts)]
