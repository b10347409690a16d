"""The capability report of one backend: what schedulers and API workers
know of its pools.

The backend's stats go out by fanout, stamped with time and sender, on a
timer, at start, on request, and soon after a capacity change (a burst of
changes makes one report); a graceful stop withdraws them, and no report
follows the withdrawal.
"""

import threading
import time

from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common.db.api import services as services_db
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import backend as volume_backend

LOG = logging.getLogger(__name__)
#: Seconds between a capacity change and the report that tells about it.
REPORT_COALESCE_DELAY = 0.2


class CapabilityReporter:
    """Reports (and withdraws) the pools of one backend."""

    def __init__(self, here: volume_backend.Backend,
                 capabilities: scheduler_rpcapi.CapabilitiesAPI) -> None:
        self.here = here
        self.capabilities_rpcapi = capabilities
        self._report_lock = threading.Lock()
        self._report_pending = False
        #: Serialises reports with the withdrawal; none is sent after it.
        self._send_lock = threading.Lock()
        self._withdrawn = False

    def capacity_changed(self) -> None:
        """Report soon after a capacity change; a burst makes one report.

        The scheduler already consumed the capacity in its own view when it
        placed the volume, so a short delay costs no accuracy and saves a
        stats refresh and a fanout per volume under load.
        """
        with self._report_lock:
            if self._report_pending:
                return
            self._report_pending = True
        timer = threading.Timer(REPORT_COALESCE_DELAY, self._report_pending_now)
        timer.daemon = True
        timer.start()

    def _report_pending_now(self) -> None:
        with self._report_lock:
            self._report_pending = False
        self.report()

    def report(self) -> None:
        """Fanout this backend's stats, stamped with time and sender."""
        stats = self.here.stats(refresh=True)
        with self._send_lock:
            if self._withdrawn:
                return
            self.capabilities_rpcapi.update_service_capabilities(
                ashlar_context.get_admin_context(), self.here.service_host,
                stats, time.time())

    def withdraw(self) -> None:
        """Withdraw this backend's pools: schedulers and API workers stop
        counting them now, not when the last report expires.  A member of
        a cluster stops reporting only: the cluster's pools stay while
        another member is up (they expire if none is)."""
        with self._send_lock:
            self._withdrawn = True
            if self.here.cluster_host and self._other_members_up():
                LOG.info("%s leaves cluster %s; its other members serve "
                         "the pools", self.here.member_host,
                         self.here.cluster_host)
                return
            sent = self.capabilities_rpcapi.withdraw_service_capabilities(
                ashlar_context.get_admin_context(), self.here.service_host,
                time.time())
        if sent:
            LOG.info("Withdrew the pools of %s", self.here.service_host)

    def _other_members_up(self) -> bool:
        """Whether a member of this one's cluster other than this one is up
        (this one's row is marked stopped before the withdrawal)."""
        rows = services_db.service_liveness(
            ashlar_context.get_admin_context(), constants.VOLUME_BINARY)
        return any(row.host == self.here.cluster_host and services_db.is_up(
            row, self.here.conf.service_down_time) for row in rows)
