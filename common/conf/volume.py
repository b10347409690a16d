"""[DEFAULT] options of the volume service: which backends this node runs."""

from oslo_config import cfg

opts = [
    cfg.ListOpt("enabled_backends", default=["file"],
                help="Backend sections this ashlar-volume runs; each names "
                     "its driver in ``volume_driver``."),
    cfg.IntOpt("backend_stats_polling_interval", default=10, min=1,
               help="Seconds between capability reports of each backend."),
]

backend_opts = [
    cfg.StrOpt("volume_driver", default="file",
               help="Driver entry point name (group ashlar.volume.drivers)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def register_backend_opts(conf: cfg.ConfigOpts, group: str) -> None:
    """Register the generic options of one backend section."""
    conf.register_opts(backend_opts, group=group)


def list_opts() -> list:
    return [("DEFAULT", opts), ("backend", backend_opts)]
