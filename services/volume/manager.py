"""The volume service's RPC endpoint: one manager per enabled backend.

Methods are thin: claim the volume (``Backend.in_hand``: a late cast and a
resume never both act), call the module of the operation, and report
capacity when it changed.  The operations live beside this module:
``create``, ``delete``, ``extend``, ``retype`` and ``migrate`` (a retype
that moves, an admin's migrate), ``snapshots`` and ``attach`` (connect,
disconnect, fence); ``resume`` finishes work no message will bring,
``capability_report`` tells schedulers and API workers about this
backend's pools, and ``backend`` holds what they all share.  A failed
cast has no caller to tell, so failures become an ``error`` status with
the backend's reason (for operators) and a user message in Cinder's words
(``common.messages``).
"""

from typing import Callable

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import context as ashlar_context
from common import coordination
from common import exception
from common import service
from common import warmup
from common.db.api import attachments as attachments_db
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import attach
from services.volume import backup_access
from services.volume import backend as volume_backend
from services.volume import capability_report
from services.volume import create
from services.volume import delete
from services.volume import extend
from services.volume import manage
from services.volume import migrate
from services.volume import resume
from services.volume import retype
from services.volume import rpcapi as volume_rpcapi
from services.volume import snapshots

LOG = logging.getLogger(__name__)
Context = ashlar_context.RequestContext


class VolumeManager(service.Manager):
    """Serves ``ashlar-volume`` as ``host@backend`` for one driver."""

    target = messaging.Target(version=volume_rpcapi.VolumeAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts, host: str, backend: str,
                 driver: driver_base.VolumeDriver, cluster: str | None = None,
                 locks: coordination.Locks | None = None) -> None:
        """:param cluster: ``[DEFAULT] cluster``: a member of it.
        :param locks: the process's locks (the cluster's for a member)."""
        self.conf = conf
        self.backend = backend
        self.driver = driver
        #: This backend as its operations see it.
        self.here = volume_backend.Backend(
            conf, host, backend, driver, scheduler_rpcapi.SchedulerAPI(conf),
            volume_rpcapi.VolumeAPI(conf), cluster=cluster, locks=locks)
        self.service_host = self.here.service_host
        self.reporter = capability_report.CapabilityReporter(
            self.here, scheduler_rpcapi.CapabilitiesAPI(conf))
        self.attacher = attach.Attacher(conf, driver, self.service_host,
                                        self.here.locks)
        self.snapshots = snapshots.SnapshotWorker(driver, self.service_host,
                                                  conf.message_ttl)

    # -- lifecycle -------------------------------------------------------
    def init_host(self, service_uuid: str) -> None:
        self.here.service_uuid = service_uuid
        self.driver.do_setup()
        self.driver.check_for_setup_error()
        resume.finish_interrupted_work(self)
        migrate.remove_leftovers(self.here, ashlar_context.get_admin_context(),
                                 self.conf.rpc_call_timeout)
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
        self.reporter.withdraw()

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        return [(self.conf.backend_stats_polling_interval,
                 self.report_capabilities),
                (self.conf.attachment_check_interval,
                 self.check_stuck_attachments),
                (self.conf.rpc_call_timeout, self._finish_lost_work)]

    def report_capabilities(self) -> None:
        """Fanout this backend's stats, stamped with time and sender."""
        self.reporter.report()

    def check_stuck_attachments(self) -> None:
        """Resolve attachments left in flight by a process that died,
        remove those whose compute agent's lease lapsed, and complete those
        made over REST and never completed."""
        ctxt = ashlar_context.get_admin_context()
        self.attacher.resolve_stuck(ctxt)
        self.attacher.reap_lapsed_leases(ctxt)
        self.attacher.complete_unconfirmed(ctxt)

    def _finish_lost_work(self) -> None:
        """Periodically: creates and deletes whose cast never arrived (a
        broker restart can drop a queue), or whose node died (a member of
        this cluster), older than an RPC timeout, and copies left here by
        volumes that moved away."""
        resume.finish_interrupted_work(self,
                                       min_age=self.conf.rpc_call_timeout)
        self.remove_leftovers()

    def remove_leftovers(self) -> None:
        """Remove copies of volumes that moved away (``delete_migrated``
        lost) or whose move here ended, once older than an RPC timeout."""
        if migrate.remove_leftovers(
                self.here, ashlar_context.get_admin_context(),
                self.conf.rpc_call_timeout):
            self.reporter.capacity_changed()

    @messaging.expose
    def do_cleanup(self, ctxt: Context) -> None:
        """An operator's ``POST /workers/cleanup``: run the periodic sweeps
        now (interrupted work, stuck attachments) rather than at their next
        tick; what is younger than an RPC timeout is still left to its
        message."""
        LOG.info("Cleanup of %s requested: resuming interrupted work now",
                 self.service_host)
        self._finish_lost_work()
        self.check_stuck_attachments()

    # -- RPC methods: volumes --------------------------------------------
    @messaging.expose
    def create_volume(self, ctxt: Context, volume_id: str) -> None:
        """Create the volume on the backend; ``creating`` -> ``available``."""
        with self.here.in_hand(volume_id) as mine:
            if mine and create.create(self.here, ctxt, volume_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def delete_volume(self, ctxt: Context, volume_id: str) -> None:
        """Remove the volume from the backend, then its row (its
        ``deleting`` snapshots first: a cascade)."""
        with self.here.in_hand(volume_id) as mine:
            if mine and delete.delete(self.here, self.snapshots, ctxt,
                                      volume_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def extend_volume(self, ctxt: Context, volume_id: str,
                      new_size: int) -> None:
        """Grow the volume; ``extending`` -> what its attachments say."""
        with self.here.in_hand(volume_id) as mine:
            if mine and extend.extend(self.here, ctxt, volume_id, new_size):
                self.reporter.capacity_changed()

    @messaging.expose
    def retype_volume(self, ctxt: Context, volume_id: str, new_type_id: str,
                      migration_policy: str) -> None:
        """Take the new type if this pool satisfies it, else (``on-demand``)
        start the volume's move to a pool that does.

        ``retyping`` -> what the attachments say, with the new type and its
        multiattach and encryption flags, or the old type when this pool
        does not satisfy the new one and the volume cannot move.  A retype
        the api let move (``migration_status`` ``starting``) moves whatever
        policy a resume passes.
        """
        with self.here.in_hand(volume_id) as mine:
            if mine:
                retype.retype(self.here, ctxt, volume_id, new_type_id,
                              migration_policy)

    @messaging.expose
    def migrate_volume(self, ctxt: Context, volume_id: str, host: str) -> None:
        """An admin's migrate of a volume here to pool ``host``, with its
        type (``common.migration``)."""
        migrate.migrate(self.here, ctxt, volume_id, host)

    @messaging.expose
    def migrate_volume_in(self, ctxt: Context, volume_id: str, host: str,
                          source_host: str, source: dict,
                          new_type_id: str) -> None:
        """Copy a moving volume to pool ``host`` here from ``source`` and
        take it, of its new type; the source's node then removes its copy.
        """
        with self.here.in_hand(volume_id) as mine:
            if mine and migrate.move_in(self.here, ctxt, volume_id, host,
                                        source_host, source, new_type_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def delete_migrated(self, ctxt: Context, volume_id: str, size: int,
                        provider_location: str | None) -> None:
        """Remove the copy a volume left here when it moved away."""
        if migrate.delete_migrated(self.here, ctxt, volume_id, size,
                                   provider_location):
            self.reporter.capacity_changed()

    @messaging.expose
    def publish_service_capabilities(self, ctxt: Context) -> None:
        """Report now: a scheduler or API worker just started."""
        self.report_capabilities()

    # -- RPC methods: snapshots ------------------------------------------
    @messaging.expose
    def create_snapshot(self, ctxt: Context, snapshot_id: str) -> None:
        """Snapshot on the backend; ``creating`` -> ``available``."""
        with self.here.in_hand(snapshot_id) as mine:
            if mine and self.snapshots.create(ctxt, snapshot_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def delete_snapshot(self, ctxt: Context, snapshot_id: str) -> None:
        """Remove the snapshot from the backend, then its row."""
        with self.here.in_hand(snapshot_id) as mine:
            if mine and self.snapshots.delete(ctxt, snapshot_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def revert_to_snapshot(self, ctxt: Context, volume_id: str,
                           snapshot_id: str | None) -> None:
        """Revert the volume to the snapshot; both back to ``available``."""
        with self.here.in_hand(volume_id) as mine:
            if mine:
                self.snapshots.revert(ctxt, volume_id, snapshot_id)

    # -- RPC methods: attachments ----------------------------------------
    @messaging.expose
    def attachment_connect(self, ctxt: Context, attachment_id: str,
                           snapshot: volume_rpcapi.AttachmentSnapshot | None = None
                           ) -> dict:
        """Connect an attachment the API put in flight; see attach.py.
        A 1.1 caller sends no ``snapshot``: it is read here."""
        return self.attacher.connect(
            ctxt, snapshot or _snapshot_of(ctxt, attachment_id, True))

    @messaging.expose
    def attachment_disconnect(self, ctxt: Context, attachment_id: str,
                              snapshot: volume_rpcapi.AttachmentSnapshot
                              | None = None) -> None:
        """Terminate the connection of an attachment being deleted (a 1.1
        caller sends no ``snapshot``: it is read here)."""
        self.attacher.disconnect(
            ctxt, snapshot or _snapshot_of(ctxt, attachment_id, False))

    @messaging.expose
    def attachment_fence(self, ctxt: Context, attachment_id: str,
                         snapshot: volume_rpcapi.AttachmentSnapshot
                         ) -> dict:
        """Revoke the host's I/O of an attachment being fenced."""
        return self.attacher.fence(ctxt, snapshot)

    @messaging.expose
    def attachment_unfence(self, ctxt: Context, volume_id: str,
                           clients: list[str]) -> None:
        """Lift what a fence revoked."""
        self.attacher.unfence(ctxt, volume_id, clients)

    # -- RPC methods: manage and unmanage ----------------------------------
    @messaging.expose
    def get_manageable_volumes(self, ctxt: Context) -> list[dict]:
        """What this backend holds that a volume could adopt."""
        return manage.manageable(self.here, ctxt, snapshot=False)

    @messaging.expose
    def get_manageable_snapshots(self, ctxt: Context) -> list[dict]:
        """What this backend holds that a snapshot could adopt."""
        return manage.manageable(self.here, ctxt, snapshot=True)

    @messaging.expose
    @messaging.expected_exceptions(exception.ManageExistingInvalidReference,
                                   exception.NotSupported)
    def manage_existing_get_size(self, ctxt: Context, ref: dict,
                                 snapshot: bool = False) -> int:
        """The size in GiB of what ``ref`` names (an invalid one raises)."""
        if snapshot:
            return self.driver.manage_existing_snapshot_get_size(ref)
        return self.driver.manage_existing_get_size(ref)

    @messaging.expose
    def manage_existing(self, ctxt: Context, volume_id: str,
                        ref: dict) -> None:
        """Adopt ``ref``: ``managing`` -> ``available``."""
        with self.here.in_hand(volume_id) as mine:
            if mine and manage.manage(self.here, ctxt, volume_id, ref):
                self.reporter.capacity_changed()

    @messaging.expose
    def unmanage_volume(self, ctxt: Context, volume_id: str) -> None:
        """Forget the volume, its storage left: ``unmanaging`` -> gone."""
        with self.here.in_hand(volume_id) as mine:
            if mine and manage.unmanage(self.here, ctxt, volume_id):
                self.reporter.capacity_changed()

    @messaging.expose
    def manage_existing_snapshot(self, ctxt: Context, snapshot_id: str,
                                 ref: dict) -> None:
        """Adopt ``ref``: ``managing`` -> ``available``."""
        with self.here.in_hand(snapshot_id) as mine:
            if mine and manage.manage_snapshot(self.snapshots, ctxt,
                                               snapshot_id, ref):
                self.reporter.capacity_changed()

    @messaging.expose
    def unmanage_snapshot(self, ctxt: Context, snapshot_id: str) -> None:
        """Forget the snapshot, its storage left."""
        with self.here.in_hand(snapshot_id) as mine:
            if mine and manage.unmanage_snapshot(self.snapshots, ctxt,
                                                 snapshot_id):
                self.reporter.capacity_changed()

    # -- RPC methods: backups --------------------------------------------
    @messaging.expose
    def backup_connect(self, ctxt: Context, volume_id: str,
                       connector: dict) -> dict:
        """Connect a volume a backup reads or a restore writes."""
        return backup_access.connect(ctxt, self.driver, volume_id, connector)

    @messaging.expose
    def backup_disconnect(self, ctxt: Context, volume_id: str,
                          connector: dict) -> None:
        """End a backup's or a restore's connection."""
        backup_access.disconnect(ctxt, self.driver, volume_id, connector)

    @messaging.expose
    def backup_connect_snapshot(self, ctxt: Context, snapshot_id: str,
                                connector: dict) -> dict:
        """Connect a snapshot a backup reads."""
        return backup_access.connect_snapshot(ctxt, self.driver, snapshot_id,
                                              connector)

    @messaging.expose
    def backup_disconnect_snapshot(self, ctxt: Context, snapshot_id: str,
                                   connector: dict) -> None:
        """End a snapshot backup's connection."""
        backup_access.disconnect_snapshot(ctxt, self.driver, snapshot_id,
                                          connector)


def _snapshot_of(ctxt: Context, attachment_id: str,
                 connecting: bool) -> volume_rpcapi.AttachmentSnapshot:
    """``volume_rpcapi.snapshot`` of a row as the database holds it (what
    the api sends since 1.2); a connect's connector carries the mode."""
    row, volume, _none = attachments_db.attachment_with_volume(
        ctxt, attachment_id)
    connector = attachments_db.connector(ctxt, attachment_id)
    if connecting:
        connector = dict(connector, mode=row.attach_mode)
    return volume_rpcapi.snapshot(row, volume, connector)
