"""The backup service's options, with Cinder's names (``[DEFAULT]``)."""

from oslo_config import cfg

opts = [
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
    cfg.IntOpt("backup_restore_wait", default=300, min=1,
               help="Seconds a restore into a new volume waits for the "
                    "volume to be created."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> list:
    return [("DEFAULT", opts)]
