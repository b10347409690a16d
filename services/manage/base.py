"""What the operator commands share: the app they run in, the refusal,
an admin context, and time as the tables show it."""

import datetime

import sqlalchemy as sa
from cliff import command
from cliff import lister
from oslo_config import cfg

from common import cli
from common import conf as ashlar_conf
from common import context
from common import rpc
from common.db.api import engine as db_engine


class Console(cli.ConfigApp):
    """``ashlar-manage``'s app as its commands use it: the config, and the
    database and the bus, each set up by the commands that use it."""

    conf: cfg.ConfigOpts

    def initialize_app(self, argv: list[str]) -> None:
        self.conf = ashlar_conf.CONF
        self.conf(self.config_args(), project="ashlar")

    def engine(self) -> sa.engine.Engine:
        """The database's engine (only the db commands need one)."""
        self.database()
        return db_engine.get_engine()

    def database(self) -> None:
        """Set up the database access (the commands that use it call it)."""
        db_engine.configure(self.conf)

    def bus(self) -> None:
        """Set up the RPC transport (the commands that call services)."""
        rpc.init(self.conf)


class Command(command.Command):
    """A command of ``ashlar-manage``."""

    app: Console


class Lister(lister.Lister):
    """A command of ``ashlar-manage`` that lists (cliff's ``-f``)."""

    app: Console


class RefusedError(Exception):
    """What the operator asked cannot be done (cliff prints it, exits 1)."""


def admin() -> context.RequestContext:
    """The context of an operator at the console: admin, no project."""
    return context.get_admin_context()


def when(moment: datetime.datetime | None) -> str:
    """A timestamp as the tables show it (ISO 8601, seconds), or ``-``."""
    return moment.replace(microsecond=0).isoformat() if moment else "-"
