"""[scheduler] options: capability freshness and placement."""

from oslo_config import cfg

GROUP = "scheduler"

opts = [
    cfg.IntOpt("capability_freshness", default=0, min=0,
               help="Seconds a capability report counts after it was sent. "
                    "0 means twice backend_stats_polling_interval."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> list:
    return [(GROUP, opts)]
