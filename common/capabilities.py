"""The per-pool view built from capability reports, with freshness rules.

Both the scheduler and every API worker keep one ``CapabilityStore`` fed by
the ``ashlar-capabilities`` fanout, so both apply the same expiry: a pool
counts only while its last report is younger than the freshness window, its
``backend_state`` is not ``down`` and (where the caller knows it) its service
heartbeats.
"""

import threading
import time
from typing import Any, Callable, Iterable

#: Keys a backend reports once for all its pools.
BACKEND_KEYS = ("volume_backend_name", "vendor_name", "driver_version",
                "storage_protocol")


def freshness_window(conf: Any) -> float:
    """Seconds a report counts: the option, or two polling intervals."""
    configured = conf.scheduler.capability_freshness
    return float(configured or 2 * conf.backend_stats_polling_interval)


def flatten(service_host: str, capabilities: dict,
            timestamp: float) -> dict[str, dict]:
    """Expand one backend report into ``{pool name: pool capabilities}``.

    Backend-level keys apply to every pool that does not override them.
    """
    backend = {k: v for k, v in capabilities.items() if k != "pools"}
    pools = capabilities.get("pools") or [dict(pool_name=service_host.split(
        "@")[-1])]
    result = {}
    for pool in pools:
        merged = dict(backend)
        merged.update(pool)
        merged["timestamp"] = timestamp
        result["%s#%s" % (service_host, merged["pool_name"])] = merged
    return result


class CapabilityStore:
    """Latest report per backend, expiring after ``freshness`` seconds."""

    def __init__(self, freshness: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.freshness = freshness
        self._clock = clock
        self._lock = threading.Lock()
        # service_host -> (received at, sender timestamp, {pool: caps},
        #                  the report as sent)
        self._backends: dict[str, tuple[float, float, dict, dict]] = {}

    def update(self, service_host: str, capabilities: dict,
               timestamp: float, age: float = 0.0) -> bool:
        """Take a report; an older one than we hold is ignored.

        :param age: seconds since another holder received it (warming from a
            scheduler's view keeps that view's ages).
        :returns: whether the report was taken.
        """
        pools = flatten(service_host, capabilities, timestamp)
        with self._lock:
            current = self._backends.get(service_host)
            if current is not None and current[1] > timestamp:
                return False
            self._backends[service_host] = (self._clock() - age, timestamp,
                                            pools, capabilities)
        return True

    def forget(self, service_host: str) -> None:
        with self._lock:
            self._backends.pop(service_host, None)

    def is_fresh(self, received_at: float) -> bool:
        return self._clock() - received_at <= self.freshness

    def fresh_pools(self, up_hosts: Iterable[str] | None = None
                    ) -> dict[str, dict]:
        """Pools that count now: fresh report, backend not down, service up.

        :param up_hosts: ``host@backend`` names whose service heartbeats;
            None when the caller cannot know (then only freshness applies).
        """
        allowed = set(up_hosts) if up_hosts is not None else None
        with self._lock:
            backends = list(self._backends.items())
        result = {}
        for service_host, (received_at, _ts, pools, _report) in backends:
            if not self.is_fresh(received_at):
                continue
            if allowed is not None and service_host not in allowed:
                continue
            for name, caps in pools.items():
                if caps.get("backend_state", "up") != "down":
                    result[name] = caps
        return result

    def all_pools(self) -> dict[str, dict]:
        """Every pool of every report held, fresh or not."""
        with self._lock:
            backends = list(self._backends.values())
        return {name: caps for _r, _t, pools, _report in backends
                for name, caps in pools.items()}

    def backend(self, service_host: str) -> dict | None:
        """The last report of one backend, as its pools."""
        with self._lock:
            entry = self._backends.get(service_host)
        return entry[2] if entry else None

    def export(self) -> dict[str, dict]:
        """Every report held with its age, for another store to warm from."""
        now = self._clock()
        with self._lock:
            backends = list(self._backends.items())
        return {host: {"age": now - received_at, "timestamp": timestamp,
                       "capabilities": report}
                for host, (received_at, timestamp, _p, report) in backends}

    def warm(self, exported: dict[str, dict]) -> None:
        """Take what another store exported, keeping the ages."""
        for host, entry in exported.items():
            self.update(host, entry["capabilities"], entry["timestamp"],
                        age=entry["age"])

    def newest_report_age(self) -> float | None:
        """Seconds since the most recent report of any backend (None: none)."""
        with self._lock:
            times = [entry[0] for entry in self._backends.values()]
        return self._clock() - max(times) if times else None
