"""Placement: filter the counting pools, take the heaviest, consume from it.

The filters and the weigher are :mod:`filters` and :mod:`weighers`; this
module makes them cheap at 10,000 pools:

- the store keeps each pool's weights (thin and thick requests) up to date
  as reports and placements change it (:func:`annotate`);
- :class:`PoolIndex` keeps the pools sorted by weight, moving only the
  pools a report or a placement changed (the store logs them), so a
  placement walks the pools best first and stops at the first that passes;
- a type's capability specs are matched once per group of pools that
  report the same values for the capabilities they read (the store's
  projections), not once per pool; when no group satisfies them the answer
  comes without visiting a pool; and until a group appears or goes, the
  groups that satisfied them are known without matching any (a type pinned
  to one of a thousand backends: a thousand groups).

The answer is the one Cinder's filter-then-weigh pipeline gives: the pool
with the most virtual free capacity among those passing every filter.
"""

import bisect
import collections
import threading
from collections.abc import Callable, Iterable
from typing import Any

from common import capabilities
from common import capacity
from common import exception
from common import extra_specs
from common import zones
from services.scheduler import filters
from services.scheduler import weighers

_THIN_SPECS: dict[str, str | None] = {}
_THICK_SPECS: dict[str, str | None] = {"provisioning:type": "thick"}
_THIN, _THICK = 0, 1
#: Re-sort the whole index rather than move the changed pools when more
#: than one pool in this many changed.
REPOSITION_SHARE = 32


def request_for(volume: Any, specs: dict,
                retype: bool = False) -> filters.PlacementRequest:
    """The placement request of a volume row and its (new) type's extra
    specs, in the zones ``zones.for_placement`` allows."""
    return filters.PlacementRequest(
        size_gb=volume.size, extra_specs=specs,
        availability_zones=zones.for_placement(
            specs, volume.availability_zone, retype))


def annotate(pool: capabilities.PoolState) -> None:
    """Store the pool's weight for thin and for thick requests."""
    caps = pool.caps
    pool.annotation = (weighers.capacity_weight(caps, _THIN_SPECS),
                       weighers.capacity_weight(caps, _THICK_SPECS))


def new_store(freshness: float) -> capabilities.CapabilityStore:
    """A store that charges placements and keeps the weights."""
    return capabilities.CapabilityStore(freshness, charge=weighers.consume,
                                        annotate=annotate)


def _heaviest_first(kind: int) -> Callable[[capabilities.PoolState], float]:
    """Sort key of pools, the heaviest for ``kind`` first (ties keep their
    order)."""
    return lambda pool: -pool.annotation[kind]


class PoolIndex:
    """The store's pools, heaviest first, for thin and for thick requests."""

    def __init__(self, store: capabilities.CapabilityStore) -> None:
        self._store = store
        self._orders: list[list[capabilities.PoolState]] = [[], []]
        self._generation = [-1, -1]
        self._membership = [-1, -1]

    def ordered(self, kind: int) -> list[capabilities.PoolState]:
        """Pools sorted by weight for ``kind`` (``_THIN`` or ``_THICK``).

        Not thread-safe: callers serialise (the :class:`Placer` lock).
        """
        generation = self._store.generation
        membership = self._store.membership
        if self._membership[kind] != membership:
            self._orders[kind] = self._store.pool_states()
            self._membership[kind] = membership
            self._generation[kind] = -1
        if self._generation[kind] != generation:
            self._reorder(kind)
            self._generation[kind] = generation
        return self._orders[kind]

    def _reorder(self, kind: int) -> None:
        """Re-sort, or move just the pools changed since the last order.

        NOTE(ashlar): every placement charges a pool; at 10,000 pools even
        a linear re-sort of the nearly sorted list was most of a placement,
        while moving the one charged pool is two C-speed list operations
        and a binary search.
        """
        order = self._orders[kind]
        heaviest_first = _heaviest_first(kind)
        changed = (self._store.changed_since(self._generation[kind])
                   if self._generation[kind] >= 0 else None)
        if changed is None or len(changed) * REPOSITION_SHARE > len(order):
            order.sort(key=heaviest_first)
            return
        moved = []
        for pool in dict.fromkeys(changed):
            try:
                order.remove(pool)
            except ValueError:
                continue  # joined after the membership check: next rebuild
            moved.append(pool)
        for pool in moved:
            bisect.insort(order, pool, key=heaviest_first)


def _unsatisfied_of(answers: Iterable[tuple[str, ...]]) -> dict[str, None]:
    """Every spec some answer misses, once."""
    found: dict[str, None] = {}
    for missing in answers:
        found.update(dict.fromkeys(missing))
    return found


class _Verdicts:
    """One request's filter results for pools, by the cheapest route."""

    def __init__(self, store: capabilities.CapabilityStore,
                 request: filters.PlacementRequest) -> None:
        self.request = request
        self.wanted = extra_specs.capability_specs(request.extra_specs)
        #: The specs some pool held does not satisfy (for the reason a
        #: placement failed).
        self.unsatisfied: dict[str, None] = {}
        self.projection: capabilities.Projection | None = None
        self._key_of: dict[str, tuple] | None = None
        self._passing: set[tuple] = set()
        if not self.wanted:
            return
        known = store.group_answers(self.wanted)
        if known is not None:
            self.projection, answers = known
            self._passing = set(answers.get((), ()))
            self.unsatisfied = _unsatisfied_of(answers)
        else:
            matched = store.match_groups(self.wanted)
            if matched is None:
                return
            self.projection, results = matched
            self._passing = {key for key, missing in results.items()
                             if not missing}
            self.unsatisfied = _unsatisfied_of(results.values())
        self._key_of = self.projection.key_of

    def candidates(self, store: capabilities.CapabilityStore
                   ) -> list[capabilities.PoolState] | None:
        """The pools whose group satisfies the specs (None: all may)."""
        if self.projection is None:
            return None
        return store.pools_in(self.projection, self._passing)

    @property
    def nothing_passes(self) -> bool:
        """No pool held satisfies the capability specs."""
        return self._key_of is not None and not self._passing

    def failing_filter(self, pool: capabilities.PoolState) -> str | None:
        """Name of the first filter the pool fails (capacity aside)."""
        caps = pool.caps
        if not filters.backend_up(caps):
            return "BackendStateFilter"
        if not zones.in_zone(caps, self.request.availability_zones):
            return "AvailabilityZoneFilter"
        if not self.wanted:
            return None
        if self._key_of is not None:
            if self._key_of.get(pool.name) in self._passing:
                return None
            return "CapabilitiesFilter"
        missing = extra_specs.unsatisfied_specs(caps, self.wanted)
        self.unsatisfied.update(dict.fromkeys(missing))  # matched per pool
        return "CapabilitiesFilter" if missing else None


class Placer:
    """Chooses pools for one scheduler; placements are serialised."""

    def __init__(self, store: capabilities.CapabilityStore) -> None:
        self.store = store
        self.index = PoolIndex(store)
        # NOTE(ashlar): placements consume capacity in the view at once; the
        # lock keeps two placements from reading the same figures.
        self._lock = threading.Lock()

    def choose(self, request: filters.PlacementRequest,
               up_hosts: Iterable[str] | None = None) -> str:
        """Return the best pool's name and consume the size from it.

        :param up_hosts: ``host@backend`` of volume services that heartbeat
            and are enabled (None: not checked).
        :raises NoValidBackend: saying which filters turned pools away and
            why.
        """
        allowed = set(up_hosts) if up_hosts is not None else None
        kind = _THIN if capacity.wants_thin(request.extra_specs) else _THICK
        verdicts = _Verdicts(self.store, request)
        rejected: collections.Counter = collections.Counter()
        if verdicts.nothing_passes:
            counted = self.store.counting(allowed)
            if counted:
                rejected["CapabilitiesFilter"] = len(counted)
            raise exception.NoValidBackend(
                reason=_reason(rejected, verdicts, request))
        with self._lock:
            since = self.store.fresh_since()
            for pool in self._walk(verdicts, kind):
                if (not pool.present or pool.received_at < since
                        or (allowed is not None
                            and pool.backend not in allowed)):
                    continue
                failed = verdicts.failing_filter(pool)
                if failed is None and not capacity.capacity_ok(
                        pool.caps, request.size_gb, request.extra_specs):
                    failed = "CapacityFilter"
                if failed is None:
                    self.store.consume(pool, request.size_gb)
                    return pool.name
                rejected[failed] += 1
        raise exception.NoValidBackend(
            reason=_reason(rejected, verdicts, request))


    def _walk(self, verdicts: _Verdicts, kind: int
              ) -> list[capabilities.PoolState]:
        """Pools to try, heaviest first.

        NOTE(ashlar): when few pools satisfy the specs (a type pinned to a
        backend, a rare capability) sorting those beats walking the whole
        index past every pool that cannot match.
        """
        candidates = verdicts.candidates(self.store)
        if (candidates is None
                or len(candidates) * 8 > self.store.pool_count()):
            return self.index.ordered(kind)
        return sorted(candidates, key=_heaviest_first(kind))


def _reason(rejected: collections.Counter, verdicts: _Verdicts,
            request: filters.PlacementRequest) -> str:
    """Say in words why no pool was chosen."""
    if not rejected:
        return ("No volume backend has reported fresh capabilities from a "
                "running, enabled volume service.")
    why = {
        "BackendStateFilter": "backend reported down",
        "AvailabilityZoneFilter": "not in availability zone %s"
                                  % " or ".join(request.availability_zones
                                                or ()),
        "CapacityFilter": "no room for %d GiB" % request.size_gb,
        "CapabilitiesFilter": "no %s" % ", ".join(
            "%s=%s" % (key, verdicts.wanted[key])
            for key in verdicts.unsatisfied),
    }
    parts = ["%s rejected %d (%s)" % (name, count, why[name])
             for name, count in sorted(rejected.items())]
    return "None of %d pools passed the filters: %s." % (
        sum(rejected.values()), "; ".join(parts))
