"""The API worker's capability view, and the early rejection built on it.

Each worker keeps a ``CapabilityStore`` (the scheduler's expiry rules) of
what the schedulers relay on the ``ashlar-capability-view`` fanout
(``services/scheduler/relay.py``: each report whose content changed, and
once a second the backends that repeated theirs), and warms it from a
scheduler at start.  ``POST /volumes`` asks
:meth:`CapabilityCache.check_type` whether any pool could take the type;
the answer "no" becomes a 400 before anything is written.

Zero false rejections is the rule, so the cache says "no" only when all of
these hold, and otherwise lets the create through for the scheduler to
decide:

1. **Warm.** A ``get_pools`` call to a scheduler succeeded since this worker
   started (the scheduler's store holds every report it heard, with ages).
   While no scheduler answers, the warm-up is retried in the background and
   nothing is rejected.
2. **Live.** Some report arrived within the freshness window: a worker that
   stopped hearing the bus, or a bus without a scheduler, does not judge
   from what it heard before.  A renewal names the content it repeats (a
   fingerprint); one this worker does not hold (a relayed change it
   missed) renews nothing, and the worker fetches those reports from a
   scheduler.
3. **No fresh pool fits.** No pool with a fresh report and a backend not
   reported ``down`` satisfies the type's capability specs, by the matcher
   the scheduler's capabilities filter uses (``common.extra_specs``).
4. **Complete.** Every volume service that the services table says is
   enabled and heartbeating has a fresh report in this view.  This is read
   from the database only when 1-3 already say "no", so accepted creates
   never pay for it, and as two counts while the services that run are
   those of the last read (``services_db.RunningHosts``).  It closes the
   gaps 1-2 leave: a scheduler that had itself just restarted, a report
   lost while the broker connection was re-established, a backend that
   started a moment ago.  Reports that
   arrive while a "no" is made stand it only if none of the pools they
   changed fits (a thousand backends report a hundred times a second);
   any doubt (the query fails, too many changes to tell which, or reports
   that make pools fit arriving again and again) means "accept".

A create is judged on the pools of the availability zones it may go to
only (the zone each pool's report names, which the scheduler's zone filter
reads too).

What the cache leaves to the scheduler only ever makes it accept more:
free capacity, and heartbeats of the pools it does count (a pool of a
service that stopped heartbeating still counts here until its report
expires).  A backend that stops therefore makes creates fail with a
400 again once its report has expired and its service is down, i.e. after
``max(freshness window, service_down_time)``.

The remaining window for a wrong "no" is a backend whose capabilities
changed while its previous report is still fresh (restarted with a new
configuration under the same ``host@backend``): until its new report, which
it sends as it starts, reaches this worker (milliseconds), creates needing
the new capability are refused, as a scheduler would refuse them.
"""

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import capacity
from common import constants
from common import context as ashlar_context
from common import exception
from common import extra_specs
from common import rpc
from common.db.api import services as services_db
from common.zones import Zones, in_zone
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)

#: Seconds between warm-up attempts while no scheduler answers (doubling).
WARM_RETRY_FIRST = 1.0
#: Seconds a starting worker waits for its first warm-up before it serves
#: (then it serves cold, and warms in the background).
WARM_AT_START = 5.0
WARM_RETRY_MAX = 30.0
#: Judgements of the pools held before reports arriving meanwhile mean
#: "accept" (each judgement takes microseconds).
JUDGE_ATTEMPTS = 3
#: (The endpoint's arguments are named ``capabilities`` too.)
_fingerprint = capabilities.fingerprint


class _Verdict(NamedTuple):
    """A "no pool fits" judgement and what it was made on."""

    generation: int
    failures: list[tuple[str, ...]]


class CapabilityCache:
    """Fanout listener plus per-pool store for one API worker."""

    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 store: capabilities.CapabilityStore | None = None,
                 running_backends: Callable[[], set[str]] | None = None,
                 volume: volume_rpcapi.VolumeAPI | None = None) -> None:
        """
        :param volume: asked, at start, for a report from every volume
            service (None: wait for their periodic reports).
        :param store: the view (a fresh one by default).
        :param running_backends: returns the ``host@backend`` names of
            enabled, heartbeating volume services (the services table by
            default).
        """
        self.conf = conf
        self.scheduler = scheduler
        self.volume = volume
        self.store = store or capabilities.CapabilityStore(
            capabilities.freshness_window(conf))
        #: Overrides the services-table read (tests); None reads the table.
        self._running_backends = running_backends
        self._running = services_db.RunningHosts(constants.VOLUME_BINARY)
        #: host@backend -> fingerprint of the report held (what a renewal
        #: must name to renew it).
        self._fingerprints: dict[str, str] = {}
        self._view_lock = threading.Lock()
        #: Backends whose report to fetch again, and whether a fetch runs.
        self._resync_wanted: set[str] = set()
        self._resyncing = False
        self.warmed = threading.Event()
        self._stopped = threading.Event()
        self._server: messaging.MessageHandlingServer | None = None
        #: The reports' own fanout, heard only while a scheduler of an
        #: earlier release (no relay) answers (:meth:`_hear_directly`).
        self._direct: messaging.MessageHandlingServer | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Listen to the schedulers' relay, then, in background, ask every
        volume service to report and warm from a scheduler.

        NOTE(ashlar): the listener starts first, so no report falls between
        the scheduler's answer and our own listening.  The scheduler's view
        may not hold a backend's start report yet (it may have started
        moments before, as in the embedded mode), and then rule 2 keeps the
        cache from judging until the next periodic report; asking, as a
        starting scheduler does, makes that milliseconds.
        """
        self._server = self._listen(constants.CAPABILITY_VIEW_TOPIC,
                                    _Relayed(self))
        threading.Thread(target=self._warm_until_done, daemon=True,
                         name="capability-warm").start()

    def wait_warm(self, timeout: float = WARM_AT_START) -> bool:
        """Wait for the first warm-up, so that a worker judges its first
        request as it judges its hundredth; False when no scheduler
        answered within ``timeout`` (creates then go to the scheduler
        unchecked until one does)."""
        if self.warmed.wait(timeout):
            return True
        LOG.warning("No scheduler answered within %.0f s; serving with a "
                    "cold capability cache", timeout)
        return False

    def _listen(self, topic: str, endpoint: object
                ) -> messaging.MessageHandlingServer:
        target = messaging.Target(
            topic=topic, server="api-%s-%d-%s" % (
                self.conf.host, os.getpid(), uuid.uuid4().hex[:8]))
        server = rpc.get_server(target, [endpoint], inline=True)
        server.start()
        return server

    def stop(self) -> None:
        self._stopped.set()
        for server in (self._server, self._stop_hearing_directly()):
            if server is not None:
                _stop_server(server)

    # -- a scheduler of an earlier release -------------------------------
    def _hear_directly(self, ctxt: ashlar_context.RequestContext) -> int:
        """Warm from an older scheduler's ``get_pools`` and hear the
        reports' own fanout, as api workers of earlier releases do, until
        a scheduler relays (a rolling upgrade that reached the api before
        the schedulers); return how many reports were taken."""
        with self._view_lock:
            if self._direct is None and not self._stopped.is_set():
                self._direct = self._listen(constants.CAPABILITIES_TOPIC,
                                            _Reports(self))
                LOG.info("A scheduler of an earlier release answered; "
                         "hearing the capability reports directly until "
                         "a scheduler relays them")
        return self.store.warm(self.scheduler.get_pools(ctxt))

    def _stop_hearing_directly(self) -> messaging.MessageHandlingServer | None:
        """Stop hearing the reports' fanout: return its server to stop."""
        with self._view_lock:
            direct, self._direct = self._direct, None
        return direct

    def relayed(self) -> None:
        """A scheduler relayed: stop hearing the reports directly (on
        another thread: this one is the relay's listener)."""
        if self._direct is None:
            return
        direct = self._stop_hearing_directly()
        if direct is not None:
            LOG.info("A scheduler relays the capability reports; no longer "
                     "hearing them directly")
            threading.Thread(target=_stop_server, args=(direct,),
                             daemon=True, name="capability-direct").start()

    def _warm_until_done(self) -> None:
        if self.volume is not None:
            try:
                self.volume.publish_service_capabilities(
                    ashlar_context.get_admin_context())
            except Exception as exc:  # noqa: BLE001 - periodic reports come
                LOG.warning("Could not ask the volume services to report "
                            "(%s); waiting for their periodic reports", exc)
        delay = WARM_RETRY_FIRST
        while not self._stopped.is_set() and not self.warm():
            self._stopped.wait(delay)
            delay = min(delay * 2, WARM_RETRY_MAX)

    def warm(self) -> bool:
        """Take a scheduler's view; return whether it answered."""
        ctxt = ashlar_context.get_admin_context()
        try:
            try:
                taken = self._take(self.scheduler.get_reports(ctxt))
            except Exception as exc:  # noqa: BLE001 - see below
                if not _too_old(exc):
                    raise
                taken = self._hear_directly(ctxt)
        except Exception as exc:  # noqa: BLE001 - any failure: stay cold
            LOG.warning("Capability cache not warmed (%s); creates go to the "
                        "scheduler unchecked until it is", _brief(exc))
            return False
        self.warmed.set()
        LOG.info("Capability cache warm: %d backend reports", taken)
        return True

    def _take(self, reports: Mapping[str, scheduler_rpcapi.RelayedReport]
              ) -> int:
        """Hold reports a scheduler answered; return how many were taken."""
        return sum(self._hold(host, report["capabilities"],
                              report["timestamp"], report["fingerprint"],
                              report["age"])
                   for host, report in reports.items())

    def _hold(self, service_host: str, capabilities: dict, timestamp: float,
              fingerprint: str, age: float = 0.0) -> bool:
        """Hold one report (unless a newer one is held) and its
        fingerprint."""
        with self._view_lock:
            if not self.store.update(service_host, capabilities, timestamp,
                                     age=age):
                return False
            self._fingerprints[service_host] = fingerprint
            return True

    def _resync(self, hosts: Iterable[str]) -> None:
        """Fetch these backends' reports from a scheduler, in background
        (one fetch at a time; hosts wanted meanwhile join the next)."""
        with self._view_lock:
            self._resync_wanted.update(hosts)
            if self._resyncing:
                return
            self._resyncing = True
        threading.Thread(target=self._resync_until_done, daemon=True,
                         name="capability-resync").start()

    def _resync_until_done(self) -> None:
        while True:
            with self._view_lock:
                hosts, self._resync_wanted = self._resync_wanted, set()
                if not hosts or self._stopped.is_set():
                    self._resyncing = False
                    return
            try:
                self._take(self.scheduler.get_reports(
                    ashlar_context.get_admin_context(), sorted(hosts)))
            except Exception as exc:  # noqa: BLE001 - renewals ask again
                LOG.warning("Could not fetch %d capability reports (%s); "
                            "they count again at their next change or "
                            "fetch", len(hosts), _brief(exc))

    # -- RPC endpoint ----------------------------------------------------
    def update_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                    service_host: str, capabilities: dict,
                                    timestamp: float,
                                    fingerprint: str | None = None) -> None:
        """A report whose content a scheduler had not relayed before."""
        self._hold(service_host, capabilities, timestamp,
                   fingerprint or _fingerprint(capabilities))

    def renew_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                   renewals: Mapping[str, Any]) -> None:
        """Reports that repeated the content of the fingerprint they name:
        ``{host@backend: [fingerprint, timestamp, age]}``.  Those whose
        content is not held are fetched, unless a newer report is held
        (a scheduler that had not heard it yet)."""
        unknown = []
        with self._view_lock:
            for host, (fingerprint, timestamp, age) in renewals.items():
                if self._fingerprints.get(host) == fingerprint:
                    self.store.renew(host, timestamp, age)
                elif (self.store.timestamp(host) or 0.0) < timestamp:
                    unknown.append(host)
        if unknown:
            self._resync(unknown)

    def withdraw_service_capabilities(self,
                                      ctxt: ashlar_context.RequestContext,
                                      service_host: str, timestamp: float
                                      ) -> None:
        with self._view_lock:
            self.store.forget(service_host, timestamp)
            self._fingerprints.pop(service_host, None)

    # -- the check -------------------------------------------------------
    def trusted(self) -> bool:
        """Rules 1 and 2: warm, and hearing the bus.

        The report received last is known in constant time; only when it
        is not (or looks stale) are the backends' receipts all read."""
        if not self.warmed.is_set():
            return False
        newest = self.store.newest_report()
        if newest is None or newest[1] > self.store.freshness:
            age = self.store.newest_report_age()
        else:
            age = newest[1]
        return age is not None and age <= self.store.freshness

    def trusted_pools(self) -> dict[str, dict] | None:
        """``{pool name: capabilities}`` of the pools that count now, if
        the view is trusted (:meth:`trusted`); None when it is not (then
        it tells nothing, not even that a pool is missing)."""
        if not self.trusted():
            return None
        return self.store.fresh_pools()

    def _from_db(self, ctxt: ashlar_context.RequestContext | None = None
                 ) -> set[str]:
        """Enabled, heartbeating volume services, read from the table now.

        :param ctxt: the request's context: the read joins a transaction
            the caller has open, else it is a statement on its own; a fresh
            admin context otherwise.
        """
        return self._running(
            ctxt if ctxt is not None else ashlar_context.get_admin_context(),
            self.conf.service_down_time)

    def running_backends(self,
                         ctxt: ashlar_context.RequestContext | None = None
                         ) -> set[str] | None:
        """Enabled, heartbeating volume services (rule 4's reference).

        :param ctxt: the request's context (see :meth:`_from_db`).
        :returns: their ``host@backend`` names, or None when they could not
            be read.
        """
        try:
            if self._running_backends is not None:
                return self._running_backends()
            return self._from_db(ctxt)
        except Exception:  # noqa: BLE001 - doubt means accept
            LOG.warning("Cannot read the services table; not rejecting",
                        exc_info=True)
            return None

    def _judge(self, wanted: dict,
               zones: Zones) -> _Verdict | None:
        """Judge the pools of ``zones`` held now; None when one satisfies
        ``wanted``."""
        generation = self.store.generation
        found, failures = self.store.find_satisfying(wanted, zones=zones)
        if found is not None:
            return None
        return _Verdict(generation, failures)

    def check_type(self, ctxt: ashlar_context.RequestContext, vtype: Any,
                   specs: dict, size: int | None = None, zones: Zones = None
                   ) -> None:
        """Reject a type no fresh pool of ``zones`` (None: of any zone) can
        satisfy, or a size no such pool could hold even empty, if the view
        is trusted.

        :raises UnsatisfiableVolumeType: naming the unsatisfied specs.
        :raises UnsatisfiableVolumeSize:
        """
        self._check_specs(ctxt, vtype, specs, zones)
        if size is not None:
            self._check_size(ctxt, specs, size, zones)

    def check_pool(self, pool_name: str, source: str, vtype: Any,
                   specs: dict, size: int) -> None:
        """Reject a create bound to one pool (where its ``source`` is) when
        that pool's fresh report says it cannot take the type or could
        never hold ``size``; without a fresh report of it, accept (the
        volume service decides).

        :raises UnsatisfiableSource:
        """
        caps = (self.trusted_pools() or {}).get(pool_name)
        if caps is None:
            return
        wanted = extra_specs.capability_specs(specs)
        missing = extra_specs.unsatisfied_specs(caps, wanted)
        if missing:
            raise exception.UnsatisfiableSource(
                source=source, unsatisfied="volume type %s needs %s" % (
                    vtype.name, ", ".join("%s=%s" % (k, wanted[k])
                                          for k in missing)))
        if not capacity.could_ever_hold(caps, size, specs):
            raise exception.UnsatisfiableSource(
                source=source, unsatisfied="%s GiB is more than it holds"
                % size)

    def _check_size(self, ctxt: ashlar_context.RequestContext, specs: dict,
                    size: int, zones: Zones) -> None:
        """Rule 4 for capacity: refuse only when every running backend was
        heard and no pool of theirs in ``zones``, judged empty, would hold
        ``size``; zones without a pool that counts are left to the
        scheduler (the type check speaks for them)."""
        if not self.trusted():
            return
        for _attempt in range(JUDGE_ATTEMPTS):
            generation = self.store.generation
            if self.store.counting_fit(lambda caps: capacity.could_ever_hold(
                    caps, size, specs), zones) is not False:
                return
            running = self.running_backends(ctxt)
            if running is None or self.store.unheard(running):
                return
            if self._none_changed_fits(generation, zones, lambda caps:
                                       capacity.could_ever_hold(caps, size,
                                                                specs)):
                raise exception.UnsatisfiableVolumeSize(size=size)
        LOG.info("No pool seemed to hold %s GiB, but reports kept arriving; "
                 "letting the scheduler decide", size)

    def _none_changed_fits(self, generation: int, zones: Zones,
                           fits: Callable[[dict], bool]) -> bool:
        """Whether a verdict made on the pools held at ``generation``
        stands: no report changed a pool since, or none of the pools the
        reports changed (new ones included) ``fits`` in ``zones``.

        NOTE(ashlar): with a thousand backends reporting every ten seconds
        the generation moves a hundred times a second; judging again until
        it holds still would turn a steady "no" into a "yes".
        """
        if self.store.generation == generation:
            return True
        changed = self.store.changed_since(generation)
        return changed is not None and not any(
            not pool.down and in_zone(pool.caps, zones) and fits(pool.caps)
            for pool in changed)

    def _check_specs(self, ctxt: ashlar_context.RequestContext, vtype: Any,
                     specs: dict, zones: Zones) -> None:
        wanted = extra_specs.capability_specs(specs)
        if not wanted or not self.trusted():
            return
        verdict = self._judge(wanted, zones)
        if verdict is None:
            return
        running = self.running_backends(ctxt)
        if running is None:
            return
        # NOTE(ashlar): reports keep arriving on another thread, also while
        # the services table is read.  A verdict holds only for the pools
        # judged: a running backend must be fresh now, and a report that
        # changed any pool since the judgement (one the verdict did not
        # judge that fits now, a backend first heard meanwhile included)
        # means judging again, in memory; periodic reports must not turn a
        # steady "no" into an occasional "yes".
        for _attempt in range(JUDGE_ATTEMPTS):
            unheard = self.store.unheard(running)
            if unheard:
                LOG.info("Type %(type)s fits no pool heard of, but "
                         "%(unheard)s did not report yet; letting the "
                         "scheduler decide",
                         {"type": vtype.name,
                          "unheard": ", ".join(sorted(unheard))})
                return
            if self._none_changed_fits(
                    verdict.generation, zones, lambda caps:
                    not extra_specs.unsatisfied_specs(caps, wanted)):
                raise exception.UnsatisfiableVolumeType(
                    type=vtype.name,
                    unsatisfied=describe(wanted, verdict.failures, zones))
            verdict = self._judge(wanted, zones)
            if verdict is None:
                return
        LOG.info("Type %s fits no pool heard of, but reports kept arriving "
                 "while it was judged; letting the scheduler decide",
                 vtype.name)


class _Relayed:
    """The cache's only RPC surface: the schedulers' relay.

    NOTE(ashlar): a separate endpoint, so that a cast on the view topic
    can reach nothing but what a scheduler relays.
    """

    target = messaging.Target(
        version=scheduler_rpcapi.CapabilityViewAPI.RPC_API_VERSION)

    def __init__(self, cache: CapabilityCache) -> None:
        self._cache = cache

    @messaging.expose
    def update_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                    service_host: str, capabilities: dict,
                                    timestamp: float, fingerprint: str
                                    ) -> None:
        self._cache.relayed()
        self._cache.update_service_capabilities(
            ctxt, service_host, capabilities, timestamp, fingerprint)

    @messaging.expose
    def renew_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                   renewals: dict) -> None:
        self._cache.relayed()
        self._cache.renew_service_capabilities(ctxt, renewals)

    @messaging.expose
    def withdraw_service_capabilities(self,
                                      ctxt: ashlar_context.RequestContext,
                                      service_host: str, timestamp: float
                                      ) -> None:
        self._cache.relayed()
        self._cache.withdraw_service_capabilities(ctxt, service_host,
                                                  timestamp)


class _Reports:
    """The reports' own fanout, heard while only schedulers of an earlier
    release answer (they relay nothing)."""

    target = messaging.Target(
        version=scheduler_rpcapi.CapabilitiesAPI.RPC_API_VERSION)

    def __init__(self, cache: CapabilityCache) -> None:
        self._cache = cache

    @messaging.expose
    def update_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                    service_host: str, capabilities: dict,
                                    timestamp: float) -> None:
        self._cache.update_service_capabilities(ctxt, service_host,
                                                capabilities, timestamp)

    @messaging.expose
    def withdraw_service_capabilities(self,
                                      ctxt: ashlar_context.RequestContext,
                                      service_host: str, timestamp: float
                                      ) -> None:
        self._cache.withdraw_service_capabilities(ctxt, service_host,
                                                  timestamp)


def _too_old(exc: Exception) -> bool:
    """Whether a scheduler call failed because the scheduler's release
    (or ``[upgrade_levels] ashlar_scheduler``) is older than the call."""
    return isinstance(exc, rpc.ServiceTooOld) or (
        isinstance(exc, messaging.RemoteError)
        and exc.exc_type == "UnsupportedVersion")


def _brief(exc: Exception) -> str:
    """A failure in one line (a remote one without its traceback)."""
    if isinstance(exc, messaging.RemoteError):
        return "%s: %s" % (exc.exc_type, exc.value)
    return str(exc)


def _stop_server(server: messaging.MessageHandlingServer) -> None:
    server.stop()
    server.wait()


def describe(wanted: dict, failures: list[tuple[str, ...]],
             zones: Zones = None) -> str:
    """Name the specs no pool satisfies, or those no pool satisfies together.

    :param wanted: the type's capability specs.
    :param failures: the unsatisfied specs of each kind of pool.
    :param zones: the availability zones whose pools were judged.
    """
    def text(keys: set) -> str:
        return ", ".join("%s=%s" % (k, wanted[k]) for k in wanted
                         if k in keys)
    where = (" in availability zone%s %s" % (
        "s" if len(zones) > 1 else "", ", ".join(zones)) if zones else "")
    if not failures:
        return ("no backend that is up%s has reported fresh pools (%s)"
                % (where, text(set(wanted))))
    common = set.intersection(*(set(f) for f in failures))
    if common:
        return "no fresh pool%s offers %s" % (where, text(common))
    return "no single fresh pool%s offers all of %s" % (where, text(
        set.union(*(set(f) for f in failures))))
