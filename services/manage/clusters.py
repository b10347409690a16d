"""``cluster list``: the clusters of volume services, as
``cinder-manage cluster list`` and Cinder's ``os-clusters`` show them."""

import argparse

from common import constants
from common.db.api import clusters as clusters_db
from common.db.api import services as services_db
from services.manage import base


class ClusterList(base.Lister):
    """List the clusters: up while one member heartbeats, enabled or not,
    members and members down, last heartbeat."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--name", help="Only this cluster (a bare name "
                            "also matches its cluster@backend names).")
        parser.add_argument("--binary", default=constants.VOLUME_BINARY,
                            help="Default: %(default)s.")
        parser.add_argument("--services", action="store_true",
                            help="Also name each cluster's members.")
        return parser

    def take_action(self, args: argparse.Namespace
                    ) -> tuple[tuple[str, ...], list[tuple]]:
        self.app.database()
        ctxt = base.admin()
        down_time = self.app.conf.service_down_time
        states = clusters_db.cluster_list(
            ctxt, down_time, name=args.name,
            binary=constants.ashlar_binary(args.binary))
        columns: tuple[str, ...] = (
            "Name", "Binary", "State", "Status", "Hosts", "Down hosts",
            "Last heartbeat", "Disabled reason")
        rows = [(state.row.name, state.row.binary,
                 "up" if state.is_up else "down",
                 "disabled" if state.row.disabled else "enabled",
                 state.num_hosts, state.num_down_hosts,
                 base.when(state.last_heartbeat),
                 state.row.disabled_reason or "") for state in states]
        if not args.services:
            return columns, rows
        members: dict[str | None, list[str]] = {}
        binary = constants.ashlar_binary(args.binary)
        for row in services_db.service_list(ctxt, binary=binary):
            members.setdefault(row.cluster_name, []).append(row.host)
        names = [", ".join(sorted(members.get(state.row.name, [])))
                 for state in states]
        return (columns + ("Services",),
                [row + (shown,) for row, shown in zip(rows, names,
                                                      strict=True)])
