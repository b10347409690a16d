"""Actions on an existing volume that leave it where it is
(``POST /volumes/{id}/action``): extend, revert to a snapshot, bootable,
read-only, the legacy reserve and unreserve, and the admin's
reset-status.  Each is a compare-and-swap on the value read, then, where
a node has work to do, a cast to it."""

from typing import Any

from oslo_log import log as logging

from common import constants
from common import exception
from common import quota
from common import rpc
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.api.operations import attachments as attachment_ops
from services.api.operations.volumes import base

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus


class Actions(base.VolumeBase):
    """Extend, revert, bootable, read-only, reserve, reset-status."""

    def extend(self, ctxt: RequestContext, volume_id: str, new_size: int,
               attached_ok: bool = False) -> None:
        """``os-extend``: ``available`` (or ``in-use`` from 3.42) ->
        ``extending``; the volume service grows it.

        :raises InvalidInput: the size does not grow.
        :raises InvalidVolume: the status does not allow it.
        """
        row = self.get(ctxt, volume_id)
        target = {"project_id": row.project_id}
        ctxt.can("volume:extend", target)
        if new_size <= row.size:
            raise exception.InvalidInput(
                reason="New size for extend must be greater than current "
                       "size. (current: %s, extended: %s)."
                       % (row.size, new_size))
        allowed = (states.VOLUME_EXTENDABLE_ATTACHED if attached_ok
                   else states.VOLUME_EXTENDABLE)
        if attached_ok and row.status == STATUS.IN_USE:
            ctxt.can("volume:extend_attached_volume", target)
        if row.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume %s status must be %s to extend, but the "
                       "current status is %s." % (
                           volume_id, " or ".join(allowed), row.status))
        change = quota.Change(row.volume_type.name,
                              gigabytes=new_size - row.size, size=new_size)
        self._cas(row, {"status": row.status, "size": row.size},
                  {"status": STATUS.EXTENDING, "previous_status": row.status,
                   "pending_size": new_size}, "an extend", ctxt,
                  check=self.quota_check(row.project_id, row.volume_type_id,
                                         change))
        self.volume.extend_volume(ctxt, volume_id, row.host, new_size)
        LOG.info("Volume %(id)s extending to %(size)s GiB",
                 {"id": volume_id, "size": new_size})

    def revert(self, ctxt: RequestContext, volume_id: str,
               snapshot_id: str) -> None:
        """``revert`` (3.40): an ``available`` volume to its latest
        snapshot; ``reverting`` and ``restoring`` until the node is done.

        :raises InvalidVolume: not available, or the snapshot is not its.
        :raises InvalidSnapshot: not its latest snapshot, or not available.
        :raises Invalid: the volume was extended since the snapshot.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:revert_to_snapshot", {"project_id": row.project_id})
        snap, count = self._latest_snapshot(ctxt, row, snapshot_id)
        if not snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                         {"status": SNAP.AVAILABLE},
                                         {"status": SNAP.RESTORING}):
            raise exception.InvalidSnapshot(
                reason="Snapshot %s changed status." % snapshot_id)
        try:
            # NOTE(ashlar): the count makes "latest" hold: a snapshot
            # made since it was read fails the swap; so does an extend.
            self._cas(row, {"status": STATUS.AVAILABLE,
                            "attachment_count": 0,
                            "migration_status": states.MIGRATION_SETTLED,
                            "snapshot_count": count,
                            "size": snap.volume_size},
                      {"status": STATUS.REVERTING}, "a revert", ctxt)
        except exception.InvalidVolume:
            snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                      {"status": SNAP.RESTORING},
                                      {"status": SNAP.AVAILABLE})
            raise
        try:
            self.volume.revert_to_snapshot(ctxt, volume_id, row.host,
                                           snapshot_id)
        except rpc.ServiceTooOld:
            volumes_db.volume_cas(ctxt, volume_id,
                                  {"status": STATUS.REVERTING},
                                  {"status": STATUS.AVAILABLE})
            snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                      {"status": SNAP.RESTORING},
                                      {"status": SNAP.AVAILABLE})
            raise
        LOG.info("Volume %(id)s reverting to snapshot %(snap)s",
                 {"id": volume_id, "snap": snapshot_id})

    def _latest_snapshot(self, ctxt: RequestContext, row: Any,
                         snapshot_id: str) -> tuple[models.Snapshot, int]:
        """The snapshot a revert goes back to, and how many the volume
        has; Cinder's refusals.

        :raises InvalidVolume: the snapshot is not the volume's.
        :raises InvalidSnapshot: not its latest snapshot, or not available.
        :raises Invalid: the volume was extended since the snapshot.
        """
        volume_id = row.id
        snap = self.snapshot(ctxt, snapshot_id)
        if snap.volume_id != volume_id:
            raise exception.InvalidVolume(
                reason="Snapshot %s is not a snapshot of volume %s."
                % (snapshot_id, volume_id))
        snaps = snapshots_db.snapshots_of_volume(ctxt, volume_id)
        latest = snaps[-1]
        if latest.id != snapshot_id or snap.status != SNAP.AVAILABLE:
            raise exception.InvalidSnapshot(
                reason="Snapshot %s is not the latest one of volume %s, or "
                "not available." % (snapshot_id, volume_id))
        if row.size != snap.volume_size:
            raise exception.Invalid(
                "Can't revert volume %s to its latest snapshot %s. The "
                "volume size must be equal to the snapshot size."
                % (volume_id, snapshot_id))
        return snap, len(snaps)

    def set_bootable(self, ctxt: RequestContext, volume_id: str,
                     bootable: bool) -> None:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        volumes_db.volume_update(ctxt, volume_id, {"bootable": bootable})

    def update_readonly_flag(self, ctxt: RequestContext, volume_id: str,
                             readonly: bool) -> None:
        """Read-only applies to attachments made afterwards (``ro`` mode and
        ``access_mode``); only an ``available`` volume may change it."""
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update_readonly_flag",
                 {"project_id": row.project_id})
        if row.status != STATUS.AVAILABLE:
            raise exception.InvalidVolume(
                reason="Volume status must be available to update readonly "
                       "flag.")
        self._cas(row, {"status": STATUS.AVAILABLE},
                  {"readonly": readonly}, "a read-only change", ctxt)

    def reserve(self, ctxt: RequestContext, volume_id: str) -> None:
        """Legacy ``os-reserve``: ``available`` (a multiattach volume also
        ``in-use``) -> ``attaching``, with no attachment row, as in Cinder.

        :raises InvalidVolume: the status does not allow it.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_actions:reserve",
                 {"project_id": row.project_id})
        allowed = (states.VOLUME_LEGACY_RESERVABLE_MULTIATTACH
                   if row.multiattach else states.VOLUME_LEGACY_RESERVABLE)
        if row.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume status must be %s to reserve, but the status "
                       "is %s." % (" or ".join(allowed), row.status))
        self._cas(row, {"status": row.status,
                        "multiattach": row.multiattach},
                  {"status": STATUS.ATTACHING}, "a reserve", ctxt)

    def unreserve(self, ctxt: RequestContext, volume_id: str) -> None:
        """Legacy ``os-unreserve``: ``attaching`` -> ``in-use`` when the
        volume has attachments, else ``available``; any other status is
        left alone (Cinder: nothing to do)."""
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_actions:unreserve",
                 {"project_id": row.project_id})
        status = STATUS.IN_USE if row.attachment_count else STATUS.AVAILABLE
        if not volumes_db.volume_cas(
                ctxt, volume_id, {"status": STATUS.ATTACHING,
                                  "attachment_count": row.attachment_count},
                {"status": status}):
            LOG.debug("Volume %s was not reserved: nothing to unreserve",
                      volume_id)

    def reset_status(self, ctxt: RequestContext, volume_id: str,
                     attachments: attachment_ops.AttachmentOperations,
                     status: str | None = None,
                     attach_status: str | None = None,
                     migration_status: str | None = None) -> None:
        """Admin ``os-reset_status``.

        ``attach_status: detached`` force-deletes every attachment, each
        terminating its own backend connection (Cinder only drops the rows).

        :param attachments: the AttachmentOperations.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_admin_actions:reset_status",
                 {"project_id": row.project_id})
        if status == STATUS.DELETING:
            raise exception.InvalidVolume(reason="Cannot reset-state to "
                                                 "deleting")
        if status == STATUS.IN_USE and not row.attachment_count:
            raise exception.InvalidVolume(
                reason="Cannot reset-state to in-use because volume does not "
                       "have any attachments.")
        if attach_status == constants.AttachStatus.DETACHED:
            attachments.delete_all(ctxt, volume_id)
            row = volumes_db.volume_get(ctxt, volume_id)
        values: dict[str, object] = {}
        if status:
            # An extend or retype in flight is over, whatever it did.
            values.update(status=status, pending_size=None,
                          pending_type_id=None)
        if attach_status:
            values["attach_status"] = attach_status
        if migration_status:
            values["migration_status"] = (
                None if migration_status.lower() == constants.MigrationStatus.NONE
                else migration_status)
        if values:
            self._cas(row, {"status": row.status,
                            "attach_status": row.attach_status}, values,
                      "a reset", ctxt)
        LOG.info("Volume %(id)s reset to %(values)s",
                 {"id": volume_id, "values": values})
