"""Group snapshot operations: create (a snapshot of each volume of the
group, in one transaction), show, list, delete, and reset the status.

The volume services make and remove the member snapshots as any snapshot;
the group snapshot follows its members in the same transactions
(``common.db.api.group_snapshots.settle``).
"""

import uuid
from typing import Any

from oslo_log import log as logging

from common import constants
from common import exception
from common import quota
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import group_snapshots as gsnaps_db
from common.db.api import groups as groups_db
from services.api import operations
from services.api.operations import groups as group_ops
from services.api.operations import volumes as volume_ops
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
SNAP = constants.SnapshotStatus
GSNAP = constants.GroupSnapshotStatus

class GroupSnapshotOperations:
    def __init__(self, groups: group_ops.GroupOperations,
                 volumes: volume_ops.VolumeOperations,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.groups = groups
        self.volumes = volumes
        self.volume = volume

    def get(self, ctxt: RequestContext,
            gsnap_id: str) -> models.GroupSnapshot:
        row: models.GroupSnapshot = gsnaps_db.gsnap_get(ctxt, gsnap_id)
        return operations.visible(
            ctxt, row, "group:get_group_snapshot",
            exception.GroupSnapshotNotFound(group_snapshot_id=gsnap_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.GroupSnapshot]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("group:get_all_group_snapshots", {"project_id": project})
        rows: list[models.GroupSnapshot] = gsnaps_db.gsnap_list(
            ctxt, project_id=project, **kwargs)
        return rows

    def _member(self, ctxt: RequestContext, vol: models.Volume,
                name: str | None,
                description: str | None) -> gsnaps_db.Member:
        change = quota.Change(vol.volume_type.name, snapshots=1,
                              gigabytes=vol.size)
        return ({"id": str(uuid.uuid4()), "volume_id": vol.id,
                 "project_id": vol.project_id, "user_id": ctxt.user_id,
                 "status": SNAP.CREATING, "progress": "0%",
                 "volume_size": vol.size, "display_name": name,
                 "display_description": description},
                {"status": states.VOLUME_SNAPSHOTTABLE_FORCED,
                 "migration_status": states.MIGRATION_SETTLED,
                 "group_id": vol.group_id, "size": vol.size,
                 "volume_type_id": vol.volume_type_id},
                self.volumes.quota_check(vol.project_id, vol.volume_type_id,
                                         change))

    def create(self, ctxt: RequestContext, group_id: str, name: str | None,
               description: str | None) -> models.GroupSnapshot:
        """Write the group snapshot and a ``creating`` snapshot of each
        volume of the group, and cast each to its volume's node.

        :raises InvalidGroup: the group is not available.
        :raises InvalidVolume: a volume is not available or in-use.
        :raises QuotaError: the snapshots exceed the project's quota.
        """
        group = self.groups.get(ctxt, group_id)
        ctxt.can("group:create_group_snapshot",
                 {"project_id": group.project_id})
        members = [self._member(ctxt, vol, name, description)
                   for vol in groups_db.volumes_of(ctxt, group_id)]
        row: models.GroupSnapshot = gsnaps_db.gsnap_create(ctxt, {
            "id": str(uuid.uuid4()), "group_id": group_id,
            "project_id": group.project_id, "user_id": ctxt.user_id,
            "name": name, "description": description,
            "status": GSNAP.CREATING if members else GSNAP.AVAILABLE,
            "group_type_id": group.group_type_id}, members)
        for snap in gsnaps_db.members(ctxt, row.id):
            self.volume.create_snapshot(
                ctxt, snap.id, operations.placed(snap.volume.host,
                                                 snap.volume_id))
        LOG.info("Group snapshot %(id)s of group %(group)s: %(n)d "
                 "snapshot(s)", {"id": row.id, "group": group_id,
                                 "n": len(members)})
        return row

    def delete(self, ctxt: RequestContext, gsnap_id: str) -> None:
        """``deleting``, with its snapshots; the volume services remove
        them, and the last removal removes the group snapshot."""
        row = self.get(ctxt, gsnap_id)
        ctxt.can("group:delete_group_snapshot",
                 {"project_id": row.project_id})
        for snap in gsnaps_db.gsnap_delete(ctxt, gsnap_id):
            self.volume.delete_snapshot(
                ctxt, snap.id, operations.placed(snap.volume.host,
                                                 snap.volume_id))
        LOG.info("Group snapshot %s deleting", gsnap_id)

    def reset_status(self, ctxt: RequestContext, gsnap_id: str,
                     status: str) -> None:
        row = self.get(ctxt, gsnap_id)
        ctxt.can("group:reset_group_snapshot_status",
                 {"project_id": row.project_id})
        if status not in states.GROUP_SNAPSHOT_STATUSES:
            raise exception.InvalidGroupSnapshot(
                reason="Invalid status %r for a group snapshot." % status)
        gsnaps_db.gsnap_cas(ctxt, gsnap_id, {}, {"status": status})
