"""Snapshot operations: create, show, list, update, delete, metadata, and
the reset/force-delete admin actions.

A snapshot is counted on its volume (``snapshot_count``) in the statement
that makes it, which also checks the volume's status, so a volume being
deleted never gains one and a volume with snapshots is never deleted.
"""

import uuid
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common import quota
from common import rpc
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import snapshots as snapshots_db
from common.db.api import sources as sources_db
from services.api import operations
from services.api.operations import volumes as volume_ops
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
SNAP = constants.SnapshotStatus



class SnapshotOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volumes: volume_ops.VolumeOperations,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volumes = volumes
        self.volume = volume

    def get(self, ctxt: RequestContext,
            snapshot_id: str) -> models.Snapshot:
        """A snapshot ``volume:get_snapshot`` lets the caller see, else
        SnapshotNotFound."""
        return self.volumes.snapshot(ctxt, snapshot_id)

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.Snapshot]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("volume:get_all_snapshots", {"project_id": project})
        rows: list[models.Snapshot] = snapshots_db.snapshot_list(
            ctxt, project_id=project, **kwargs)
        return rows

    def create(self, ctxt: RequestContext, volume_id: str, force: bool = False,
               name: str | None = None, description: str | None = None,
               metadata: dict[str, str] | None = None) -> models.Snapshot:
        """Write a ``creating`` snapshot and cast it to the volume's node.

        :raises InvalidVolume: the volume is not ``available`` (or, with
            ``force``, ``in-use``), or is migrating.
        """
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can("volume:create_snapshot", {"project_id": volume.project_id})
        allowed = (states.VOLUME_SNAPSHOTTABLE_FORCED if force
                   else states.VOLUME_SNAPSHOTTABLE)
        if volume.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume %s status must be available%s, but current "
                "status is: %s." % (volume_id, " or in-use" if force else "",
                                    volume.status))
        row = self.insert(ctxt, volume, SNAP.CREATING, allowed, name,
                          description, metadata)
        try:
            self.volume.create_snapshot(ctxt, row.id, volume.host)
        except rpc.ServiceTooOld:
            snapshots_db.snapshot_destroy(ctxt, row.id)
            raise
        LOG.info("Snapshot %(id)s of volume %(vol)s accepted",
                 {"id": row.id, "vol": volume_id})
        return row

    def insert(self, ctxt: RequestContext, volume: Any, status: str,
               allowed: tuple[str, ...], name: str | None,
               description: str | None,
               metadata: dict[str, str] | None) -> models.Snapshot:
        """Insert a ``status`` snapshot of ``volume``, counted on it, with
        the quota check, if the volume is still in an ``allowed`` status
        and as it was read."""
        change = quota.Change(volume.volume_type.name, snapshots=1,
                              gigabytes=volume.size)
        row: models.Snapshot = snapshots_db.snapshot_create(ctxt, {
            "id": str(uuid.uuid4()), "volume_id": volume.id,
            "project_id": volume.project_id, "user_id": ctxt.user_id,
            "status": status, "progress": "0%",
            "volume_size": volume.size, "display_name": name,
            "display_description": description,
        }, metadata, volume_expected={
            "status": allowed, "migration_status": states.MIGRATION_SETTLED,
            # what the snapshot and its quota were judged by
            "size": volume.size, "volume_type_id": volume.volume_type_id},
            check=self.volumes.quota_check(volume.project_id,
                                           volume.volume_type_id, change))
        return row

    def update(self, ctxt: RequestContext, snapshot_id: str,
               values: dict[str, object]) -> models.Snapshot:
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume:update_snapshot", {"project_id": row.project_id})
        updated: models.Snapshot = snapshots_db.snapshot_update(
            ctxt, snapshot_id, values)
        return updated

    def delete(self, ctxt: RequestContext, snapshot_id: str,
               force: bool = False) -> None:
        """``deleting``, then the volume service removes it.

        With ``force``, any status but ``restoring`` or ``backing-up``
        (``states.SNAPSHOT_BUSY``): a ``deleting`` one
        is cast again (its node deletes it once; a cast that finds it in
        hand or gone does nothing), as Cinder's force delete does.

        :raises InvalidSnapshot: not ``available`` or ``error`` (any status
            but ``restoring`` with ``force``).
        """
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume_extension:snapshot_admin_actions:force_delete"
                 if force else "volume:delete_snapshot",
                 {"project_id": row.project_id})
        if row.group_snapshot_id:
            raise exception.InvalidSnapshot(
                reason="Snapshot %s is part of group snapshot %s; delete "
                       "the group snapshot instead." % (
                           snapshot_id, row.group_snapshot_id))
        expected = ({"status": states.SNAPSHOT_DELETABLE} if not force
                    else {"status": row.status})
        if row.status in states.SNAPSHOT_BUSY or \
                not snapshots_db.snapshot_cas(
                    ctxt, snapshot_id, expected, {"status": SNAP.DELETING},
                    check=lambda session: sources_db.refuse_if_copied(
                        session, "snapshot", snapshot_id)):
            raise exception.InvalidSnapshot(
                reason="Snapshot status must be %s, not %s" % (
                    "available or error" if not force
                    else "other than restoring or backing-up", row.status))
        try:
            self.volume.delete_snapshot(
                ctxt, snapshot_id,
                operations.placed(row.volume.host, row.volume_id))
        except rpc.ServiceTooOld:
            snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                      {"status": SNAP.DELETING},
                                      {"status": row.status})
            raise
        LOG.info("Snapshot %s deleting", snapshot_id)

    def reset_status(self, ctxt: RequestContext, snapshot_id: str,
                     status: str) -> None:
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume_extension:snapshot_admin_actions:reset_status",
                 {"project_id": row.project_id})
        if status not in states.SNAPSHOT_STATUSES:
            raise exception.InvalidInput(
                reason="Invalid status %r for a snapshot" % status)
        snapshots_db.snapshot_update(ctxt, snapshot_id, {"status": status})

    def update_status(self, ctxt: RequestContext, snapshot_id: str,
                      status: str, progress: str | None) -> None:
        """Cinder's ``os-update_snapshot_status``: a ``creating`` snapshot
        may become ``available`` or ``error``, a ``deleting`` one
        ``error_deleting``; ``progress`` is a percentage such as ``80%``.

        :raises Invalid: another status, or a bad progress (400).
        """
        row = self.get(ctxt, snapshot_id)
        ctxt.can("snapshot_extension:snapshot_actions:update_snapshot_status",
                 {"project_id": row.project_id})
        allowed = states.SNAPSHOT_STATUS_UPDATES.get(row.status)
        if allowed is None:
            raise exception.Invalid("Snapshot status %s not allowed for "
                                    "update_snapshot_status" % row.status)
        if status not in allowed:
            raise exception.Invalid(
                "Provided snapshot status %s not allowed for snapshot with "
                "status %s." % (status, row.status))
        values = {"status": status}
        if progress:
            values["progress"] = _percentage(progress)
        if not snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                         {"status": row.status}, values):
            raise exception.Invalid("Snapshot %s changed status meanwhile; "
                                    "try again." % snapshot_id)

    # -- metadata -------------------------------------------------------------
    def metadata(self, ctxt: RequestContext,
                 snapshot_id: str) -> dict[str, str | None]:
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume:get_snapshot_metadata",
                 {"project_id": row.project_id})
        return snapshots_db.metadata_of(row)

    def set_metadata(self, ctxt: RequestContext, snapshot_id: str,
                     metadata: dict[str, str], replace: bool,
                     item: bool = False) -> dict[str, str | None]:
        """Merge ``metadata`` into the snapshot's, or replace it all
        (``item``, one key through ``/metadata/{key}``, is a merge)."""
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume:update_snapshot_metadata",
                 {"project_id": row.project_id})
        row = snapshots_db.snapshot_update(ctxt, snapshot_id, {}, metadata,
                                           delete_metadata=replace)
        return snapshots_db.metadata_of(row)

    def delete_metadata(self, ctxt: RequestContext, snapshot_id: str,
                        key: str) -> None:
        row = self.get(ctxt, snapshot_id)
        ctxt.can("volume:delete_snapshot_metadata",
                 {"project_id": row.project_id})
        snapshots_db.snapshot_metadata_delete(ctxt, snapshot_id, key)



def _percentage(progress: str) -> str:
    """``progress`` if it is an integer percentage from 0% to 100%."""
    number = progress[:-1]
    if not (progress.endswith("%") and number.isdigit()
            and 0 <= int(number) <= 100):
        raise exception.Invalid("progress must be an integer percentage")
    return progress
