"""Generic volume group operations: create (also from a group or a group
snapshot), show, list, update (name, description, volumes in and out),
delete (with its volumes), and reset the status.

A generic group lives in the database only, as Cinder's generic groups on
drivers without group support: a group is ``available`` once made, its
volumes are placed and made as any volume, and its snapshots are one
snapshot of each volume (``group_snapshots``).  Creates are judged at once
as a volume's: a volume type no backend can satisfy refuses the group.
"""

import uuid
from typing import Any, TypedDict

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common import states
from common import zones
from common.context import RequestContext
from common.db import models
from common.db.api import group_snapshots as gsnaps_db
from common.db.api import groups as groups_db
from common.db.api import quotas as quotas_db
from common.db.api import volumes as volumes_db
from services.api import operations
from services.api.operations import group_types as gtype_ops
from services.api.operations import volumes as volume_ops
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
GRP = constants.GroupStatus


def _ids(value: str | None) -> list[str]:
    """Cinder's comma-separated volume ids."""
    return [item for item in (value or "").strip(",").split(",") if item]


class _Member(TypedDict, total=False):
    """What ``VolumeOperations.create`` is given for a volume of a group
    made from a source: a copy of one of its snapshots or volumes."""

    snapshot_id: str
    source_volid: str
    name: str | None
    volume_type: str


class GroupOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volumes: volume_ops.VolumeOperations,
                 group_types: gtype_ops.GroupTypeOperations,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volumes = volumes
        self.group_types = group_types
        self.volume = volume

    def get(self, ctxt: RequestContext, group_id: str) -> models.Group:
        """A group ``group:get`` lets the caller see, else GroupNotFound."""
        return self.volumes.group(ctxt, group_id)

    def volumes_of(self, ctxt: RequestContext,
                   group_id: str) -> list[models.Volume]:
        volumes: list[models.Volume] = groups_db.volumes_of(ctxt, group_id)
        return volumes

    def create(self, ctxt: RequestContext, name: str | None,
               description: str | None, group_type: str,
               volume_types: list[str], availability_zone: str | None = None,
               status: str = GRP.AVAILABLE,
               **source: str | None) -> models.Group:
        """Write the group, ``available`` (``creating`` when made from a
        source).

        :raises GroupTypeNotFound: (404)
        :raises VolumeTypeNotFoundByName: (404)
        :raises InvalidGroupType: a type no backend can serve (400).
        :raises UnsatisfiableVolumeType: a volume type no fresh pool can
            place (400).
        :raises GroupLimitExceeded: the project has its quota of groups
            (413).
        """
        project = ctxt.require_project()
        ctxt.can("group:create", {"project_id": project})
        gtype = self.group_types.resolve(ctxt, group_type)
        gtype_ops.check_usable(gtype)
        resolved = [self.volumes.resolve_type(ctxt, name_or_id)
                    for name_or_id in volume_types]
        zone = zones.requested(ctxt, self.conf, availability_zone,
                               exception.InvalidInput)
        type_ids = []
        for vtype, specs in resolved:
            self.volumes.check_place(ctxt, None, vtype, specs, 1, (zone,))
            type_ids.append(vtype.id)
        row: models.Group = groups_db.group_create(ctxt, {
            "id": str(uuid.uuid4()), "project_id": project,
            "user_id": ctxt.user_id, "name": name,
            "description": description, "status": status,
            "availability_zone": zone,
            "group_type_id": gtype.id, **source}, list(dict.fromkeys(
                type_ids)), lambda session: quotas_db.enforce_groups(
                    session, self.conf, project))
        LOG.info("Group %(id)s created (%(status)s)",
                 {"id": row.id, "status": status})
        return row

    def create_from_source(self, ctxt: RequestContext, name: str | None,
                           description: str | None,
                           group_snapshot_id: str | None,
                           source_group_id: str | None) -> models.Group:
        """A group of copies of a group's volumes, or of a group
        snapshot's snapshots: ``creating`` while its volumes are written
        and cast, then ``available`` (``error`` if one was refused).

        :raises InvalidInput: no source, or both.
        :raises InvalidGroup / InvalidGroupSnapshot: a source not
            available, or empty.
        """
        if bool(group_snapshot_id) == bool(source_group_id):
            raise exception.InvalidInput(
                reason="Either 'group_snapshot_id' or 'source_group_id' must "
                       "be provided to create group %s from source." % name)
        members: list[_Member]
        if group_snapshot_id:
            gsnap: models.GroupSnapshot = gsnaps_db.gsnap_get(
                ctxt, group_snapshot_id)
            operations.visible(ctxt, gsnap, "group:get_group_snapshot",
                               exception.GroupSnapshotNotFound(
                                   group_snapshot_id=group_snapshot_id))
            if gsnap.status != constants.GroupSnapshotStatus.AVAILABLE:
                raise exception.InvalidGroupSnapshot(
                    reason="Group snapshot %s must be available, not %s." % (
                        group_snapshot_id, gsnap.status))
            source = self.get(ctxt, gsnap.group_id)
            members = [{"snapshot_id": snap.id, "name": snap.display_name,
                        "volume_type": snap.volume.volume_type_id}
                       for snap in gsnaps_db.members(ctxt, gsnap.id)]
        elif source_group_id:  # one of the two, as checked above
            source = self.get(ctxt, source_group_id)
            if source.status != GRP.AVAILABLE:
                raise exception.InvalidGroup(
                    reason="Source group %s must be available, not %s." % (
                        source_group_id, source.status))
            members = [{"source_volid": vol.id, "name": vol.display_name,
                        "volume_type": vol.volume_type_id}
                       for vol in groups_db.volumes_of(ctxt, source.id)]
        if not members:
            raise exception.InvalidGroup(
                reason="%s is empty. No group will be created." % (
                    "Group snapshot" if group_snapshot_id else "Source Group"))
        row = self.create(ctxt, name, description, source.group_type_id,
                          groups_db.type_ids(source),
                          source.availability_zone, status=GRP.CREATING,
                          group_snapshot_id=group_snapshot_id,
                          source_group_id=source_group_id)
        self._fill(ctxt, row, members)
        return row

    def _fill(self, ctxt: RequestContext, row: models.Group,
              members: list[_Member]) -> None:
        into = volume_ops.Into(row, (GRP.CREATING,))
        status = GRP.AVAILABLE
        try:
            for member in members:
                self.volumes.create(ctxt, None, group=into, **member)
        except Exception:
            status = GRP.ERROR
            raise
        finally:
            groups_db.group_cas(ctxt, row.id, {"status": GRP.CREATING},
                                {"status": status})
            row.status = status

    def update(self, ctxt: RequestContext, group_id: str, name: str | None,
               description: str | None, add_volumes: str | None,
               remove_volumes: str | None) -> None:
        """Rename the group and move volumes in and out of it, at once.

        :raises InvalidVolume: a volume both added and removed, or one that
            cannot move (``groups.group_update``).
        :raises InvalidGroup: nothing to change, or volumes to move while
            the group is not available.
        """
        row = self.get(ctxt, group_id)
        ctxt.can("group:update", {"project_id": row.project_id})
        add, remove = _ids(add_volumes), _ids(remove_volumes)
        both = sorted(set(add) & set(remove))
        if both:
            raise exception.InvalidVolume(
                reason="UUIDs %s are in both add and remove volume list."
                % both)
        members = {vol.id for vol in groups_db.volumes_of(ctxt, group_id)}
        add = [volume_id for volume_id in add if volume_id not in members]
        values = {key: value for key, value in (("name", name),
                                                ("description", description))
                  if value is not None and value != getattr(row, key)}
        if not (values or add or remove):
            raise exception.InvalidGroup(
                reason="Cannot update group %s because no valid name, "
                       "description, add_volumes, or remove_volumes were "
                       "provided." % group_id)
        groups_db.group_update(ctxt, group_id, values, add, remove)
        LOG.info("Group %(id)s updated: %(add)d volume(s) in, %(rm)d out",
                 {"id": group_id, "add": len(add), "rm": len(remove)})

    def delete(self, ctxt: RequestContext, group_id: str,
               delete_volumes: bool) -> None:
        """``deleting``, with its volumes; the volume services remove them,
        and the last removal removes the group.

        :raises InvalidGroup: see ``groups.group_delete``.
        """
        row = self.get(ctxt, group_id)
        ctxt.can("group:delete", {"project_id": row.project_id})
        expected = ({} if delete_volumes
                    else {"status": states.GROUP_DELETABLE})
        for vol in groups_db.group_delete(ctxt, group_id, expected,
                                          delete_volumes):
            if states.backend_may_hold(vol.host):
                self.volume.delete_volume(ctxt, vol.id, vol.host)
            else:
                volumes_db.volume_destroy(ctxt, vol.id)
        LOG.info("Group %s deleting", group_id)

    def reset_status(self, ctxt: RequestContext, group_id: str,
                     status: str) -> None:
        row = self.get(ctxt, group_id)
        ctxt.can("group:reset_status", {"project_id": row.project_id})
        if status not in states.GROUP_STATUSES:
            raise exception.InvalidGroup(
                reason="Invalid status %r for a group." % status)
        groups_db.group_cas(ctxt, group_id, {}, {"status": status})

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.Group]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("group:get_all", {"project_id": project})
        rows: list[models.Group] = groups_db.group_list(
            ctxt, project_id=project, **kwargs)
        return rows
