"""[DEFAULT] options of the volume service: which backends this node runs."""

from oslo_config import cfg

opts = [
    cfg.ListOpt("enabled_backends", default=["file"],
                help="Backend sections this ashlar-volume runs; each names "
                     "its driver in ``volume_driver``."),
    cfg.IntOpt("backend_stats_polling_interval", default=10, min=1,
               help="Seconds between capability reports of each backend."),
    cfg.IntOpt("migration_stall_timeout", default=60, min=10,
               help="Seconds a volume may move to another pool (retyping "
                    "or maintenance, migration_status migrating) without "
                    "a sign of progress before its source's volume "
                    "service ends the move: the volume stays where it "
                    "was, migration_status error. The node copying it "
                    "signs every third of this while it copies. The default "
                    "is service_down_time's: a move whose copying node "
                    "died ends when that node is seen down. Keep it "
                    "above rpc_call_timeout."),
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
