"""The volume service's RPC endpoint: one manager per enabled backend.

Methods are thin: load the row, call the driver, compare-and-swap the status,
report capacity.  A failed cast has no caller to tell, so failures become an
``error`` status with the backend's reason (for operators) and a user
message in Cinder's words (``common.messages``).
"""

import contextlib
import threading
import time
from typing import Any, Callable, Iterator

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import exception
from common import extra_specs
from common import messages
from common import migration
from common import service
from common import states
from common import warmup
from common.db.api import attachments as attachments_db
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from common.db.api.timestamps import older_than
from drivers import base as driver_base
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import attach
from services.volume import rpcapi as volume_rpcapi
from services.volume import snapshots

LOG = logging.getLogger(__name__)
#: Seconds between a capacity change and the report that tells about it.
REPORT_COALESCE_DELAY = 0.2
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
MIGRATION = constants.MigrationStatus

_driver_volume = attach.driver_volume


class VolumeManager(service.Manager):
    """Serves ``ashlar-volume`` as ``host@backend`` for one driver."""

    target = messaging.Target(version=volume_rpcapi.VolumeAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts, host: str, backend: str,
                 driver: driver_base.VolumeDriver) -> None:
        self.conf = conf
        self.service_host = "%s@%s" % (host, backend)
        self.backend = backend
        self.driver = driver
        self.capabilities_rpcapi = scheduler_rpcapi.CapabilitiesAPI(conf)
        self.scheduler_rpcapi = scheduler_rpcapi.SchedulerAPI(conf)
        self.volume_rpcapi = volume_rpcapi.VolumeAPI(conf)
        self.attacher = attach.Attacher(conf, driver, self.service_host)
        self.snapshots = snapshots.SnapshotWorker(driver, self.service_host,
                                                  conf.message_ttl)
        self._report_lock = threading.Lock()
        self._report_pending = False
        #: Serialises reports with the withdrawal; none is sent after it.
        self._send_lock = threading.Lock()
        self._withdrawn = False
        #: Volumes this process is creating or deleting right now.
        self._working: set[str] = set()

    # -- lifecycle -------------------------------------------------------
    def init_host(self, service_uuid: str) -> None:
        self.service_uuid = service_uuid
        self.driver.do_setup()
        self.driver.check_for_setup_error()
        self._finish_interrupted_work()
        self.check_stuck_attachments()

    def after_start(self) -> None:
        self.report_capabilities()

    def warm_up(self) -> None:
        # NOTE(ashlar): after the first report, which a new backend's
        # visibility waits for; not the matcher, which a node rarely runs.
        warmup.warm([volumes_db.volume_get, attachments_db.volume_brief,
                     attachments_db.attachment_with_volume,
                     attachments_db.connector])

    def before_stop(self) -> None:
        """Withdraw this backend's pools: schedulers and API workers stop
        counting them now, not when the last report expires."""
        with self._send_lock:
            self._withdrawn = True
            sent = self.capabilities_rpcapi.withdraw_service_capabilities(
                ashlar_context.get_admin_context(), self.service_host,
                time.time())
        if sent:
            LOG.info("Withdrew the pools of %s", self.service_host)

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        return [(self.conf.backend_stats_polling_interval,
                 self.report_capabilities),
                (self.conf.attachment_check_interval,
                 self.check_stuck_attachments),
                (self.conf.rpc_call_timeout, self._finish_lost_work)]

    def check_stuck_attachments(self) -> None:
        """Resolve attachments left in flight by a process that died, and
        remove those whose compute agent's lease lapsed."""
        ctxt = ashlar_context.get_admin_context()
        self.attacher.resolve_stuck(ctxt)
        self.attacher.reap_lapsed_leases(ctxt)

    def _my_volumes(self, status: str) -> list:
        ctxt = ashlar_context.get_admin_context()
        return [row for row in volumes_db.volume_list(
                    ctxt, filters={"status": status})
                if volume_rpcapi.backend_of(row.host or "")
                == self.service_host]

    def _finish_interrupted_work(self, min_age: float = 0.0) -> None:
        """Finish creates, deletes, snapshots, reverts, extends and retypes
        of this backend that no message will bring (an extend or retype
        from the size or type the api recorded as pending); end migrates.

        At start, everything a previous run began: RPC messages are
        acknowledged before they are handled, so work in hand when the
        process died is not redelivered.
        """
        ctxt = ashlar_context.get_admin_context()
        snaps = self.snapshots
        for kind, rows, method in (
                ("volume", self._my_volumes(STATUS.CREATING),
                 self.create_volume),
                ("volume", self._my_volumes(STATUS.DELETING),
                 self.delete_volume),
                ("snapshot", snaps.mine(ctxt, SNAP.CREATING),
                 self.create_snapshot),
                ("snapshot", snaps.mine(ctxt, SNAP.DELETING),
                 self.delete_snapshot),
                ("volume", self._my_volumes(STATUS.REVERTING),
                 lambda ctxt, volume_id: self.revert_to_snapshot(
                     ctxt, volume_id, snaps.restoring_of(ctxt, volume_id))),
                ("volume", self._my_volumes(STATUS.EXTENDING),
                 self._resume_extend),
                ("volume", self._my_volumes(STATUS.RETYPING),
                 self._resume_retype),
                ("volume", self._my_volumes(STATUS.MAINTENANCE),
                 self._resume_migrate)):
            for row in rows:
                if min_age and not older_than(row.updated_at or row.created_at,
                                              min_age):
                    continue
                LOG.info("Resuming %(status)s %(kind)s %(id)s",
                         {"status": row.status, "kind": kind, "id": row.id})
                method(ctxt, row.id)

    def _resume_extend(self, ctxt: Any, volume_id: str) -> None:
        row = self._volume_in(ctxt, volume_id, STATUS.EXTENDING)
        if row is None:
            return
        if row.pending_size is None:
            # NOTE(ashlar): an extend of a release before pending sizes.
            volumes_db.volume_cas(ctxt, volume_id,
                                  {"status": STATUS.EXTENDING},
                                  {"status": STATUS.ERROR_EXTENDING,
                                   "error_reason": "The extend was "
                                   "interrupted and its size is unknown."})
            return
        self.extend_volume(ctxt, volume_id, row.pending_size)

    def _resume_retype(self, ctxt: Any, volume_id: str) -> None:
        row = self._volume_in(ctxt, volume_id, STATUS.RETYPING)
        if row is None:
            return
        if row.migration_status == MIGRATION.MIGRATING:
            LOG.info("Volume %s is moving to another pool; the move ends "
                     "it", volume_id)
            return
        if row.pending_type_id is None:
            attachments_db.volume_leave_status(
                ctxt, volume_id, STATUS.RETYPING, {"previous_status": None})
            LOG.warning("Retype of volume %s was interrupted and its type "
                        "is unknown; it keeps its type", volume_id)
            return
        self.retype_volume(ctxt, volume_id, row.pending_type_id, "never")

    def _resume_migrate(self, ctxt: Any, volume_id: str) -> None:
        """An admin's migrate whose message was lost ends (its destination
        went with the message); one that moves goes on elsewhere."""
        row = self._volume_in(ctxt, volume_id, STATUS.MAINTENANCE)
        if row is not None and row.migration_status == MIGRATION.STARTING:
            migration.give_up(ctxt, row, "Its migration's message was lost "
                              "before this node took it up; migrate it "
                              "again.", expected={
                                  "host": row.host,
                                  "migration_status": MIGRATION.STARTING})

    def _finish_lost_work(self) -> None:
        """Periodically: creates and deletes whose cast never arrived (a
        broker restart can drop a queue), older than an RPC timeout."""
        self._finish_interrupted_work(min_age=self.conf.rpc_call_timeout)

    # -- RPC methods -----------------------------------------------------
    @contextlib.contextmanager
    def _in_hand(self, volume_id: str) -> Iterator[bool]:
        """Claim a volume for this process; yields False if already held
        (a late cast and a resume must not both call the driver)."""
        with self._report_lock:
            taken = volume_id not in self._working
            self._working.add(volume_id)
        try:
            yield taken
        finally:
            if taken:
                with self._report_lock:
                    self._working.discard(volume_id)

    @staticmethod
    def _volume_in(ctxt: Any, volume_id: str, status: str) -> Any | None:
        """The volume row if it is (still) in ``status``; else None."""
        try:
            row = volumes_db.volume_get(ctxt, volume_id)
        except exception.VolumeNotFound:
            return None
        if row.status != status:
            LOG.info("Volume %(id)s is %(status)s, not %(wanted)s; leaving it",
                     {"id": volume_id, "status": row.status, "wanted": status})
            return None
        return row

    def _driver_call(self, ctxt: Any, row: Any, action: str,
                     failed_status: str,
                     call: Callable[[], dict] | None = None,
                     event: messages.Event | None = None) -> dict | None:
        """Run ``call`` (default: the driver's ``<action>_volume``); on
        failure set ``failed_status`` with the backend's reason (for
        operators) and record ``event``, if any, for the volume's project.

        :returns: the driver's model update ({} when none), None on failure.
        """
        try:
            if call is None:
                return getattr(self.driver, "%s_volume" % action)(
                    _driver_volume(row)) or {}
            return call() or {}
        except Exception as exc:
            LOG.exception("Driver failed to %(action)s volume %(id)s",
                          {"action": action, "id": row.id})
            values = {"status": failed_status,
                      "error_reason": "Backend %s failed to %s the volume: "
                      "%s" % (self.service_host, action, exc)}
            messages.fail_volume(ctxt, self.conf.message_ttl, row,
                                 {"status": row.status}, values, event)
            return None

    @messaging.expose
    def create_volume(self, ctxt: Any, volume_id: str) -> None:
        """Create the volume on the backend; ``creating`` -> ``available``."""
        with self._in_hand(volume_id) as mine:
            if mine:
                self._create(ctxt, volume_id)

    @messaging.expose
    def delete_volume(self, ctxt: Any, volume_id: str) -> None:
        """Remove the volume from the backend, then its row (its
        ``deleting`` snapshots first: a cascade)."""
        with self._in_hand(volume_id) as mine:
            if mine:
                self._delete(ctxt, volume_id)

    def _create(self, ctxt: Any, volume_id: str) -> None:
        row = self._volume_in(ctxt, volume_id, STATUS.CREATING)
        if row is None or not self._source_pool_fits(ctxt, row):
            return
        update = self._driver_call(ctxt, row, "create", STATUS.ERROR,
                                   self._maker(ctxt, row),
                                   messages.CREATE_FAILED)
        if update is None:
            return
        values = dict(update, status=STATUS.AVAILABLE,
                      service_uuid=self.service_uuid)
        if not volumes_db.volume_cas(ctxt, volume_id,
                                     {"status": STATUS.CREATING}, values):
            LOG.warning("Volume %s changed status while being created",
                        volume_id)
        LOG.info("Created volume %(id)s on %(host)s",
                 {"id": volume_id, "host": self.service_host})
        self._capacity_changed()

    def _source_pool_fits(self, ctxt: Any, row: Any) -> bool:
        """A copy is made where its source is, placed by the api without a
        scheduler: refuse (``error``) a type this pool does not satisfy,
        which the api lets through when its view of the pool was stale."""
        if not (row.snapshot_id or row.source_volid):
            return True
        specs = types_db.specs_of(types_db.type_get(ctxt, row.volume_type_id))
        missing = self._missing_here(row, specs)
        if not missing:
            return True
        messages.fail_volume(
            ctxt, self.conf.message_ttl, row, {"status": STATUS.CREATING}, {
                "status": STATUS.ERROR, "error_reason": "The source's "
                "backend %s does not offer %s, which the volume's type "
                "requires." % (self.service_host, ", ".join(missing))},
            messages.NO_BACKEND)
        return False

    def _maker(self, ctxt: Any, row: Any) -> Callable[[], dict]:
        """The driver call that makes ``row``: empty, or from its source."""
        volume = _driver_volume(row)
        if row.snapshot_id:
            return lambda: self.driver.create_volume_from_snapshot(
                volume, snapshots.driver_snapshot(
                    snapshots_db.snapshot_get(ctxt, row.snapshot_id)))
        if row.source_volid:
            return lambda: self.driver.create_cloned_volume(
                volume, _driver_volume(
                    volumes_db.volume_get(ctxt, row.source_volid)))
        return lambda: self.driver.create_volume(volume)

    def _delete(self, ctxt: Any, volume_id: str) -> None:
        row = self._volume_in(ctxt, volume_id, STATUS.DELETING)
        if row is None or not self._snapshots_deleted(ctxt, row) or \
                self._driver_call(ctxt, row, "delete",
                                  STATUS.ERROR_DELETING) is None:
            return
        volumes_db.volume_destroy(ctxt, volume_id)
        LOG.info("Deleted volume %s", volume_id)
        self._capacity_changed()

    def _snapshots_deleted(self, ctxt: Any, row: Any) -> bool:
        """A cascade: delete the volume's snapshots first.  False while one
        remains: one another delete has in hand keeps the volume
        ``deleting`` (the sweep casts it again); one that failed makes it
        ``error_deleting``."""
        if not row.snapshot_count:
            return True
        for snap in snapshots_db.snapshots_of_volume(ctxt, row.id):
            with self._in_hand(snap.id) as mine:
                if mine:
                    self.snapshots.delete(ctxt, snap.id)
        left = snapshots_db.snapshots_of_volume(ctxt, row.id)
        failed = [s.id for s in left if s.status != SNAP.DELETING]
        if failed:
            volumes_db.volume_cas(
                ctxt, row.id, {"status": STATUS.DELETING},
                {"status": STATUS.ERROR_DELETING, "error_reason":
                 "Its snapshots %s could not be deleted." % ", ".join(failed)})
        return not left

    @messaging.expose
    def create_snapshot(self, ctxt: Any, snapshot_id: str) -> None:
        """Snapshot on the backend; ``creating`` -> ``available``."""
        with self._in_hand(snapshot_id) as mine:
            if mine and self.snapshots.create(ctxt, snapshot_id):
                self._capacity_changed()

    @messaging.expose
    def delete_snapshot(self, ctxt: Any, snapshot_id: str) -> None:
        """Remove the snapshot from the backend, then its row."""
        with self._in_hand(snapshot_id) as mine:
            if mine and self.snapshots.delete(ctxt, snapshot_id):
                self._capacity_changed()

    @messaging.expose
    def revert_to_snapshot(self, ctxt: Any, volume_id: str,
                           snapshot_id: str | None) -> None:
        """Revert the volume to the snapshot; both back to ``available``."""
        with self._in_hand(volume_id) as mine:
            if mine:
                self.snapshots.revert(ctxt, volume_id, snapshot_id)

    @messaging.expose
    def attachment_connect(self, ctxt: Any, attachment_id: str,
                           snapshot: dict | None = None) -> dict:
        """Connect an attachment the API put in flight; see attach.py.
        A 1.1 caller sends no ``snapshot``: it is read here."""
        return self.attacher.connect(
            ctxt, snapshot or _snapshot_of(ctxt, attachment_id, True))

    @messaging.expose
    def attachment_disconnect(self, ctxt: Any, attachment_id: str,
                              snapshot: dict | None = None) -> None:
        """Terminate the connection of an attachment being deleted (a 1.1
        caller sends no ``snapshot``: it is read here)."""
        self.attacher.disconnect(
            ctxt, snapshot or _snapshot_of(ctxt, attachment_id, False))

    @messaging.expose
    def attachment_fence(self, ctxt: Any, attachment_id: str,
                         snapshot: dict) -> dict:
        """Revoke the host's I/O of an attachment being fenced."""
        return self.attacher.fence(ctxt, snapshot)

    @messaging.expose
    def attachment_unfence(self, ctxt: Any, volume_id: str,
                           clients: list[str]) -> None:
        """Lift what a fence revoked."""
        self.attacher.unfence(ctxt, volume_id, clients)

    @messaging.expose
    def extend_volume(self, ctxt: Any, volume_id: str, new_size: int) -> None:
        """Grow the volume; ``extending`` -> what its attachments say."""
        try:
            row = volumes_db.volume_get(ctxt, volume_id)
        except exception.VolumeNotFound:
            return
        if row.status != STATUS.EXTENDING:
            return
        try:
            self.driver.extend_volume(_driver_volume(row), new_size)
        except Exception as exc:
            LOG.exception("Driver failed to extend volume %s", volume_id)
            messages.fail_volume(ctxt, self.conf.message_ttl, row,
                                 {"status": STATUS.EXTENDING},
                                 {"status": STATUS.ERROR_EXTENDING,
                                  "pending_size": None,
                                  "error_reason": "Backend %s failed to "
                                  "extend the volume: %s"
                                  % (self.service_host, exc)},
                                 messages.EXTEND_FAILED)
            return
        attachments_db.volume_leave_status(
            ctxt, volume_id, STATUS.EXTENDING,
            {"size": new_size, "previous_status": None,
             "pending_size": None})
        LOG.info("Extended volume %(id)s to %(size)s GiB",
                 {"id": volume_id, "size": new_size})
        self._capacity_changed()

    @messaging.expose
    def retype_volume(self, ctxt: Any, volume_id: str, new_type_id: str,
                      migration_policy: str) -> None:
        """Take the new type if this pool satisfies it, else (``on-demand``)
        start the volume's move to a pool that does.

        ``retyping`` -> what the attachments say, with the new type and its
        multiattach and encryption flags, or the old type when this pool
        does not satisfy the new one and the volume cannot move.  A retype
        the api let move (``migration_status`` ``starting``) moves whatever
        policy a resume passes.
        """
        with self._in_hand(volume_id) as mine:
            if mine:
                self._retype(ctxt, volume_id, new_type_id, migration_policy)

    def _retype(self, ctxt: Any, volume_id: str, new_type_id: str,
                migration_policy: str) -> None:
        try:
            row = volumes_db.volume_get(ctxt, volume_id)
            vtype = types_db.type_get(ctxt, new_type_id)
        except exception.NotFound:
            row = None
        if (row is None or row.status != STATUS.RETYPING
                or row.pending_type_id != new_type_id
                or row.migration_status == MIGRATION.MIGRATING):
            return
        specs = types_db.specs_of(vtype)
        missing = self._missing_here(row, specs)
        values: dict = {"previous_status": None, "pending_type_id": None}
        if row.migration_status == MIGRATION.STARTING:
            values["migration_status"] = None
            migration_policy = "on-demand"
        multiattach = extra_specs.is_multiattach_spec(specs)
        if missing and migration_policy == "on-demand" and \
                self._start_move(ctxt, row, vtype.id) is None:
            return
        if missing:
            LOG.warning("Volume %(id)s not retyped to %(type)s: its pool "
                        "does not offer %(missing)s and migration (policy "
                        "%(policy)s) is not available",
                        {"id": volume_id, "type": vtype.name,
                         "missing": ", ".join(missing),
                         "policy": migration_policy})
        elif self._driver_retype(row, multiattach):
            values.update(volume_type_id=vtype.id, multiattach=multiattach,
                          encrypted=states.is_encrypted(specs))
        else:
            missing = ["a backend change of its multiattach flag"]
        attachments_db.volume_leave_status(
            ctxt, volume_id, STATUS.RETYPING, values, expected={
                "pending_type_id": new_type_id,
                "migration_status": row.migration_status})
        LOG.info("Retype of volume %(id)s to %(type)s %(result)s",
                 {"id": volume_id, "type": vtype.name,
                  "result": "refused" if missing else "done"})

    @messaging.expose
    def migrate_volume(self, ctxt: Any, volume_id: str, host: str) -> None:
        """An admin's migrate of a volume here to pool ``host``, with its
        type (``common.migration``)."""
        row = self._volume_in(ctxt, volume_id, STATUS.MAINTENANCE)
        if row is None or row.migration_status != MIGRATION.STARTING:
            return
        reason = self._start_move(ctxt, row, row.volume_type_id, host)
        if reason is not None:
            migration.give_up(ctxt, row, reason, expected={
                "host": row.host, "migration_status": MIGRATION.STARTING})

    def _start_move(self, ctxt: Any, row: Any, type_id: str,
                    host: str | None = None) -> str | None:
        """Mark the volume migrating and ask the scheduler for a pool of
        type ``type_id`` (``host``, if named), telling where its data can
        be read.

        :returns: why it cannot move (attachments, snapshots, a group,
            older services), or None when it moves or its move ended.
        """
        if not migration.copy_carries(row):
            return ("It has attachments, snapshots or a group, which a "
                    "copy cannot carry.")
        if not (self.scheduler_rpcapi.client.can_send_version(
                self.scheduler_rpcapi.MIGRATION_VERSION)
                and self.volume_rpcapi.client.can_send_version(
                    self.volume_rpcapi.MIGRATION_VERSION)):
            return "The scheduler or volume services are too old to move it."
        if not volumes_db.volume_cas(
                ctxt, row.id, {"status": row.status, "host": row.host,
                               "migration_status": row.migration_status},
                {"migration_status": MIGRATION.MIGRATING}):
            return None
        try:
            source = self.driver.copy_source(_driver_volume(row))
        except Exception as exc:
            migration.give_up(ctxt, row, "Backend %s cannot give the "
                              "volume's data to another backend: %s"
                              % (self.service_host, exc))
            return None
        self.scheduler_rpcapi.migrate_volume(ctxt, row.id, type_id, source,
                                             host)
        LOG.info("Volume %(id)s moves from %(host)s",
                 {"id": row.id, "host": row.host})
        return None

    @messaging.expose
    def migrate_volume_in(self, ctxt: Any, volume_id: str, host: str,
                          source_host: str, source: dict,
                          new_type_id: str) -> None:
        """Copy a moving volume to pool ``host`` here from ``source`` and
        take it, of its new type; the source's node then removes its copy.
        """
        with self._in_hand(volume_id) as mine:
            if mine:
                self._move_in(ctxt, volume_id, host, source_host, source,
                              new_type_id)

    def _move_in(self, ctxt: Any, volume_id: str, host: str,
                 source_host: str, source: dict, new_type_id: str) -> None:
        moving = migration.moving_volume(ctxt, volume_id, new_type_id,
                                         source_host)
        if moving is None:
            return
        row, specs = moving
        multiattach = extra_specs.is_multiattach_spec(specs)
        target = driver_base.DriverVolume(id=row.id, size=row.size,
                                          name=row.display_name,
                                          multiattach=multiattach)
        try:
            update = self.driver.create_volume_from_copy(target, source)
        except Exception as exc:
            LOG.exception("Driver failed to copy volume %s", volume_id)
            migration.give_up(ctxt, row, "Backend %s failed to copy the "
                              "volume from %s: %s"
                              % (self.service_host, source_host, exc))
            return
        values = dict(update or {}, host=host, volume_type_id=new_type_id,
                      availability_zone=self._pool_here(host).get(
                          "availability_zone",
                          self.conf.storage_availability_zone),
                      multiattach=multiattach,
                      encrypted=states.is_encrypted(specs),
                      migration_status=MIGRATION.SUCCESS,
                      previous_status=None, pending_type_id=None,
                      error_reason=None, service_uuid=self.service_uuid)
        if not attachments_db.volume_leave_status(
                ctxt, volume_id, row.status, values,
                expected=dict(migration.moving(source_host),
                              pending_type_id=row.pending_type_id)):
            LOG.warning("Volume %s stopped moving while it was copied; "
                        "removing the copy", volume_id)
            self._driver_delete(target)
            return
        self.volume_rpcapi.delete_migrated(ctxt, volume_id, source_host,
                                           row.size, row.provider_location)
        LOG.info("Moved volume %(id)s from %(src)s to %(dst)s",
                 {"id": volume_id, "src": source_host, "dst": host})
        self._capacity_changed()

    @messaging.expose
    def delete_migrated(self, ctxt: Any, volume_id: str, size: int,
                        provider_location: str | None) -> None:
        """Remove the copy a volume left here when it moved away."""
        try:
            here = volume_rpcapi.backend_of(
                volumes_db.volume_get(ctxt, volume_id).host or "")
        except exception.VolumeNotFound:
            here = None
        if here == self.service_host:
            LOG.warning("Volume %s is here again; its copy stays",
                        volume_id)
            return
        self._driver_delete(driver_base.DriverVolume(
            id=volume_id, size=size, provider_location=provider_location))
        self._capacity_changed()

    def _driver_delete(self, volume: driver_base.DriverVolume) -> None:
        """Remove a copy no row points to; a failure leaves it (logged)."""
        try:
            self.driver.delete_volume(volume)
        except Exception:
            LOG.exception("Driver failed to remove the copy of volume %s "
                          "that no row points to; remove it by hand",
                          volume.id)

    def _pool_here(self, host: str | None) -> dict:
        """The capabilities this backend reports for its pool ``host``."""
        return capabilities.flatten(self.service_host, self._stats(),
                                    0).get(host or "", {})

    def _missing_here(self, row: Any, specs: dict) -> list[str]:
        """The type's specs that the row's pool here does not satisfy."""
        return capabilities.misses(self._pool_here(row.host), specs)

    def _stats(self, refresh: bool = False) -> dict:
        """The driver's stats with this backend's name and zone."""
        stats = dict(self.driver.get_volume_stats(refresh=refresh))
        stats.setdefault("volume_backend_name", self.backend)
        stats.setdefault("availability_zone",
                         self.conf.storage_availability_zone)
        return stats

    def _driver_retype(self, row: Any, multiattach: bool) -> bool:
        """Let the driver follow a change of the multiattach flag; False
        when it cannot (the volume keeps its type)."""
        if bool(row.multiattach) == multiattach:
            return True
        try:
            self.driver.retype(_driver_volume(row), multiattach)
        except Exception:
            LOG.exception("Driver failed to make volume %(id)s %(what)s",
                          {"id": row.id, "what": "multiattach" if multiattach
                           else "single-host"})
            return False
        return True

    @messaging.expose
    def publish_service_capabilities(self, ctxt: Any) -> None:
        """Report now: a scheduler or API worker just started."""
        self.report_capabilities()

    # -- capability reports ----------------------------------------------
    def _capacity_changed(self) -> None:
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
        self.report_capabilities()

    def report_capabilities(self) -> None:
        """Fanout this backend's stats, stamped with time and sender."""
        stats = self._stats(refresh=True)
        with self._send_lock:
            if self._withdrawn:
                return
            self.capabilities_rpcapi.update_service_capabilities(
                ashlar_context.get_admin_context(), self.service_host, stats,
                time.time())


def _snapshot_of(ctxt: Any, attachment_id: str, connecting: bool) -> dict:
    """``volume_rpcapi.snapshot`` of a row as the database holds it (what
    the api sends since 1.2); a connect's connector carries the mode."""
    row, volume, _none = attachments_db.attachment_with_volume(
        ctxt, attachment_id)
    connector = attachments_db.connector(ctxt, attachment_id)
    if connecting:
        connector = dict(connector, mode=row.attach_mode)
    return volume_rpcapi.snapshot(row, volume, connector)
