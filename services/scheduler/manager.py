"""The scheduler's RPC endpoint: capability store, placement, get_pools."""

import threading
import time
from typing import Any, Callable, Literal, overload

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import exception
from common import messages
from common import migration
from common import service
from common import warmup
from common import zones
from common.db.api import engine as db_engine
from common.db.api import messages as messages_db
from common.db.api import services as services_db
from common.db.api import timestamps
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.scheduler import filters
from services.scheduler import placement
from services.scheduler import relay as capability_relay
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus


def up_volume_hosts(conf: cfg.ConfigOpts) -> set[str]:
    """``host@backend`` of volume services that heartbeat and are enabled,
    and ``cluster@backend`` of clusters one of whose members does."""
    return services_db.running_backends(ashlar_context.get_admin_context(),
                                        conf.service_down_time)


class UpHosts:
    """The services table's answer to "which backends run?", cached briefly.

    NOTE(ashlar): Cinder reads the table on every request; at thousands of
    backends that costs more than the placement itself.  The answer is kept
    for ``ttl`` seconds and then re-read in the background (placements go on
    with the previous answer meanwhile); a report from a backend missing
    from it (a service that just started) makes the next placement read it
    again first.
    """

    def __init__(self, conf: cfg.ConfigOpts, ttl: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 background: bool = True) -> None:
        self.conf = conf
        self.ttl = ttl
        self._clock = clock
        self._background = background
        self._hosts: set[str] = set()
        self._fetched_at: float | None = None
        self._stale = True
        self._lock = threading.Lock()
        self._refreshing = False

    def notice(self, service_host: str) -> None:
        """A report arrived from ``service_host``."""
        if service_host not in self._hosts:
            self._stale = True

    def _fetch(self) -> None:
        started = self._clock()
        hosts = up_volume_hosts(self.conf)
        with self._lock:
            self._hosts = hosts
            self._fetched_at = started
            self._refreshing = False

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refreshing:
                return
            self._refreshing = True

        def run() -> None:
            try:
                self._fetch()
            except Exception:
                LOG.exception("Cannot read the services table")
                with self._lock:
                    self._refreshing = False
        threading.Thread(target=run, daemon=True,
                         name="scheduler-up-hosts").start()

    def refresh(self) -> None:
        """Read the table again at the next ``get`` (a disable was missed)."""
        self._stale = True

    def get(self) -> set[str]:
        """The backends up; past the ttl, the answer held while re-reading."""
        if self._stale or self._fetched_at is None:
            self._stale = False
            self._fetch()
        elif self._clock() - self._fetched_at > self.ttl:
            if not self._background:
                self._fetch()
            else:
                held = self._hosts
                self._refresh_in_background()
                return held
        return self._hosts


class SchedulerManager(service.Manager):
    """Serves ``ashlar-scheduler`` and listens to ``ashlar-capabilities``."""

    # NOTE(ashlar): one endpoint serves both the scheduler API and the
    # capability fanout, on one line of versions; it announces the newer.
    target = messaging.Target(
        version=scheduler_rpcapi.SchedulerAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts,
                 volume_api: volume_rpcapi.VolumeAPI | None = None,
                 view_api: scheduler_rpcapi.CapabilityViewAPI | None = None
                 ) -> None:
        self.conf = conf
        self.store = placement.new_store(capabilities.freshness_window(conf))
        self.relay = capability_relay.CapabilityRelay(
            view_api or scheduler_rpcapi.CapabilityViewAPI(conf))
        self.placer = placement.Placer(self.store)
        self.up_hosts = UpHosts(conf)
        self.volume_rpcapi = volume_api or volume_rpcapi.VolumeAPI(conf)
        self._started_at: float | None = None
        self._reported = threading.Condition()
        #: When this scheduler began to hear reports without a break: its
        #: start, or the first report after a silence (a broker restart).
        self._hearing_since = timestamps.utcnow()

    def init_host(self, service_uuid: str) -> None:
        # NOTE(ashlar): before the RPC servers start: queued creates may be
        # handled before after_start() runs.
        self._started_at = time.monotonic()

    def after_start(self) -> None:
        # NOTE(ashlar): hearing starts once the servers are connected; a
        # broker that came back moments ago can take seconds to accept
        # us, and counting from the constructor made the sweep give up
        # on creates before any report could arrive.
        self._hearing_since = timestamps.utcnow()
        self.volume_rpcapi.publish_service_capabilities(
            ashlar_context.get_admin_context())
        # NOTE(ashlar): at start too, as Cinder's reap runs at once: a
        # scheduler restarted more often than the interval still reaps.
        try:
            self._reap_messages()
        except Exception:
            LOG.exception("Cannot delete expired user messages")

    def warm_up(self) -> None:
        warmup.warm([volumes_db.volume_get, types_db.type_resolve],
                    steps=[warmup.match_once])

    def _wait_for_reports(self, hosts: set[str], deadline: float) -> None:
        """Wait until every backend in ``hosts`` has a fresh report, or
        until ``deadline`` (monotonic seconds)."""
        with self._reported:
            while time.monotonic() < deadline:
                if not hosts - self.store.fresh_backends():
                    return
                self._reported.wait(min(0.5, deadline - time.monotonic()))

    def _wait_for_first_reports(self) -> None:
        """Right after start, wait until every running backend reported.

        Creates queued while no scheduler ran arrive before the reports our
        start asked for; as Cinder does, hold them (here for at most one
        freshness window after start) rather than fail them for lack of
        pools.
        """
        started = self._started_at  # one read: other threads reset it
        if started is None:
            return
        self._wait_for_reports(self.up_hosts.get(),
                               started + self.store.freshness)
        self._started_at = None

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        return [(capability_relay.renewal_interval(self.store.freshness),
                 self.relay.flush),
                (max(1.0, self.conf.service_down_time / 2),
                 self._fail_orphaned_creates),
                (self.conf.rpc_call_timeout, self._place_lost_creates),
                (self.conf.message_reap_interval, self._reap_messages)]

    def _reap_messages(self) -> None:
        """Delete user messages past their ``guaranteed_until`` (every
        scheduler does; each row goes once)."""
        count = messages_db.message_destroy_expired(
            ashlar_context.get_admin_context())
        if count:
            LOG.info("Deleted %d expired user messages", count)

    def _place_lost_creates(self) -> None:
        """Place ``creating`` volumes no scheduler got a cast for, or left
        unplaced while a running backend had not reported.

        A broker restart can drop a queue with its messages; a create
        unplaced for longer than an RPC timeout is placed from the
        database.  Placement's compare-and-swap on ``host`` keeps a late
        cast, or another scheduler, from placing it twice.
        """
        ctxt = ashlar_context.get_admin_context()
        for row in volumes_db.volume_list(
                ctxt, filters={"status": STATUS.CREATING, "host": None}):
            if row.created_at is not None and not timestamps.older_than(
                    row.created_at, self.conf.rpc_call_timeout):
                continue
            host = self._place_and_cast(ctxt, row.id, swept=True)
            if host:
                LOG.info("Placed volume %(id)s on %(host)s; its create "
                         "cast was lost or its backend had not reported",
                         {"id": row.id, "host": host})

    def _fail_orphaned_creates(self) -> None:
        """Turn ``creating`` volumes whose volume service died into ``error``.

        The cast stays queued for the service; if it comes back it finds the
        volume in ``error`` and leaves it, and the user can delete it.
        """
        ctxt = ashlar_context.get_admin_context()
        up = up_volume_hosts(self.conf)
        for row in volumes_db.volume_list(ctxt,
                                          filters={"status": STATUS.CREATING}):
            backend = (row.host or "").partition("#")[0]
            changed = row.updated_at or row.created_at
            if not backend or backend in up or (
                    changed is not None and not timestamps.older_than(
                        changed, self.conf.service_down_time)):
                continue
            reason = ("Volume service %s is down; the volume was not "
                      "created. Delete it and create it again." % backend)
            if messages.fail_volume(ctxt, self.conf.message_ttl, row,
                                    {"status": STATUS.CREATING,
                                     "provider_location": None},
                                    {"status": STATUS.ERROR,
                                     "error_reason": reason},
                                    messages.SERVICE_DOWN):
                LOG.warning("Volume %(id)s: %(reason)s",
                            {"id": row.id, "reason": reason})

    @messaging.expose
    def update_service_capabilities(self, ctxt: ashlar_context.RequestContext,
                                    service_host: str, capabilities: dict,
                                    timestamp: float) -> None:
        if self._silent():
            self._hearing_since = timestamps.utcnow()
        if self.store.update(service_host, capabilities, timestamp):
            self.up_hosts.notice(service_host)
            with self._reported:
                self._reported.notify_all()
            self._relay(service_host, timestamp)

    def _relay(self, service_host: str, timestamp: float) -> None:
        """Relay the report just taken, as the store holds it; not if a
        newer one was taken meanwhile (its own handler relays that)."""
        held = self.store.reports([service_host]).get(service_host)
        if held is not None and held["timestamp"] == timestamp:
            self.relay.heard(service_host, held["capabilities"], timestamp)

    @messaging.expose
    def withdraw_service_capabilities(self,
                                      ctxt: ashlar_context.RequestContext,
                                      service_host: str, timestamp: float
                                      ) -> None:
        """A backend stopped: its pools no longer count."""
        self.store.forget(service_host, timestamp)
        self.relay.withdrawn(service_host, timestamp)
        LOG.info("Backend %s withdrew its pools (stopped)", service_host)

    @messaging.expose
    def get_pools(self, ctxt: ashlar_context.RequestContext) -> dict:
        """Every backend's last report with its age (API views and warming).

        Pools show this scheduler's view: capacity charged by placements no
        report reflects yet is already taken off.
        """
        return self.store.export()

    @messaging.expose
    def get_reports(self, ctxt: ashlar_context.RequestContext,
                    hosts: list[str] | None = None) -> dict:
        """The reports held as their backends sent them, with their ages
        and fingerprints (what api workers' views start from)."""
        reports = self.store.reports(hosts)
        for report in reports.values():
            report["fingerprint"] = capabilities.fingerprint(
                report["capabilities"])
        return reports

    @overload
    def _place(self, request: filters.PlacementRequest, wait: bool = ...,
               *, patient: Literal[False]) -> str: ...
    @overload
    def _place(self, request: filters.PlacementRequest, wait: bool = ...,
               patient: bool = ...) -> str | None: ...

    def _place(self, request: filters.PlacementRequest, wait: bool = True,
               patient: bool = True) -> str | None:
        """Choose a pool for a placement request and charge it.

        Before failing for want of a pool, give running volume services
        without a fresh report (one that just started registers ~0.1 s
        before its first report; one cut off by a broker restart heartbeats
        through the database while it reconnects) up to a freshness window
        to report (``wait``).  The API accepted the create for the same
        reason (its rule 4), so the scheduler must not turn it into "no
        valid backend" while such a service runs (``patient``): the volume
        is left ``creating`` for the lost-create sweep.

        :returns: the pool, or None when the volume is left for the sweep.
        :raises NoValidBackend: no counting pool passes the filters.
        """
        try:
            return self.placer.choose(request, self.up_hosts.get())
        except exception.NoValidBackend:
            pass
        # The services table afresh: the cached set may not hold a service
        # that just started.
        up = up_volume_hosts(self.conf)
        unheard = up - self.store.fresh_backends()
        if unheard and wait:
            LOG.info("No pool yet; waiting for reports of %s",
                     ", ".join(sorted(unheard)))
            self._wait_for_reports(
                unheard, time.monotonic() + self.store.freshness)
            up = up_volume_hosts(self.conf)
            unheard = up - self.store.fresh_backends()
        try:
            return self.placer.choose(request, up)
        except exception.NoValidBackend:
            if unheard and patient:
                return None
            raise

    @messaging.expose
    def create_volume(self, ctxt: ashlar_context.RequestContext, volume_id: str
                      ) -> None:
        """Choose a pool for a ``creating`` volume and cast it there.

        NOTE(ashlar): asked again while the database cannot be reached (a
        Galera writer's failover): the placement is a compare-and-swap on
        the volume's host, so a second run after a lost connection finds
        it placed; without it the create waited for the lost-create
        sweep (``rpc_call_timeout`` and more).
        """
        self._place_retried(ctxt, volume_id)

    @db_engine.retry_on_disconnect
    def _place_retried(self, ctxt: ashlar_context.RequestContext,
                       volume_id: str) -> None:
        self._place_and_cast(ctxt, volume_id)

    @messaging.expose
    def migrate_volume(self, ctxt: ashlar_context.RequestContext,
                       volume_id: str, new_type_id: str, source: dict,
                       host: str | None = None) -> None:
        """Choose a pool of the (new) type for a moving volume, or check
        the one an admin named (``host``: ``host@backend[#pool]``), and
        hand it there with ``source``, where its node said its data can
        be read (``common.migration``)."""
        moving = migration.moving_volume(ctxt, volume_id, new_type_id)
        if moving is None:
            return
        row, specs = moving
        request = placement.request_for(row, specs,
                                        retype=bool(row.pending_type_id))
        try:
            if host is None:
                dest = self._place(request, wait=False, patient=False)
            else:
                dest = self._check_named(request, host)
        except exception.NoValidBackend as exc:
            migration.give_up(ctxt, row, exc.msg)
            return
        self.volume_rpcapi.migrate_volume_in(ctxt, volume_id, dest, row.host,
                                             source, new_type_id)

    def _check_named(self, request: filters.PlacementRequest,
                     host: str) -> str:
        """The pool ``host`` names, if it passes the filters (and is
        charged); a backend's name takes its best pool.

        NOTE(ashlar): the placer chooses among a backend's pools; when it
        chose another than the one named, that pool's charge stays until
        its next report.

        :raises NoValidBackend: it does not.
        """
        backend = volume_rpcapi.backend_of(host)
        dest = self.placer.choose(request, self.up_hosts.get() & {backend})
        if "#" in host and dest != host:
            raise exception.NoValidBackend(
                reason="Pool %s cannot take the volume; %s can." % (
                    host, dest))
        return dest

    def _silent(self) -> bool:
        """No running service's report arrived for a freshness window,
        though some did before: the broker, not a backend, is the likely
        cause (a dead service's last report does not count)."""
        up = self.up_hosts.get()
        newest = self.store.newest_report()
        if (newest is not None and newest[0] in up
                and newest[1] <= self.store.freshness):
            return False    # constant time: checked on every report
        age = self.store.newest_report_age(among=up)
        return age is not None and age > self.store.freshness

    def _waited_long_enough(self, volume: Any) -> bool:
        """Whether a swept create stops waiting for running services that
        do not report: ``service_down_time`` after its create, or after
        reports resumed if they stopped since (a broker restart delays
        every report, and the services reconnect with back-off), and never
        during a silence (:meth:`_silent`)."""
        if self._silent():
            return False
        return timestamps.older_than(
            max(volume.created_at, self._hearing_since),
            self.conf.service_down_time)

    def _place_and_cast(self, ctxt: ashlar_context.RequestContext,
                        volume_id: str, swept: bool = False,
                        retries: int = 2) -> str | None:
        """Place the volume unless placed already (by another scheduler,
        or a late cast): the compare-and-swap on ``host`` lets one win.

        :param swept: from the lost-create sweep: no wait for reports, and
            a running service without a report keeps the volume
            ``creating`` only as long as :meth:`_waited_long_enough` says.
        :param retries: placements left should the chosen backend's service
            be disabled meanwhile (``volumes_db.volume_place`` refuses it).
        :returns: the pool it was cast to, or None.
        """
        try:
            volume = volumes_db.volume_get(ctxt, volume_id)
        except exception.VolumeNotFound:
            return None
        if volume.status != STATUS.CREATING or volume.host:
            return None
        _vtype, specs = types_db.type_resolve(ctxt, volume.volume_type_id)
        request = placement.request_for(volume, specs)
        patient = not (swept and self._waited_long_enough(volume))
        try:
            self._wait_for_first_reports()
            host = self._place(request, wait=not swept, patient=patient)
        except exception.NoValidBackend as exc:
            LOG.warning("No valid backend for volume %(id)s: %(reason)s",
                        {"id": volume_id, "reason": exc.msg})
            messages.fail_volume(ctxt, self.conf.message_ttl, volume,
                                 {"status": STATUS.CREATING},
                                 {"status": STATUS.ERROR,
                                  "error_reason": exc.msg},
                                 messages.NO_BACKEND)
            return None
        if host is None:
            LOG.info("Volume %s waits for a running volume service's "
                     "report; the sweep places it", volume_id)
            return None
        # Its type let the scheduler pick its zone: its pool's.
        zone = None if volume.availability_zone else zones.of_pool(
            self.store.pool(host), self.conf.storage_availability_zone)
        clustered = bool((self.store.pool(host) or {}).get("cluster_name"))
        if not volumes_db.volume_place(ctxt, volume_id, host, zone,
                                       cluster=clustered):
            return self._not_placed(ctxt, volume_id, host, swept, retries)
        self.volume_rpcapi.create_volume(ctxt, volume_id, host)
        return host

    def _not_placed(self, ctxt: ashlar_context.RequestContext,
                    volume_id: str, host: str, swept: bool,
                    retries: int) -> str | None:
        """The placement's swap failed: another scheduler placed the volume
        (nothing to do), or ``host``'s service was disabled since the list
        of running backends was read: read it again and place anew."""
        volume = volumes_db.volume_get(ctxt, volume_id)
        if volume.status != STATUS.CREATING or volume.host or not retries:
            return None
        LOG.info("Volume %(id)s: %(host)s was disabled meanwhile; placing "
                 "it again", {"id": volume_id, "host": host})
        self.up_hosts.refresh()
        return self._place_and_cast(ctxt, volume_id, swept, retries - 1)

