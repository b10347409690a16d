"""[upgrade_levels] options: RPC version caps during a rolling upgrade."""

from oslo_config import cfg

GROUP = "upgrade_levels"

opts = [
    cfg.StrOpt("ashlar-scheduler", help="RPC version cap for the scheduler."),
    cfg.StrOpt("ashlar-volume", help="RPC version cap for volume services."),
    cfg.StrOpt("ashlar-api", help="RPC version cap for the api workers "
               "(the RPC door and the capability view)."),
    cfg.StrOpt("ashlar-backup", help="RPC version cap for backup services."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> list:
    return [(GROUP, opts)]
