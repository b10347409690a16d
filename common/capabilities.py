"""The per-pool view built from capability reports, with freshness rules.

The scheduler and every API worker keep one ``CapabilityStore`` fed by the
``ashlar-capabilities`` fanout, so both apply the same rules: a pool counts
only while its backend's last report was received within the freshness
window, its ``backend_state`` is not ``down`` and (where the caller knows
it) its service heartbeats.

Freshness is measured on the receiver's monotonic clock from the moment a
report arrived, so clock skew between nodes never makes a report look
fresher or older than it is.  The sender's timestamp only orders reports
from one backend (an older report than the one held is ignored) and tells
which local capacity charges a report already reflects.

Matching a type's extra specs against 10,000 pools one by one is too slow
for a request path, so the store groups pools by the values they report for
the capabilities a type's specs read (a :class:`Projection` per set of such
*roots*, kept up to date as reports arrive).  Specs are matched once per
distinct group, with the one matcher (``common.extra_specs``), and the
results are kept until the groups change.  A backend whose report expired
leaves the projections at the next :meth:`CapabilityStore.find_satisfying`
and comes back with its next report.
"""

import collections
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from oslo_config import cfg

from common import extra_specs as specs_matcher
from common.zones import TYPE_SPEC, Zones, in_zone, of_type

#: Pool keys that change as volumes come and go: specs reading them are
#: matched afresh on every query.
VOLATILE_KEYS = frozenset(("total_capacity_gb", "free_capacity_gb",
                           "allocated_capacity_gb", "provisioned_capacity_gb",
                           "total_volumes", "timestamp"))
_ABSENT = ("<absent>",)

#: Charge ``size_gb`` GiB to a pool's capabilities, in place.
Charge = Callable[[dict, int], None]
#: Recompute whatever a store's owner derives from a pool (its weights).
Annotate = Callable[["PoolState"], None]


def freshness_window(conf: cfg.ConfigOpts) -> float:
    """Seconds a report counts: the option, or two polling intervals."""
    configured = conf.scheduler.capability_freshness
    return float(configured or 2 * conf.backend_stats_polling_interval)


def fingerprint(capabilities: Mapping[str, Any]) -> str:
    """A short digest of a report's content, the same in every process:
    equal reports (as JSON, keys sorted) have equal fingerprints."""
    text = json.dumps(capabilities, sort_keys=True, separators=(",", ":"),
                      default=repr)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def misses(pool: Mapping[str, Any], specs: Mapping[str, str | None]
           ) -> list[str]:
    """The specs of a type that a pool fails: capability specs, and
    ``RESKEY:availability_zones`` when the pool is in none of them."""
    missing = specs_matcher.unsatisfied_specs(pool, specs)
    if not in_zone(pool, of_type(specs)):
        missing.append(TYPE_SPEC)
    return missing


def flatten(service_host: str, capabilities: Mapping[str, Any],
            timestamp: float) -> dict[str, dict]:
    """Expand one backend report into ``{host@backend#pool: capabilities}``.

    Backend-level keys apply to every pool that does not override them; a
    report without pools stands for one pool named after the backend.
    """
    backend = {k: v for k, v in capabilities.items() if k != "pools"}
    pools = capabilities.get("pools") or [
        {"pool_name": service_host.partition("@")[2] or service_host}]
    result = {}
    for pool in pools:
        merged = dict(backend)
        merged.update(pool)
        merged["timestamp"] = timestamp
        result["%s#%s" % (service_host, merged["pool_name"])] = merged
    return result


def _spec_root(key: str) -> str | None:
    """Top-level capability a spec key reads (None: the whole dict)."""
    scope, sep, rest = key.partition(":")
    if scope != specs_matcher.CAPABILITIES_SCOPE:
        return key
    return rest.partition(":")[0] if sep else None


def spec_roots(wanted: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The top-level capabilities some capability specs read, sorted.

    :returns: None when a spec reads the whole capability dict.
    """
    roots = set()
    for key in wanted:
        root = _spec_root(key)
        if root is None:
            return None
        roots.add(root)
    return tuple(sorted(roots))


def specs_key(wanted: Mapping[str, str | None]) -> tuple:
    """A hashable, order-independent form of some extra specs."""
    return tuple(sorted(wanted.items()))


def _freeze(value: Any) -> Any:
    """A hashable stand-in for a reported value (equal iff equal)."""
    if isinstance(value, list):
        return ("<list>",) + tuple(_freeze(item) for item in value)
    if isinstance(value, dict):
        return ("<dict>",) + tuple(sorted(
            ((str(k), _freeze(v)) for k, v in value.items()),
            key=lambda item: item[0]))
    try:
        hash(value)
    except TypeError:
        return ("<repr>", repr(value))
    return (type(value).__name__, value)


#: ``{unsatisfied specs: the keys of the groups that answer so}`` for some
#: specs (``()``: the groups that satisfy them), in the groups' order.
Answers = dict[tuple[str, ...], tuple[tuple, ...]]
#: Pools are grouped by zone too where the store matches specs itself.
_BY_ZONE = ("availability_zone",)


class Projection:
    """Pools grouped by what they report for some capabilities (roots).

    Every spec reading only those roots gives the same answer for every
    pool of a group, so it is matched once per group.  The store keeps the
    groups current under its lock.
    """

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.groups: dict[tuple, dict[str, "PoolState"]] = {}
        self.key_of: dict[str, tuple] = {}
        # specs key -> {group key: unsatisfied specs}
        self.results: dict[tuple, dict[tuple, tuple[str, ...]]] = {}
        self.volatile = any(root in VOLATILE_KEYS for root in roots)
        #: Bumped whenever a group appears or goes: a specs' answer per
        #: group depends on the group's key alone, so the groups that
        #: satisfy some specs change only then.
        self.version = 0
        #: specs key -> (version, ``Answers``) as last matched.
        self.answers: dict[tuple, tuple[int, Answers]] = {}

    def key(self, caps: Mapping[str, Any]) -> tuple:
        return tuple(_freeze(caps[root]) if root in caps else _ABSENT
                     for root in self.roots)

    def add(self, pool: "PoolState") -> None:
        key = self.key(pool.caps)
        if self.key_of.get(pool.name) == key:
            self.groups[key][pool.name] = pool
            return
        self.remove(pool)
        self.key_of[pool.name] = key
        if key not in self.groups:
            self.groups[key] = {}
            self.version += 1
        self.groups[key][pool.name] = pool

    def remove(self, pool: "PoolState") -> None:
        key = self.key_of.pop(pool.name, None)
        if key is None:
            return
        group = self.groups.get(key)
        if group is not None:
            group.pop(pool.name, None)
            if not group:
                del self.groups[key]
                self.version += 1

    def answers_now(self, key: tuple) -> Answers | None:
        """The groups by their answer to the specs of ``key``
        (``specs_key``) as last matched, if no group appeared or went
        since (lock held)."""
        known = self.answers.get(key)
        return known[1] if known and known[0] == self.version else None


#: Generations :meth:`CapabilityStore.changed_since` can answer for.
CHANGE_LOG = 256


class PoolState:
    """One pool as a store holds it; the store mutates it on every report."""

    __slots__ = ("name", "backend", "caps", "received_at", "annotation",
                 "present")

    def __init__(self, name: str, backend: str) -> None:
        self.name = name
        self.backend = backend
        self.caps: dict = {}
        self.received_at = 0.0
        #: Whatever the store's ``annotate`` hook derives (the scheduler's
        #: weights); None without a hook.
        self.annotation: Any = None
        #: False once a later report of its backend no longer lists it.
        self.present = True

    @property
    def down(self) -> bool:
        return self.caps.get("backend_state") == "down"


def _snapshot(value: Any) -> Any:
    """A copy of a report that shares no dict or list with it (a sender in
    the same process, the embedded mode's, may change its own later)."""
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snapshot(item) for item in value]
    return value


def _counting_in(entries: Iterable[tuple[str, "_Backend"]], since: float,
                 allowed: set[str] | None, zones: Zones
                 ) -> Iterator[PoolState]:
    """The pools that count of some ``(host@backend, entry)``: a report
    received at ``since`` or later, the backend among ``allowed`` (None:
    any), the pool not down and in ``zones``."""
    for host, entry in entries:
        if entry.received_at < since or (allowed is not None
                                         and host not in allowed):
            continue
        for pool in tuple(entry.pools.values()):
            if not pool.down and in_zone(pool.caps, zones):
                yield pool


class _Backend:
    __slots__ = ("received_at", "timestamp", "report", "pools", "charges",
                 "projected")

    def __init__(self) -> None:
        self.received_at = 0.0
        self.timestamp = 0.0
        #: A private copy of the report held: what the next one is
        #: compared with.
        self.report: dict = {}
        self.pools: dict[str, PoolState] = {}
        # (wall clock, monotonic clock, pool name, GiB) of local placements
        # that no report has reflected yet.
        self.charges: list[tuple[float, float, str, int]] = []
        #: Whether its pools are in the projections (False once its report
        #: expired and a match swept it out, until it reports again).
        self.projected = False


class CapabilityStore:
    """Latest report per backend, expiring ``freshness`` seconds after receipt.

    :param freshness: the freshness window in seconds.
    :param clock: monotonic clock for receipt times.
    :param wall_clock: clock comparable with report timestamps (charges).
    :param charge: how :meth:`consume` charges a pool (the scheduler's
        ``weighers.consume``); None for stores that never place.
    :param annotate: called with each pool whose capabilities changed.
    """

    def __init__(self, freshness: float,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time,
                 charge: Charge | None = None,
                 annotate: Annotate | None = None) -> None:
        self.freshness = freshness
        self._clock = clock
        self._wall_clock = wall_clock
        self._charge = charge
        self._annotate = annotate
        self._lock = threading.Lock()
        self._backends: dict[str, _Backend] = {}
        self._projections: dict[tuple[str, ...], Projection] = {}
        #: Bumped whenever any pool changes (a report or a charge).
        self.generation = 0
        #: (generation, pools changed by that bump, None: unknown), newest
        #: last, for :meth:`changed_since`.
        self._change_log: collections.deque = collections.deque(
            maxlen=CHANGE_LOG)
        #: Backend -> the time it withdrew, until it reports again.
        self._withdrawn: dict[str, float] = {}
        #: Bumped whenever pools appear or disappear.
        self.membership = 0
        #: Whether a projection groups pools by ``timestamp``.
        self._reads_timestamp = False
        #: The backend whose report arrived last, and when (None: unknown).
        self._newest: tuple[str, float] | None = None
        #: Backends whose pools are projected, in the order of their last
        #: receipt (oldest first): what :meth:`_expire` sweeps.
        self._projected: collections.OrderedDict[str, None] = (
            collections.OrderedDict())

    # -- taking reports ----------------------------------------------------
    def update(self, service_host: str, capabilities: dict,
               timestamp: float, age: float = 0.0) -> bool:
        """Take a report; one older than the report held is ignored.

        Local charges the report cannot reflect yet (placed after it was
        sent, less than a freshness window ago) are applied to it again.

        :param age: seconds since another holder received it (warming from a
            scheduler's view keeps that view's ages).
        :returns: whether the report was taken.
        """
        received_at = self._clock() - age
        with self._lock:
            if timestamp <= self._withdrawn.get(service_host, timestamp - 1):
                return False
            self._withdrawn.pop(service_host, None)
            entry = self._backends.get(service_host)
            if entry is None:
                entry = self._backends[service_host] = _Backend()
            elif timestamp < entry.timestamp:
                return False
            elif timestamp == entry.timestamp and entry.pools:
                # The same report again (e.g. warm-up after hearing it).
                entry.received_at = max(entry.received_at, received_at)
                self._refresh_receipt(service_host, entry)
                return True
            elif self._unchanged(entry, capabilities):
                self._renew(service_host, entry, received_at, timestamp)
                return True
            self._take(service_host, entry, capabilities, timestamp,
                       received_at)
        return True

    def renew(self, service_host: str, timestamp: float,
              age: float = 0.0) -> bool:
        """Take a newer report of a backend that its sender knows to say
        what the report held says (the scheduler's relay): only its
        receipt and timestamp move.

        :param age: seconds since the relay received it.
        :returns: whether it was taken (False: no report held, the
            backend withdrew since, or the one held is as new).
        """
        received_at = self._clock() - age
        with self._lock:
            entry = self._backends.get(service_host)
            if (entry is None or not entry.pools
                    or timestamp <= entry.timestamp):
                return False
            received_at = max(received_at, entry.received_at)
            if entry.charges or self._reads_timestamp:
                self._take(service_host, entry, entry.report, timestamp,
                           received_at)
            else:
                self._renew(service_host, entry, received_at, timestamp)
        return True

    def _unchanged(self, entry: _Backend, capabilities: dict) -> bool:
        """Whether a newer report says what the one held said, so that only
        its receipt and timestamp move (lock held).

        NOTE(ashlar): most periodic reports repeat the last one; flattening
        and re-projecting ten pools for nothing was most of a report's cost
        in the store.  Local charges (the scheduler's) and a projection
        reading ``timestamp`` take the full path.
        """
        return (not entry.charges and not self._reads_timestamp
                and bool(entry.pools) and entry.report == capabilities)

    def _renew(self, service_host: str, entry: _Backend, received_at: float,
               timestamp: float) -> None:
        """Freshen an unchanged report: a pool changes (the generation moves)
        only if its report had expired and counts again (lock held)."""
        expired = entry.received_at < self._clock() - self.freshness
        entry.received_at = received_at
        entry.timestamp = timestamp
        for pool in entry.pools.values():
            pool.received_at = received_at
            pool.caps["timestamp"] = timestamp
        self._heard(service_host, entry)
        if expired:
            self._changed(tuple(entry.pools.values()))

    def _take(self, service_host: str, entry: _Backend, capabilities: dict,
              timestamp: float, received_at: float) -> None:
        """Replace a backend's pools with a report's (lock held)."""
        flat = flatten(service_host, capabilities, timestamp)
        entry.received_at = received_at
        entry.timestamp = timestamp
        entry.report = _snapshot(capabilities)
        self._reapply_charges(entry, flat, timestamp)
        self._replace_pools(service_host, entry, flat)
        self._heard(service_host, entry)
        self._changed(tuple(entry.pools.values()))

    def _heard(self, service_host: str, entry: _Backend) -> None:
        """Keep the newest receipt of all, and project the backend's pools
        again if its report had expired (lock held)."""
        if self._newest is None or entry.received_at >= self._newest[1]:
            self._newest = (service_host, entry.received_at)
        if not entry.projected:
            for pool in entry.pools.values():
                self._project(pool)
            entry.projected = True
        self._projected[service_host] = None
        self._projected.move_to_end(service_host)

    def _expire(self, since: float) -> None:
        """Take the pools of backends whose report was received before
        ``since`` out of the projections (lock held).

        NOTE(ashlar): an expired pool never counts, but while projected its
        groups were still walked for a counting pool: with a thousand
        backends gone quiet, every refused create read their 10,000 pools.
        The oldest receipts come first, so a sweep that finds nothing
        expired reads one entry.  A backend warmed with an age may sit
        behind a fresher one and stay projected a while: that costs a walk,
        never an answer, since :meth:`_counts` reads the receipt anyway.
        """
        projected = self._projected
        while projected:
            host = next(iter(projected))
            entry = self._backends.get(host)
            if entry is not None and entry.received_at >= since:
                return
            del projected[host]
            if entry is not None:
                entry.projected = False
                for pool in entry.pools.values():
                    self._unproject(pool)

    def _refresh_receipt(self, service_host: str, entry: _Backend) -> None:
        for pool in entry.pools.values():
            pool.received_at = entry.received_at
        self._heard(service_host, entry)

    def _reapply_charges(self, entry: _Backend, flat: dict[str, dict],
                         timestamp: float) -> None:
        """Keep charges newer than the report (bounded by the window).

        NOTE(ashlar): as in Cinder, "newer" compares our wall clock with the
        sender's; the freshness bound keeps a skewed clock from holding a
        charge forever.
        """
        if not entry.charges or self._charge is None:
            entry.charges = []
            return
        now = self._clock()
        entry.charges = [c for c in entry.charges
                         if c[0] > timestamp and now - c[1] < self.freshness]
        for _wall, _mono, name, size_gb in entry.charges:
            if name in flat:
                self._charge(flat[name], size_gb)

    def _replace_pools(self, service_host: str, entry: _Backend,
                       flat: dict[str, dict]) -> None:
        for name, gone in list(entry.pools.items()):
            if name not in flat:
                gone.present = False
                self._unproject(gone)
                del entry.pools[name]
                self.membership += 1
        for name, caps in flat.items():
            pool = entry.pools.get(name)
            if pool is None:
                pool = entry.pools[name] = PoolState(name, service_host)
                self.membership += 1
            pool.caps = caps
            pool.received_at = entry.received_at
            self._project(pool)
            if self._annotate is not None:
                self._annotate(pool)
        entry.projected = True

    def _project(self, pool: PoolState) -> None:
        for projection in self._projections.values():
            projection.add(pool)

    def _unproject(self, pool: PoolState) -> None:
        for projection in self._projections.values():
            projection.remove(pool)

    def _changed(self, pools: tuple[PoolState, ...] | None) -> None:
        """Bump the generation, logging which pools it changed (lock held)."""
        self.generation += 1
        self._change_log.append((self.generation, pools))

    def changed_since(self, generation: int) -> list[PoolState] | None:
        """Pools changed after ``generation`` (a pool may repeat); None when
        that is no longer known (too many changes since, or a backend
        forgotten)."""
        with self._lock:
            log = self._change_log
            if generation != self.generation and (
                    not log or log[0][0] > generation + 1):
                return None
            changed: list[PoolState] = []
            for bumped, pools in reversed(log):
                if bumped <= generation:
                    break
                if pools is None:
                    return None
                changed.extend(pools)
            return changed

    def forget(self, service_host: str,
               timestamp: float | None = None) -> None:
        """Drop everything a backend reported.

        :param timestamp: when the backend withdrew (its clock); its reports
            stamped no later are ignored from now on, so one that was
            overtaken on the way cannot bring it back.
        """
        with self._lock:
            if timestamp is not None:
                self._withdrawn[service_host] = max(
                    timestamp, self._withdrawn.get(service_host, timestamp))
            entry = self._backends.pop(service_host, None)
            if entry is None:
                return
            self._projected.pop(service_host, None)
            if self._newest is not None and self._newest[0] == service_host:
                self._newest = None
            for pool in entry.pools.values():
                pool.present = False
                self._unproject(pool)
            self.membership += 1
            self._changed(None)

    def warm(self, exported: Mapping[str, Mapping[str, Any]]) -> int:
        """Take what another store exported, keeping the ages.

        :returns: how many reports were taken.
        """
        return sum(self.update(host, entry["capabilities"],
                               entry["timestamp"], age=entry["age"])
                   for host, entry in exported.items())

    # -- placements ----------------------------------------------------------
    def consume(self, pool: PoolState, size_gb: int) -> None:
        """Charge a placement to a pool now and until a report reflects it."""
        if self._charge is None:
            raise RuntimeError("this CapabilityStore cannot charge pools")
        with self._lock:
            entry = self._backends.get(pool.backend)
            if entry is None or entry.pools.get(pool.name) is not pool:
                return
            self._charge(pool.caps, size_gb)
            entry.charges.append((self._wall_clock(), self._clock(),
                                  pool.name, size_gb))
            if entry.projected:
                self._project(pool)
            if self._annotate is not None:
                self._annotate(pool)
            self._changed((pool,))

    # -- reading -------------------------------------------------------------
    def fresh_since(self) -> float:
        """Receipt time at or after which a report is fresh now."""
        return self._clock() - self.freshness

    def pool_states(self) -> list[PoolState]:
        """Every pool held, fresh or not (the objects, not copies)."""
        with self._lock:
            return [pool for entry in self._backends.values()
                    for pool in entry.pools.values()]

    def counting(self, up_hosts: Iterable[str] | None = None,
                 zones: Zones = None) -> list[PoolState]:
        """Pools that count now: fresh report, backend not down, service up.

        :param up_hosts: ``host@backend`` names whose service heartbeats;
            None when the caller cannot know (then it is not checked).
        :param zones: only the pools of these availability zones.
        """
        allowed = set(up_hosts) if up_hosts is not None else None
        since = self.fresh_since()
        with self._lock:
            return list(_counting_in(self._backends.items(), since, allowed,
                                     zones))

    def counting_fit(self, fits: Callable[[dict], bool],
                     zones: Zones = None) -> bool | None:
        """Whether a pool that counts now (as :meth:`counting` has it) in
        ``zones`` ``fits``: True at the first that does, False when pools
        count but none does, None when none counts.

        NOTE(ashlar): an accepted create asks this; listing the 10,000
        pools of a thousand backends first cost it 3-4 ms, where the
        first pool usually fits.  The pools are read outside the lock,
        one backend's at a time, so that a refusal (every pool judged)
        does not hold reports up.
        """
        since = self.fresh_since()
        with self._lock:
            entries = list(self._backends.items())
        counted = False
        for pool in _counting_in(entries, since, None, zones):
            if fits(pool.caps):
                return True
            counted = True
        return False if counted else None

    def fresh_pools(self, up_hosts: Iterable[str] | None = None
                    ) -> dict[str, dict]:
        """``{pool name: capabilities}`` of the pools that count now."""
        return {pool.name: pool.caps for pool in self.counting(up_hosts)}

    def all_pools(self) -> dict[str, dict]:
        """Every pool of every report held, fresh or not."""
        return {pool.name: pool.caps for pool in self.pool_states()}

    def backend(self, service_host: str) -> dict | None:
        """The last report of one backend, as its pools."""
        with self._lock:
            entry = self._backends.get(service_host)
            return ({name: pool.caps for name, pool in entry.pools.items()}
                    if entry else None)

    def timestamp(self, service_host: str) -> float | None:
        """The sender's timestamp of the report held of a backend."""
        with self._lock:
            entry = self._backends.get(service_host)
            return entry.timestamp if entry is not None else None

    def pool(self, name: str) -> dict | None:
        """The last report of one pool (``host@backend#pool``), fresh or
        not; None when none is held."""
        with self._lock:
            entry = self._backends.get(name.partition("#")[0])
            found = entry.pools.get(name) if entry else None
            return found.caps if found else None

    def fresh_backends(self) -> set[str]:
        """``host@backend`` names whose last report is fresh."""
        since = self.fresh_since()
        with self._lock:
            return {host for host, entry in self._backends.items()
                    if entry.received_at >= since}

    def unheard(self, names: Iterable[str]) -> set[str]:
        """Those of ``names`` (``host@backend``) whose report is not
        fresh now, or of which none is held.

        NOTE(ashlar): asked with the thousand running services of every
        refused create; it reads only theirs, where building the set of
        every fresh backend to subtract read all.
        """
        since = self.fresh_since()
        with self._lock:
            backends = self._backends
            return {name for name in names
                    if (entry := backends.get(name)) is None
                    or entry.received_at < since}

    def newest_report_age(self, among: Iterable[str] | None = None
                          ) -> float | None:
        """Seconds since the most recent report of any backend, or of any
        of the ``host@backend`` names ``among`` (None: none held)."""
        wanted = set(among) if among is not None else None
        with self._lock:
            times = [entry.received_at
                     for host, entry in self._backends.items()
                     if wanted is None or host in wanted]
        return self._clock() - max(times) if times else None

    def newest_report(self) -> tuple[str, float] | None:
        """``host@backend`` of the report received last and its age, in
        constant time; None when unknown (nothing held, or that backend
        was forgotten since: ask :meth:`newest_report_age`)."""
        newest = self._newest
        if newest is None:
            return None
        return newest[0], self._clock() - newest[1]

    def export(self) -> dict[str, dict]:
        """Every report held with its age, for another store to warm from.

        Pools carry this store's view (local charges included) with the
        backend-level keys merged in.
        """
        now = self._clock()
        with self._lock:
            return {host: {"age": now - entry.received_at,
                           "timestamp": entry.timestamp,
                           "capabilities": dict(
                               entry.report,
                               pools=[{k: v for k, v in pool.caps.items()
                                       if k != "timestamp"}
                                      for pool in entry.pools.values()])}
                    for host, entry in self._backends.items()}

    def reports(self, hosts: Iterable[str] | None = None
                ) -> dict[str, dict]:
        """The reports held as their backends sent them, with their ages:
        ``{host@backend: {age, timestamp, capabilities}}`` (local charges
        left out, unlike :meth:`export`).

        :param hosts: only these backends (None: every one held).
        """
        now = self._clock()
        with self._lock:
            names = self._backends if hosts is None else [
                host for host in hosts if host in self._backends]
            return {host: {"age": now - entry.received_at,
                           "timestamp": entry.timestamp,
                           "capabilities": entry.report}
                    for host in names
                    if (entry := self._backends[host]).pools}

    # -- matching ------------------------------------------------------------
    def projection(self, roots: tuple[str, ...]) -> Projection:
        """The pools grouped by ``roots``, built on first use.

        NOTE(ashlar): projections are never dropped (callers keep reading
        them); there is one per distinct set of capabilities that volume
        types ask about, a number operators control.
        """
        with self._lock:
            found = self._projections.get(roots)
            if found is None:
                found = self._projections[roots] = Projection(roots)
                self._reads_timestamp |= "timestamp" in roots
                for entry in self._backends.values():
                    if entry.projected:
                        for pool in entry.pools.values():
                            found.add(pool)
            return found

    def match_groups(self, wanted: Mapping[str, str | None],
                     also: tuple[str, ...] = ()
                     ) -> tuple[Projection, dict[tuple, tuple[str, ...]]] | None:
        """Match capability specs once per group of pools.

        :param also: more capabilities to group the pools by (the caller
            reads them from each group's pools).
        :returns: the projection and ``{group key: unsatisfied specs}`` for
            every group held now, or None when a spec reads the whole
            capability dict (match pool by pool then).
        """
        roots = spec_roots(wanted)
        if roots is None:
            return None
        projection = self.projection(tuple(sorted(set(roots + also))))
        key = specs_key(wanted)
        with self._lock:
            version = projection.version
            groups = [(group_key, next(iter(pools.values())).caps)
                      for group_key, pools in projection.groups.items()]
            known = projection.results.get(key, {})
            if projection.volatile or len(known) > 4 * len(groups) + 64:
                known = {}
            projection.results[key] = known
        result = {}
        for group_key, caps in groups:
            missing = known.get(group_key)
            if missing is None:
                missing = known[group_key] = tuple(
                    specs_matcher.unsatisfied_specs(caps, wanted))
            result[group_key] = missing
        if not projection.volatile:
            by_answer: dict[tuple[str, ...], list[tuple]] = {}
            for group_key, missing in result.items():
                by_answer.setdefault(missing, []).append(group_key)
            with self._lock:
                projection.answers[key] = (version, {
                    missing: tuple(keys)
                    for missing, keys in by_answer.items()})
        return projection, result

    def group_answers(self, wanted: Mapping[str, str | None],
                      also: tuple[str, ...] = ()
                      ) -> tuple[Projection, Answers] | None:
        """The groups of pools by their answer to capability specs, known
        without matching any (:meth:`match_groups` matched them since the
        groups last changed); None when that is not known."""
        roots = spec_roots(wanted)
        if roots is None:
            return None
        with self._lock:
            projection = self._projections.get(
                tuple(sorted(set(roots + also))))
            if projection is None:
                return None
            answers = projection.answers_now(specs_key(wanted))
        return None if answers is None else (projection, answers)

    def pool_count(self) -> int:
        """How many pools are held, fresh or not."""
        with self._lock:
            return sum(len(entry.pools) for entry in self._backends.values())

    def pools_in(self, projection: Projection,
                 keys: Iterable[tuple]) -> list[PoolState]:
        """The pools of some groups of a projection."""
        with self._lock:
            return [pool for key in keys
                    for pool in projection.groups.get(key, {}).values()]

    def find_satisfying(self, wanted: Mapping[str, str | None],
                        up_hosts: Iterable[str] | None = None,
                        zones: Zones = None
                        ) -> tuple[str | None, list[tuple[str, ...]]]:
        """Find a counting pool that satisfies capability specs.

        Capacity is not considered.

        :param zones: only the pools of these availability zones.
        :returns: ``(pool name, [])`` for a pool that fits, else
            ``(None, the distinct lists of unsatisfied specs of the pools
            that count)``; that list is empty when no pool counts at all.
        """
        allowed = set(up_hosts) if up_hosts is not None else None
        with self._lock:
            self._expire(self.fresh_since())
        known = self.group_answers(wanted, _BY_ZONE)
        if known is not None:
            return self._answered(*known, allowed, zones)
        matched = self.match_groups(wanted, _BY_ZONE)
        if matched is None:
            return self._find_one_by_one(wanted, allowed, zones)
        projection, results = matched
        since = self.fresh_since()
        failures: dict[tuple[str, ...], None] = {}
        with self._lock:
            for group_key, missing in results.items():
                pool = self._group_counting(projection, group_key, since,
                                            allowed, zones)
                if pool is not None and not missing:
                    return pool.name, []
                if pool is not None:
                    failures[missing] = None
        return None, list(failures)

    def _answered(self, projection: Projection, answers: Answers,
                  allowed: set[str] | None, zones: Zones
                  ) -> tuple[str | None, list[tuple[str, ...]]]:
        """:meth:`find_satisfying` from the groups' known answers: a
        counting pool of a group that satisfies the specs, else each
        answer some group with a counting pool gives.

        NOTE(ashlar): a type no pool satisfies (the early 400) is refused
        after one counting pool per distinct answer, usually a handful,
        not after every group: a type pinned to a backend makes one group
        per backend, a thousand of them in issue 43's rig.
        """
        found = self._first_counting(projection, answers.get((), ()),
                                     allowed, zones)
        if found is not None:
            return found, []
        return None, [missing for missing, keys in answers.items()
                      if missing and self._first_counting(
                          projection, keys, allowed, zones) is not None]

    def _first_counting(self, projection: Projection,
                        keys: tuple[tuple, ...], allowed: set[str] | None,
                        zones: Zones) -> str | None:
        """A counting pool of ``zones`` in some of a projection's groups.

        NOTE(ashlar): a type pinned to one backend (``volume_backend_name``)
        makes as many groups as backends report names: matching every one
        of a thousand groups was 3-5 ms of each create accepted.
        """
        since = self.fresh_since()
        with self._lock:
            for key in keys:
                pool = self._group_counting(projection, key, since, allowed,
                                            zones)
                if pool is not None:
                    return pool.name
        return None

    def _group_counting(self, projection: Projection, key: tuple,
                        since: float, allowed: set[str] | None,
                        zones: Zones) -> PoolState | None:
        """The first pool of one group that counts, if the group is in
        ``zones`` (its pools share their zone); lock held."""
        pools = projection.groups.get(key, {}).values()
        first = next(iter(pools), None)
        if first is None or not in_zone(first.caps, zones):
            return None
        return next((pool for pool in pools
                     if self._counts(pool, since, allowed)), None)

    def _counts(self, pool: PoolState, since: float,
                allowed: set[str] | None) -> bool:
        return (pool.received_at >= since and not pool.down
                and (allowed is None or pool.backend in allowed))

    def _find_one_by_one(self, wanted: Mapping[str, str | None],
                         allowed: set[str] | None, zones: Zones
                         ) -> tuple[str | None, list[tuple[str, ...]]]:
        failures: dict[tuple[str, ...], None] = {}
        for pool in self.counting(allowed, zones):
            missing = tuple(specs_matcher.unsatisfied_specs(pool.caps, wanted))
            if not missing:
                return pool.name, []
            failures[missing] = None
        return None, list(failures)
