"""``ashlar-manage``: operator commands, from the config file against the
database (and, for ``pool list`` and ``volume reset-state``, the bus).
Listings take cliff's ``-f table|json|yaml|value|csv``; every command has
``--help``.

    db sync | db version                  the database schema
    user set NAME | user delete NAME      http_basic users
    service list [--host H] [--binary B]  services: up/down, enabled, heartbeat
    service enable|disable HOST [--reason R] | service remove HOST
    pool list [--long]                    pools, report age, types they take
    cluster list [--name N] [--services]  clusters: up/down, enabled, members
    volume reset-state VOLUME --state S [--attach-status detached]
    attachment list [--host H] [--volume V]
    attachment reset ATTACHMENT           remove the row (database only)
"""

import argparse
import getpass
import os
import sys
import tempfile

import bcrypt

from common.db import migrations
from services.manage import base
from services.manage import clusters
from services.manage import pools
from services.manage import services
from services.manage import volumes
from services.manage.base import RefusedError

#: Where ``user set`` reads the password when it is not asked for.
PASSWORD_ENV = "ASHLAR_USER_PASSWORD"
#: bcrypt's cost for new entries (``htpasswd -B`` uses 5; 12 is bcrypt's).
BCRYPT_ROUNDS = 12


class DbSync(base.Command):
    """Create or upgrade the database schema (safe to run repeatedly)."""

    def take_action(self, parsed_args: argparse.Namespace) -> None:
        engine = self.app.engine()
        migrations.upgrade(engine)
        self.app.stdout.write("database at revision %s\n"
                              % migrations.version(engine))


class DbVersion(base.Command):
    """Print the schema revision of the database."""

    def take_action(self, parsed_args: argparse.Namespace) -> None:
        self.app.stdout.write("%s\n" % migrations.version(self.app.engine()))


def _entries(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as stream:
            return [line.rstrip("\n") for line in stream if line.strip()]
    except FileNotFoundError:
        return []


def _write(path: str, lines: list[str]) -> None:
    """Replace the file at once (a reader never sees half of it)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".htpasswd-")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write("".join(line + "\n" for line in lines))
    os.chmod(temp, 0o640)
    os.replace(temp, path)


class _UserCommand(base.Command):
    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name")
        return parser

    def _file(self) -> str:
        return self.app.conf.http_basic.user_file

    def _others(self, name: str) -> list[str]:
        return [line for line in _entries(self._file())
                if line.split(":", 1)[0] != name]


class UserSet(_UserCommand):
    """Add an http_basic user or change its password (bcrypt).

    The password comes from $ASHLAR_USER_PASSWORD, else from a prompt (or
    the first line of standard input).
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--if-missing", action="store_true",
                            help="Leave an existing user as it is.")
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        if ":" in args.name or not args.name.strip():
            raise RefusedError("a user name must be non-empty, without ':'")
        others = self._others(args.name)
        if args.if_missing and len(others) < len(_entries(self._file())):
            self.app.stdout.write("user %s exists; left as it is\n"
                                  % args.name)
            return
        password = _password()
        crypted = bcrypt.hashpw(password.encode(),
                                bcrypt.gensalt(rounds=BCRYPT_ROUNDS))
        _write(self._file(), others + ["%s:%s" % (args.name,
                                                  crypted.decode())])
        self.app.stdout.write("user %s set in %s\n" % (args.name,
                                                       self._file()))


class UserDelete(_UserCommand):
    """Remove an http_basic user."""

    def take_action(self, args: argparse.Namespace) -> None:
        others = self._others(args.name)
        if len(others) == len(_entries(self._file())):
            raise RefusedError("no user %s in %s" % (args.name, self._file()))
        _write(self._file(), others)
        self.app.stdout.write("user %s removed\n" % args.name)


def _password() -> str:
    password = os.environ.get(PASSWORD_ENV)
    if password is None:
        password = (getpass.getpass("Password: ") if sys.stdin.isatty()
                    else sys.stdin.readline().rstrip("\n"))
    if not password:
        raise RefusedError("an empty password is refused")
    return password


class ManageApp(base.Console):
    def __init__(self) -> None:
        super().__init__(__doc__, "ashlar.manage",
                         {"db sync": DbSync, "db version": DbVersion,
                          "user set": UserSet, "user delete": UserDelete,
                          "service list": services.ServiceList,
                          "service enable": services.ServiceEnable,
                          "service disable": services.ServiceDisable,
                          "service remove": services.ServiceRemove,
                          "pool list": pools.PoolList,
                          "cluster list": clusters.ClusterList,
                          "volume reset-state": volumes.VolumeResetState,
                          "attachment list": volumes.AttachmentList,
                          "attachment reset": volumes.AttachmentReset})


def main(argv: list[str] | None = None) -> int:
    return ManageApp().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
