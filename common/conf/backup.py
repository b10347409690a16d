"""The backup service's options, with Cinder's names (``[DEFAULT]``)."""

from oslo_config import cfg

#: The backup drivers, by the name ``backups.service`` records.
DRIVERS = ("drivers.backup.posix", "drivers.backup.ceph")

opts = [
    cfg.StrOpt("backup_driver", default="drivers.backup.posix",
               choices=[
                   (DRIVERS[0], "chunked, compressed files in "
                    "backup_posix_path"),
                   (DRIVERS[1], "snapshots of RBD images in a Ceph pool, "
                    "incremental by rbd diff")],
               help="Where backups go: a POSIX directory "
                    "(backup_posix_path) or a Ceph pool (backup_ceph_*)."),
    cfg.StrOpt("backup_posix_path", default="$state_path/backup",
               help="Directory the POSIX backup driver writes backups "
                    "under (one folder per container, one per backup)."),
    cfg.StrOpt("backup_container", default="backups",
               help="Container (folder) of a backup that names none."),
    cfg.IntOpt("backup_file_size", default=32 * 1024 * 1024,
               min=4096,
               help="Bytes of a volume in each chunk of a backup; an "
                    "incremental backup stores the chunks whose checksum "
                    "changed from its parent's.  Must be a multiple of "
                    "4096."),
    cfg.StrOpt("backup_compression_algorithm", default="zlib",
               choices=["zlib", "none"],
               help="How chunks are compressed."),
    cfg.StrOpt("backup_ceph_conf", default="/etc/ceph/ceph.conf",
               help="ceph.conf of the cluster the Ceph backup driver "
                    "writes to: monitors and, unless backup_ceph_keyring "
                    "is set, where the user's keyring lies."),
    cfg.StrOpt("backup_ceph_user", default="cinder-backup",
               help="The cephx user (without ``client.``) of the Ceph "
                    "backup driver."),
    cfg.StrOpt("backup_ceph_keyring",
               help="Keyring of backup_ceph_user; by default the one "
                    "ceph.conf names."),
    cfg.StrOpt("backup_ceph_pool", default="backups",
               help="Pool of a backup whose container is "
                    "backup_container (the api's default); another "
                    "container names the pool itself, as in Cinder."),
    cfg.IntOpt("backup_ceph_chunk_size", default=128 * 1024 * 1024,
               min=4096,
               help="Bytes the Ceph backup driver reads and writes at a "
                    "time; it also counts a backup's ``object_count`` in "
                    "these chunks."),
    cfg.IntOpt("backup_ceph_connect_timeout", default=10, min=1,
               help="Seconds to wait for the backup cluster when "
                    "connecting."),
    cfg.BoolOpt("backup_takeover", default=False,
                help="Whether this service's store is one every backup "
                     "service with the same backup_driver shares (one "
                     "backup_posix_path on shared storage, or one Ceph "
                     "cluster). If so, it takes over the backups, "
                     "restores and deletes in flight of those seen down "
                     "(no heartbeat for service_down_time) and finishes "
                     "them. Set it only where that holds: a taker reads "
                     "the chunks the dead service wrote."),
    cfg.IntOpt("backup_takeover_interval", default=60, min=1,
               help="Seconds between a backup service's checks for backup "
                    "services seen down whose work it takes over (with "
                    "backup_takeover)."),
    cfg.IntOpt("backup_restore_wait", default=300, min=1,
               help="Seconds a restore into a new volume waits for the "
                    "volume to be created."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> list:
    return [("DEFAULT", opts)]
