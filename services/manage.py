"""``ashlar-manage``: operator commands (``db sync``, ``db version``)."""

import sys

from cliff import command

from common import cli
from common import conf as ashlar_conf
from common.db import api as db_api
from common.db import migrations


class DbSync(command.Command):
    """Create or upgrade the database schema (safe to run repeatedly)."""

    def take_action(self, parsed_args: object) -> None:
        migrations.upgrade(db_api.get_engine())
        self.app.stdout.write("database at revision %s\n"
                              % migrations.version(db_api.get_engine()))


class DbVersion(command.Command):
    """Print the schema revision of the database."""

    def take_action(self, parsed_args: object) -> None:
        self.app.stdout.write("%s\n" % migrations.version(db_api.get_engine()))


class ManageApp(cli.ConfigApp):
    def __init__(self) -> None:
        super().__init__(__doc__, "ashlar.manage",
                         {"db sync": DbSync, "db version": DbVersion})

    def initialize_app(self, argv: list[str]) -> None:
        conf = ashlar_conf.CONF
        conf(self.config_args(), project="ashlar")
        db_api.configure(conf)


def main(argv: list[str] | None = None) -> int:
    return ManageApp().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
