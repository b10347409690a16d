"""[database] options come from oslo.db; Ashlar only sets the default URL."""

from oslo_config import cfg
from oslo_db import options as db_options


def register_opts(conf: cfg.ConfigOpts) -> None:
    db_options.set_defaults(conf)


def list_opts() -> list:
    return db_options.list_opts()
