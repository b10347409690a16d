"""Snapshot work of one volume backend: create, delete, revert.

Each step compare-and-swaps the snapshot's (and, for a revert, the
volume's) status from what the API left, so a late cast and a resume never
both act; a driver failure becomes an error status with a reason (for
operators) and, for a create or a delete, a user message (as Cinder's).
"""

from oslo_log import log as logging

from common import constants
from common import exception
from common import messages
from common.context import RequestContext
from common.db import models
from common.db.api import group_snapshots as group_snapshots_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.volume import backend as volume_backend

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus


def driver_snapshot(row: models.Snapshot) -> driver_base.DriverSnapshot:
    return driver_base.DriverSnapshot(
        id=row.id, volume=volume_backend.driver_volume(row.volume),
        size=row.volume_size, provider_location=row.provider_location)


def _settling(row: models.Snapshot) -> dict:
    """The ``check`` and ``then`` that make a member's group snapshot
    follow it, in the transaction that changes the member."""
    return {"check": group_snapshots_db.lock(row.group_snapshot_id),
            "then": group_snapshots_db.settle(row.group_snapshot_id)}


class SnapshotWorker:
    def __init__(self, driver: driver_base.VolumeDriver, service_host: str,
                 message_ttl: float) -> None:
        self.driver = driver
        self.service_host = service_host
        self.message_ttl = message_ttl

    def in_status(self, ctxt: RequestContext, snapshot_id: str, status: str
                  ) -> models.Snapshot | None:
        """The snapshot's row if it is (still) in ``status``; else None."""
        try:
            row = snapshots_db.snapshot_get(ctxt, snapshot_id)
        except exception.SnapshotNotFound:
            return None
        return row if row.status == status else None

    def create(self, ctxt: RequestContext, snapshot_id: str) -> bool:
        """``creating`` -> ``available`` (or ``error``); True when made."""
        row = self.in_status(ctxt, snapshot_id, SNAP.CREATING)
        if row is None:
            return False
        try:
            update = self.driver.create_snapshot(driver_snapshot(row)) or {}
        except Exception as exc:
            LOG.exception("Driver failed to snapshot volume %(vol)s as "
                          "%(id)s", {"vol": row.volume_id, "id": snapshot_id})
            self.failed(ctxt, row, SNAP.ERROR, "snapshot", exc,
                         messages.SNAPSHOT_CREATE_FAILED)
            return False
        snapshots_db.snapshot_cas(ctxt, snapshot_id, {"status": SNAP.CREATING},
                                  dict(update, status=SNAP.AVAILABLE,
                                       progress="100%"), **_settling(row))
        LOG.info("Created snapshot %(id)s of volume %(vol)s",
                 {"id": snapshot_id, "vol": row.volume_id})
        return True

    def delete(self, ctxt: RequestContext, snapshot_id: str) -> bool:
        """``deleting`` -> gone (or ``error_deleting``); True when gone."""
        row = self.in_status(ctxt, snapshot_id, SNAP.DELETING)
        if row is None:
            return False
        try:
            self.driver.delete_snapshot(driver_snapshot(row))
        except Exception as exc:
            LOG.exception("Driver failed to delete snapshot %s", snapshot_id)
            self.failed(ctxt, row, SNAP.ERROR_DELETING,
                         "delete the snapshot", exc,
                         messages.SNAPSHOT_DELETE_FAILED)
            return False
        snapshots_db.snapshot_destroy(ctxt, snapshot_id, **_settling(row))
        LOG.info("Deleted snapshot %s", snapshot_id)
        return True

    def revert(self, ctxt: RequestContext, volume_id: str,
               snapshot_id: str | None) -> None:
        """``reverting``/``restoring`` -> ``available`` both; a failure
        leaves the volume ``error`` (its data may be half reverted)."""
        volume = volumes_db.volume_get(ctxt, volume_id)
        if volume.status != STATUS.REVERTING:
            return
        snap = self.in_status(ctxt, snapshot_id or "", SNAP.RESTORING)
        if snap is None or snap.volume_id != volume_id:
            LOG.warning("Volume %(vol)s was reverting, but its snapshot "
                        "%(id)s is no longer restoring; volume in error",
                        {"vol": volume_id, "id": snapshot_id})
            volumes_db.volume_cas(ctxt, volume_id,
                                  {"status": STATUS.REVERTING},
                                  {"status": STATUS.ERROR, "error_reason":
                                   "The snapshot it reverted to is gone."})
            return
        values: dict = {"status": STATUS.AVAILABLE}
        try:
            self.driver.revert_to_snapshot(volume_backend.driver_volume(volume),
                                           driver_snapshot(snap))
        except Exception as exc:
            LOG.exception("Driver failed to revert volume %(vol)s to "
                          "%(id)s", {"vol": volume_id, "id": snapshot_id})
            values = {"status": STATUS.ERROR,
                      "error_reason": self._why("revert the volume", exc)}
        volumes_db.volume_cas(ctxt, volume_id, {"status": STATUS.REVERTING},
                              values)
        snapshots_db.snapshot_cas(ctxt, snap.id,
                                  {"status": SNAP.RESTORING},
                                  {"status": SNAP.AVAILABLE})
        LOG.info("Volume %(vol)s reverted to snapshot %(id)s: %(st)s",
                 {"vol": volume_id, "id": snapshot_id,
                  "st": values["status"]})

    def _why(self, what: str, exc: Exception) -> str:
        return "Backend %s failed to %s: %s" % (self.service_host, what, exc)

    def failed(self, ctxt: RequestContext, row: models.Snapshot,
               failed_status: str, what: str, exc: Exception,
               event: messages.Event | None = None) -> None:
        """The snapshot's status -> ``failed_status``, with the reason; if
        it changed here, ``event`` (if any) for its project."""
        if snapshots_db.snapshot_cas(ctxt, row.id, {"status": row.status},
                                     {"status": failed_status,
                                      "error_reason": self._why(what, exc)},
                                     **_settling(row)) and event:
            messages.record(ctxt, self.message_ttl, event, row.id,
                            row.project_id)

    @staticmethod
    def restoring_of(ctxt: RequestContext, volume_id: str) -> str | None:
        """The snapshot a reverting volume reverts to (None: none is
        ``restoring`` any more)."""
        return next((row.id for row in snapshots_db.snapshots_of_volume(
            ctxt, volume_id) if row.status == SNAP.RESTORING), None)

