"""The cliff application base of Ashlar's command-line tools."""

import argparse
from typing import Any

from cliff import app as cliff_app
from cliff import command
from cliff import commandmanager

from common import version


class ConfigApp(cliff_app.App):
    """A cliff App with ``--config-file`` (repeatable) and named commands."""

    def __init__(self, description: str, namespace: str,
                 commands: dict[str, type[command.Command]]) -> None:
        manager = commandmanager.CommandManager(namespace)
        for name, command_class in commands.items():
            manager.add_command(name, command_class)
        super().__init__(description=description, version=version.release(),
                         command_manager=manager, deferred_help=True)

    def build_option_parser(self, description: str | None,
                            version: str | None,
                            argparse_kwargs: dict[str, Any] | None = None
                            ) -> argparse.ArgumentParser:
        parser = super().build_option_parser(description, version,
                                             argparse_kwargs)
        parser.add_argument("--config-file", action="append", default=[],
                            help="Ashlar configuration file (repeatable).")
        return parser

    def config_args(self) -> list[str]:
        """The ``--config-file`` arguments for oslo.config."""
        args = []
        for path in self.options.config_file:
            args += ["--config-file", path]
        return args
