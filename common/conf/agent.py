"""[agent] options of ``ashlar-agent`` on compute hosts."""

from oslo_config import cfg

GROUP = "agent"

opts = [
    cfg.StrOpt("root_helper", default="sudo",
               help="Command prefix os-brick uses to run privileged commands."),
    cfg.HostAddressOpt("my_ip", default="127.0.0.1",
                       help="This host's address, sent in the connector."),
    cfg.BoolOpt("multipath", default=False,
                help="Ask for multipath connections."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> list:
    return [(GROUP, opts)]
