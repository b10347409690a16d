"""The create path: the source a volume copies, the group it joins, its
size, type and zones, the early check, then one transaction that checks
the quota (holding the source and the group) and inserts the ``creating``
row, and the cast to the scheduler or to the source's node."""

import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from oslo_log import log as logging
from sqlalchemy import orm

from common import attach_rules
from common import constants
from common import exception
from common import extra_specs
from common import quota
from common import rpc
from common import zones
from common.context import RequestContext
from common.db import models
from common.db.api import groups as groups_db
from common.db.api import volumes as volumes_db
from services.api.operations import sources
from services.api.operations.volumes import base

LOG = logging.getLogger(__name__)

_MULTIATTACH_REMOVED = (
    "multiattach parameter has been removed. The default behavior is to use "
    "multiattach enabled volume types. Contact your administrator to create "
    "a multiattach enabled volume type and use it to create multiattach "
    "volumes.")


class Into:
    """The group a new volume joins, and the group statuses that may take
    it (``available``; ``creating`` for a group made from a source)."""

    def __init__(self, group: models.Group,
                 statuses: tuple[str, ...]) -> None:
        self.group_id = group.id
        self.type_ids = groups_db.type_ids(group)
        self.zone: str | None = group.availability_zone
        self.statuses = statuses

    def check_type(self, type_id: str) -> None:
        if type_id not in self.type_ids:
            raise exception.InvalidInput(
                reason="Invalid volume_type provided: %s. The group %s does "
                       "not support this volume type." % (type_id,
                                                          self.group_id))

    def holding(self, check: volumes_db.Check) -> volumes_db.Check:
        """``check``, after locking the group in a status that takes the
        volume, in the transaction that inserts it."""
        def held(session: orm.Session | sa.engine.Connection) -> None:
            groups_db.hold(session, self.group_id, self.statuses)
            check(session)
        return held


class Creating(base.VolumeBase):
    """``POST /volumes`` (and a group's members): the create path."""

    def create(self, ctxt: RequestContext, size: int | None,
               name: str | None = None, description: str | None = None,
               volume_type: str | None = None,
               availability_zone: str | None = None,
               metadata: dict[str, str] | None = None,
               multiattach: bool = False,
               snapshot_id: str | None = None, source_volid: str | None = None,
               group: Into | str | None = None) -> Any:
        """Write a ``creating`` row and cast it to the scheduler, or, made
        from a snapshot or a volume, to the source's volume node.

        :param group: the group the volume joins: an ``Into``, or the id
            of an ``available`` group the caller may see.  The volume goes
            to the group's zone.
        :raises GroupNotFound:
        :raises InvalidInput: the removed ``multiattach`` flag was set, or
            two sources, or a type the group does not take.
        :raises Invalid: no size and no source.
        :raises InvalidGroup: the group is not in a status to take it.
        :raises InvalidAvailabilityZone: no volume service is in the zone,
            or the type does not allow it.
        :raises InvalidTypeAvailabilityZones: no volume service is in any
            zone the type allows.
        :raises UnsatisfiableVolumeType: no fresh pool could place the type.
        :raises UnsatisfiableSource: the source's pool cannot take it.
        """
        project = ctxt.require_project()
        ctxt.can("volume:create", {"project_id": project})
        if multiattach:
            raise exception.InvalidInput(reason=_MULTIATTACH_REMOVED)
        source = self._source(ctxt, snapshot_id, source_volid)
        if isinstance(group, str):
            group = Into(self.group(ctxt, group),
                         (constants.GroupStatus.AVAILABLE,))
        size = sources.checked_size(size, source)
        # NOTE(ashlar): the type, and the services table when the early
        # check has to read it, are single statements on the autocommit
        # pool: no transaction's round trips on the path of every create.
        vtype, specs = self.resolve_type(
            ctxt, volume_type or (source.volume_type_id if source else None))
        allowed = zones.for_volume(ctxt, self.conf, availability_zone, specs,
                                   source=source,
                                   group_zone=group.zone if group else None)
        encrypted = attach_rules.is_encrypted(specs)
        is_multiattach = self.multiattach_of(ctxt, project, specs, encrypted)
        self.check_place(ctxt, source, vtype, specs, size, allowed)
        if group is not None:
            group.check_type(vtype.id)
        row = self._insert(ctxt, vtype.name, {
            "id": str(uuid.uuid4()), "project_id": project,
            "user_id": ctxt.user_id, "display_name": name,
            "display_description": description, "size": size,
            "status": constants.VolumeStatus.CREATING,
            "attach_status": constants.AttachStatus.DETACHED,
            "availability_zone": allowed[0] if len(allowed) == 1 else None,
            "volume_type_id": vtype.id, "multiattach": is_multiattach,
            "encrypted": encrypted, **sources.columns(source),
            "group_id": group and group.group_id,
        }, metadata, source, group)
        if source is None:
            self.scheduler.create_volume(ctxt, row.id)
        else:
            self._cast_from_source(ctxt, row)
        LOG.info("Volume %(id)s of %(size)s GiB accepted%(src)s",
                 {"id": row.id, "size": size,
                  "src": " from %s" % source.describe() if source else ""})
        return row

    def multiattach_of(self, ctxt: RequestContext, project: str,
                     specs: Mapping[str, str | None],
                     encrypted: bool) -> bool:
        """Whether the type makes the volume multiattach, which policy
        ``volume:multiattach`` must then allow.

        :raises InvalidVolume: multiattach and encrypted.
        """
        if not extra_specs.is_multiattach_spec(specs):
            return False
        ctxt.can("volume:multiattach", {"project_id": project})
        if encrypted:
            raise exception.InvalidVolume(
                reason="Multiattach cannot be used with encrypted "
                       "volumes.")
        return True

    def _insert(self, ctxt: RequestContext, type_name: str,
                values: dict[str, Any], metadata: dict[str, str] | None,
                source: sources.Source | None,
                group: Into | None) -> Any:
        """Insert the row, in one transaction with the quota check of its
        type (the source and the group held meanwhile)."""
        size = values["size"]
        change = quota.Change(type_name, volumes=1, gigabytes=size,
                              size=size)
        check = sources.holding(source, self.quota_check(
            values["project_id"], values["volume_type_id"], change))
        return volumes_db.volume_create(
            ctxt, values, metadata,
            check=group.holding(check) if group else check)

    def _cast_from_source(self, ctxt: RequestContext, row: Any) -> None:
        """Cast the create to the source's node; a node too old to copy
        sources gets nothing, and the row goes."""
        try:
            self.volume.create_volume_from_source(ctxt, row.id, row.host)
        except rpc.ServiceTooOld:
            volumes_db.volume_destroy(ctxt, row.id)
            raise

    def _source(self, ctxt: RequestContext, snapshot_id: str | None,
                source_volid: str | None) -> sources.Source | None:
        """The snapshot or volume a create copies, checked as Cinder does."""
        if snapshot_id and source_volid:
            raise exception.InvalidInput(
                reason="Only one of snapshot_id and source_volid may be "
                "given.")
        if snapshot_id:
            return sources.of_snapshot(self.snapshot(ctxt, snapshot_id))
        if source_volid:
            return sources.of_volume(self.get(ctxt, source_volid))
        return None

    def check_place(self, ctxt: RequestContext, source: sources.Source | None,
                    vtype: Any, specs: dict[str, str | None], size: int,
                    zones: tuple[str, ...]) -> None:
        """The early rejection: a type no fresh pool of ``zones`` offers,
        or a source whose pool cannot take the new volume."""
        if source is not None:
            if self.cache is not None and source.pool is not None:
                self.cache.check_pool(source.pool, source.describe(), vtype,
                                      specs, size)
        elif self.early_check is not None:
            self.early_check(ctxt, vtype, specs, size, zones)
