"""Quota defaults, with Cinder's option names (``[DEFAULT]``).

They apply to every project that has no limit of its own for a resource
and when the ``default`` quota class sets none (``os-quota-class-sets``).
-1 means unlimited.
"""

from oslo_config import cfg

opts = [
    cfg.IntOpt("quota_volumes", default=10, min=-1,
               help="Volumes a project may have."),
    cfg.IntOpt("quota_gigabytes", default=1000, min=-1,
               help="GiB of volumes (and, once Ashlar has them, snapshots) "
                    "a project may have."),
    cfg.IntOpt("quota_snapshots", default=10, min=-1,
               help="Snapshots a project may have (enforced once Ashlar "
                    "has snapshots)."),
    cfg.IntOpt("quota_backups", default=10, min=-1,
               help="Backups a project may have."),
    cfg.IntOpt("quota_backup_gigabytes", default=1000, min=-1,
               help="GiB of backups a project may have."),
    cfg.IntOpt("quota_groups", default=10, min=-1,
               help="Groups a project may have."),
    cfg.IntOpt("per_volume_size_limit", default=-1, min=-1,
               help="Largest volume, in GiB (quota per_volume_gigabytes)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> list:
    return [("DEFAULT", opts)]
