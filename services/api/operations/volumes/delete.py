"""The delete path: one compare-and-swap to ``deleting`` (its snapshots
with it for a cascade, in the same transaction), then the cast to the
volume service, or the row destroyed when the volume was never placed."""

from typing import Any

import sqlalchemy as sa
from oslo_log import log as logging
from sqlalchemy import orm

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db.api import snapshots as snapshots_db
from common.db.api import sources as sources_db
from common.db.api import volumes as volumes_db
from services.api.operations.volumes import base

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus

_DELETE_REFUSED = ("Volume %sstatus must be available or error or "
                   "error_restoring or error_extending or error_managing and "
                   "must not be migrating, attached, belong to a group, have "
                   "snapshots, awaiting a transfer, or be disassociated from "
                   "snapshots after volume transfer.")


class Deleting(base.VolumeBase):
    """``DELETE /volumes/{id}`` and ``os-force_delete``."""

    def delete(self, ctxt: RequestContext, volume_id: str, force: bool = False,
               rule: str | None = None, cascade: bool = False) -> None:
        """``deleting``, then the volume service removes it.

        The compare-and-swap expects no attachment row at all, so a
        reservation racing the delete either comes first (and the delete is
        refused) or finds the volume ``deleting``.  With ``cascade`` its
        snapshots become ``deleting`` in the same transaction (each
        ``available`` or ``error``, or with ``force`` anything but
        ``restoring``) and the volume service deletes them first.

        :raises InvalidVolume: wrong status, attachments, migrating, or a
            snapshot that cannot go.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can(rule or ("volume:force_delete" if force
                          else "volume:delete"),
                 {"project_id": row.project_id})
        if row.attachment_count:
            raise exception.InvalidVolume(
                reason="Volume %s has %d attachment(s); a volume with "
                       "attachments cannot be deleted. Delete the "
                       "attachments first." % (volume_id,
                                               row.attachment_count))
        snaps = self._snapshots_going(ctxt, row, force, cascade)
        expected: dict[str, object] = {"attachment_count": 0,
                          "snapshot_count": len(snaps),
                          "migration_status": states.MIGRATION_SETTLED,
                          "group_id": None}
        if not force:
            expected["status"] = states.VOLUME_DELETABLE

        def check(session: orm.Session | sa.engine.Connection) -> None:
            sources_db.refuse_if_copied(session, "volume", volume_id)
            for snapshot_id in snaps:
                sources_db.refuse_if_copied(session, "snapshot", snapshot_id)
        if not volumes_db.volume_cas(
                ctxt, volume_id, expected, {"status": STATUS.DELETING},
                check=check, then=lambda session: snapshots_db.all_deleting(
                    session, snaps, force)):
            raise exception.InvalidVolume(
                reason=_DELETE_REFUSED % ("" if not force else " "))
        if not states.backend_may_hold(row.host):
            # Never placed: no volume service is needed.
            volumes_db.volume_destroy(ctxt, volume_id)
        else:
            self.volume.delete_volume(ctxt, volume_id, row.host,
                                      cascade=bool(snaps))
        LOG.info("Volume %s deleting", volume_id)

    def _snapshots_going(self, ctxt: RequestContext, row: Any, force: bool,
                         cascade: bool) -> list[str]:
        """The ids of the snapshots a delete takes with the volume (a
        cascade's), read only when it has some.

        :raises InvalidVolume: it has snapshots that do not go with it.
        """
        owned = snapshots_db.snapshots_of_volume(
            ctxt, row.id) if cascade and row.snapshot_count else []
        # NOTE(ashlar): snapshots left with the giver of a volume transfer
        # (no_snapshots) are not the volume's project's to delete, and a
        # group snapshot's member goes only with its group snapshot.
        snaps = [s.id for s in owned] if all(
            s.project_id == row.project_id and s.group_snapshot_id is None
            for s in owned) else []
        if row.snapshot_count and not snaps:
            raise exception.InvalidVolume(
                reason=_DELETE_REFUSED % ("" if not force else " "))
        if snaps:
            self.volume.require(self.volume.CASCADE_VERSION,
                                "delete_volume (cascade)")
        return snaps
