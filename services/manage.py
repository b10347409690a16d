"""``ashlar-manage``: operator commands (``db sync``, ``db version``)."""

import sys

from cliff import app as cliff_app
from cliff import command
from cliff import commandmanager

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


class ManageApp(cliff_app.App):
    def __init__(self) -> None:
        commands = commandmanager.CommandManager("ashlar.manage")
        commands.add_command("db sync", DbSync)
        commands.add_command("db version", DbVersion)
        super().__init__(description=__doc__, version="0.1",
                         command_manager=commands, deferred_help=True)

    def build_option_parser(self, description: str, version: str,
                            argparse_kwargs: dict | None = None) -> object:
        parser = super().build_option_parser(description, version,
                                             argparse_kwargs)
        parser.add_argument("--config-file", action="append", default=[],
                            help="Ashlar configuration file (repeatable).")
        return parser

    def initialize_app(self, argv: list[str]) -> None:
        conf = ashlar_conf.CONF
        args = []
        for path in self.options.config_file:
            args += ["--config-file", path]
        conf(args, project="ashlar")
        db_api.configure(conf)


def main(argv: list[str] | None = None) -> int:
    return ManageApp().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
