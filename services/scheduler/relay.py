"""What a scheduler tells api workers of the capability reports it hears.

A thousand backends reporting every ten seconds are a hundred messages a
second; every api worker used to hear each one on its own listener
thread, under the GIL its requests run under.  The early 400 needs only
what the reports say and that they keep coming, so a scheduler relays
(on ``ashlar-capability-view``, a fanout to every api worker):

- a report whose content differs from the last one it relayed for that
  backend, at once, with its fingerprint (``capabilities.fingerprint``);
- that the others came, in one message per ``interval``: for each backend
  heard again, the fingerprint of what it repeated, its timestamp and its
  age;
- a withdrawal, at once.

An api worker renews a backend only when it holds the content of that
fingerprint; otherwise it asks a scheduler for the report
(``get_reports``).  Every scheduler relays, so api workers keep hearing
while one runs; a renewal reaches them up to ``interval`` late, which
only makes a report look older, never fresher, than it is.
"""

import threading
import time
from collections.abc import Callable

from oslo_log import log as logging

from common import capabilities
from common import context as ashlar_context
from services.scheduler import rpcapi as scheduler_rpcapi

LOG = logging.getLogger(__name__)

#: Seconds between renewal messages (at most a quarter of the freshness
#: window, so that a renewal always lands well inside it).
RENEWAL_INTERVAL = 1.0


def renewal_interval(freshness: float) -> float:
    """Seconds between renewal messages for a freshness window."""
    return min(RENEWAL_INTERVAL, freshness / 4)


class CapabilityRelay:
    """Relays reports to api workers: changes at once, repeats in batches.

    :param view: the fanout to api workers.
    :param clock: monotonic clock for the renewals' ages.
    """

    def __init__(self, view: scheduler_rpcapi.CapabilityViewAPI,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.view = view
        self._clock = clock
        self._lock = threading.Lock()
        #: host@backend -> (fingerprint, timestamp, report) last relayed.
        self._relayed: dict[str, tuple[str, float, dict]] = {}
        #: host@backend -> (fingerprint, timestamp, receipt) not yet renewed.
        self._pending: dict[str, tuple[str, float, float]] = {}

    def heard(self, service_host: str, report: dict,
              timestamp: float) -> None:
        """A report arrived: relay it if its content is new, else keep it
        for the next renewal message.

        :param report: the store's private copy of it, which nobody
            changes (``CapabilityStore.reports``): kept to compare the
            next one with.

        NOTE(ashlar): a repeat is told by comparing the reports (about a
        microsecond); the fingerprint, tens of microseconds of JSON, is
        made only for a change.
        """
        with self._lock:
            last = self._relayed.get(service_host)
            if last is not None and timestamp <= last[1]:
                return
            if last is not None and last[2] == report:
                self._relayed[service_host] = (last[0], timestamp, report)
                self._pending[service_host] = (last[0], timestamp,
                                               self._clock())
                return
            digest = capabilities.fingerprint(report)
            self._relayed[service_host] = (digest, timestamp, report)
            self._pending.pop(service_host, None)
        self._send(self.view.update_service_capabilities, service_host,
                   report, timestamp, digest)

    def withdrawn(self, service_host: str, timestamp: float) -> None:
        """A backend withdrew: tell the api workers at once."""
        with self._lock:
            self._relayed.pop(service_host, None)
            self._pending.pop(service_host, None)
        self._send(self.view.withdraw_service_capabilities, service_host,
                   timestamp)

    def flush(self) -> None:
        """Send the renewals gathered since the last flush (one message)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        now = self._clock()
        self._send(self.view.renew_service_capabilities, {
            host: (digest, timestamp, now - received)
            for host, (digest, timestamp, received) in pending.items()})

    def _send(self, method: Callable[..., None], *args: object) -> None:
        """Cast; a lost message costs the api workers a resync (a change)
        or an older receipt (a renewal), never a wrong answer."""
        try:
            method(ashlar_context.get_admin_context(), *args)
        except Exception:  # noqa: BLE001 - the next report tries again
            LOG.warning("Could not relay capabilities to the api workers",
                        exc_info=True)
