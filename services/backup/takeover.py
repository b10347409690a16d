"""Backups a dead backup service left in flight, taken over by a live one.

A backup service that dies mid-way leaves its rows ``creating``,
``restoring`` or ``deleting``; it resumes them when it starts again
(``BackupWorker.resume``).  If it never does, a live service with
``backup_takeover`` (its store shared with every service of its driver)
moves each such row of a service seen down to itself, with a
compare-and-swap on ``host`` while the dead service's row is locked, so
two takers, or a taker and the owner restarting, never both work on it.
The taker then runs the same idempotent resume steps.
"""

from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import context as ashlar_context
from common.db.api import backups as backups_db

LOG = logging.getLogger(__name__)
Context = ashlar_context.RequestContext


def reachable(row: Any, driver_service: str) -> bool:
    """Whether a taker with driver ``driver_service`` reaches the row's
    data: written by the same driver, or by none yet."""
    return row.service in (None, driver_service)


def take_over(ctxt: Context, conf: cfg.ConfigOpts, host: str,
              driver_service: str) -> list[Any]:
    """Move to ``host`` the in-flight backups it can reach of backup
    services seen down.

    :returns: the rows taken (as read before; their ``host`` was theirs).
    """
    taken = []
    for row in backups_db.in_flight_of_down_services(
            ctxt, conf.service_down_time):
        if row.host == host or not reachable(row, driver_service):
            continue
        if not backups_db.backup_take_over(ctxt, row, host,
                                           conf.service_down_time):
            continue
        LOG.warning("Backup service %(dead)s is down: %(host)s takes over "
                    "the %(status)s of backup %(id)s",
                    {"dead": row.host, "host": host, "status": row.status,
                     "id": row.id})
        taken.append(row)
    return taken
