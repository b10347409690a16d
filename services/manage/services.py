"""``service list|enable|disable|remove``: the services table, as
``cinder-manage service`` and Cinder's ``os-services`` show it."""

import argparse

from common import constants
from common import exception
from common.db.api import services as services_db
from services.manage import base


class ServiceList(base.Lister):
    """List the services: up or down, enabled or not, last heartbeat,
    release."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--host", help="Only this host (and its "
                            "host@backend services).")
        parser.add_argument("--binary", help="Only this binary.")
        return parser

    def take_action(self, args: argparse.Namespace
                    ) -> tuple[tuple[str, ...], list[tuple]]:
        self.app.database()
        down_time = self.app.conf.service_down_time
        rows = services_db.service_list(base.admin(), args.host, args.binary)
        return (("Host", "Binary", "Zone", "Status", "State",
                 "Last heartbeat", "Version", "Disabled reason"),
                [(row.host, row.binary, row.availability_zone,
                  "disabled" if row.disabled else "enabled",
                  "up" if services_db.is_up(row, down_time) else "down",
                  base.when(row.heartbeat_at), row.version or "-",
                  row.disabled_reason or "")
                 for row in rows])


class _ServiceCommand(base.Command):
    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("host", help="host@backend of a volume service, "
                            "or a scheduler's host.")
        parser.add_argument("--binary", default=constants.VOLUME_BINARY,
                            help="Default: %(default)s.")
        return parser


class ServiceEnable(_ServiceCommand):
    """Enable a service (a volume service takes new volumes again)."""

    def take_action(self, args: argparse.Namespace) -> None:
        _set_disabled(self.app, args.host, args.binary, False, None)


class ServiceDisable(_ServiceCommand):
    """Disable a service (no new volumes; its volumes go on working)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--reason", help="Why (shown by os-services).")
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        _set_disabled(self.app, args.host, args.binary, True, args.reason)


def _set_disabled(app: base.Console, host: str, binary: str, disabled: bool,
                  reason: str | None) -> None:
    app.database()
    try:
        services_db.service_set_disabled(base.admin(), host, binary,
                                         disabled, reason)
    except exception.ServiceNotFound as exc:
        raise base.RefusedError(str(exc))
    app.stdout.write("%s on %s %s\n" % (binary, host, "disabled" if disabled
                                        else "enabled"))


class ServiceRemove(_ServiceCommand):
    """Remove the row of a service that is gone for good.

    Refused while it heartbeats, or while volumes still live on it.
    """

    def take_action(self, args: argparse.Namespace) -> None:
        self.app.database()
        try:
            services_db.service_remove(base.admin(), args.host, args.binary,
                                       self.app.conf.service_down_time)
        except (exception.ServiceNotFound, services_db.ServiceInUse) as exc:
            raise base.RefusedError(str(exc))
        self.app.stdout.write("%s on %s removed\n" % (args.binary, args.host))
