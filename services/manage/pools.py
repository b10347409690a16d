"""``pool list``: the pools a scheduler holds, how old their reports are,
whether they count, and which volume types each could take today (what
the api's early rejection decides on)."""

import argparse
import json

from common import capabilities
from common import constants
from common import extra_specs
from common.db.api import rows as rows_api
from common.db.api import services as services_db
from common.db.api import types as types_db
from services.manage import base
from services.scheduler import rpcapi as scheduler_rpcapi


class PoolList(base.Lister):
    """List the pools: capabilities, report age, the types they take."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--long", action="store_true",
                            help="Add every capability (JSON).")
        return parser

    def take_action(self, args: argparse.Namespace
                    ) -> tuple[tuple[str, ...], list[tuple]]:
        self.app.database()
        self.app.bus()
        conf = self.app.conf
        ctxt = base.admin()
        reports = scheduler_rpcapi.SchedulerAPI(conf).get_pools(ctxt)
        services = _best_rows(services_db.service_liveness(
            ctxt, constants.VOLUME_BINARY), conf.service_down_time)
        window = capabilities.freshness_window(conf)
        type_specs = [(vtype.name, extra_specs.capability_specs(
            {spec.key: spec.value for spec in vtype.extra_specs}))
            for vtype in types_db.type_list(ctxt)]
        columns: tuple[str, ...] = (
            "Pool", "Counts", "Report age (s)", "State", "Free/total GiB",
            "Multiattach", "Fencing", "Types")
        rows: list[tuple] = []
        for backend, report in sorted(reports.items()):
            counts = _counts(services.get(backend), report["age"], window,
                             conf.service_down_time)
            for pool, caps in sorted(capabilities.flatten(
                    backend, report["capabilities"],
                    report["timestamp"]).items()):
                row: tuple = (
                    pool, counts, round(report["age"], 1),
                    caps.get("backend_state", "up"),
                    "%s/%s" % (caps.get("free_capacity_gb"),
                               caps.get("total_capacity_gb")),
                    bool(caps.get("multiattach")),
                    bool(caps.get("fencing")),
                    " ".join(name for name, specs in type_specs
                             if not extra_specs.unsatisfied_specs(
                                 caps, specs)))
                if args.long:
                    row += (json.dumps(caps, sort_keys=True, default=str),)
                rows.append(row)
        if args.long:
            columns += ("Capabilities",)
        return columns, rows


def _best_rows(rows: list[rows_api.ServiceLiveness], down_time: int
               ) -> dict[str, rows_api.ServiceLiveness]:
    """One row per backend name; of a cluster's members, one that counts
    if any does."""
    best: dict[str, rows_api.ServiceLiveness] = {}
    for row in rows:
        if row.host not in best or (not row.disabled and services_db.is_up(
                row, down_time)):
            best[row.host] = row
    return best


def _counts(service: rows_api.ServiceLiveness | None, age: float,
            window: float, down_time: int) -> str:
    """Whether the pool counts for placement and early rejection, or why
    not."""
    if service is None:
        return "no (no service row)"
    if service.disabled:
        return "no (service disabled)"
    if not services_db.is_up(service, down_time):
        return "no (service down)"
    if age > window:
        return "no (report older than %gs)" % window
    return "yes"
