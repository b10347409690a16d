"""Generic volume groups: the rows, their volume types, and which volumes
belong to them (``volumes.group_id``).

A volume joins or leaves a group, and a group is made ``deleting``, by
conditional ``UPDATE``s in one transaction that first locks the group's
row, so a volume never joins a group being deleted and a group never goes
while a volume of it is left.
"""

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection
from common.db.api.paging import project_page
from common.db.api.timestamps import utcnow

GRP_STATUS = constants.GroupStatus
VOL_STATUS = constants.VolumeStatus
GROUP = models.Group
VOL = models.Volume


def _get(session: orm.Session, group_id: str,
         lock: bool = False) -> models.Group:
    query = sa.select(GROUP).where(GROUP.id == group_id) \
        .execution_options(populate_existing=True)
    row = session.execute(query.with_for_update() if lock
                          else query).scalars().first()
    if row is None:
        raise exception.GroupNotFound(group_id=group_id)
    return row


def type_ids(row: models.Group) -> list[str]:
    return [item.volume_type_id for item in row.volume_types]


@retry_on_deadlock
@writer
def group_create(context: RequestContext, values: dict[str, Any],
                 volume_type_ids: list[str],
                 check: Callable[[SessionOrConnection], None]
                 ) -> models.Group:
    """Insert the group; ``check`` (the project's group quota) first, in
    the same transaction."""
    check(context.session)
    row = GROUP(**values)
    row.volume_types = [models.GroupVolumeType(volume_type_id=type_id)
                        for type_id in volume_type_ids]
    context.session.add(row)
    context.session.flush()
    return row


@reader
def group_get(context: RequestContext, group_id: str) -> models.Group:
    """:raises GroupNotFound:"""
    return _get(context.session, group_id)


@reader
def group_list(context: RequestContext, project_id: str | None = None,
               filters: dict[str, Any] | None = None,
               limit: int | None = None, marker: str | None = None,
               sort_keys: list[str] | None = None,
               sort_dirs: list[str] | None = None,
               offset: int | None = None) -> list[models.Group]:
    """:raises GroupNotFound: an unknown marker, or one of another
    project."""
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(GROUP), GROUP, project_id,
                        filters, marker_row,
                        exception.GroupNotFound(group_id=marker), limit,
                        sort_keys, sort_dirs, offset)


@reader
def volumes_of(context: RequestContext, group_id: str) -> list[models.Volume]:
    """The group's volumes, oldest first."""
    return list(context.session.execute(
        sa.select(VOL).where(VOL.group_id == group_id)
        .order_by(VOL.created_at, VOL.id)).unique().scalars())


def hold(session: SessionOrConnection, group_id: str,
         statuses: tuple[str, ...]) -> None:
    """Lock the group's row in the caller's transaction, if it is in one
    of ``statuses``.

    :raises InvalidGroup: it is not.
    """
    if not conditional_update(session, GROUP, group_id,
                              {"status": statuses}, {}):
        raise exception.InvalidGroup(
            reason="Group %s status must be %s." % (
                group_id, " or ".join(statuses)))


@retry_on_deadlock
@writer
def group_cas(context: RequestContext, group_id: str,
              expected: dict[str, Any], values: dict[str, Any]) -> bool:
    """Compare-and-swap the group's fields; see ``conditional_update``."""
    return conditional_update(context.session, GROUP, group_id, expected,
                              values)


@retry_on_deadlock
@writer
def group_update(context: RequestContext, group_id: str,
                 values: dict[str, Any], add: list[str],
                 remove: list[str]) -> None:
    """Rename the group and move volumes in and out of it, in one
    transaction, while it is ``available`` (if volumes move).

    :raises InvalidGroup: volumes move and the group is not available.
    :raises InvalidVolume: a volume cannot join (another project's or
        group's, a type the group does not take, a status it may not join
        in) or leave (not in the group, or in a status it may not leave
        in); nothing changes.
    """
    session = context.session
    if add or remove:
        hold(session, group_id, (GRP_STATUS.AVAILABLE,))
    group = _get(session, group_id)
    for volume_id in add:
        if not conditional_update(session, VOL, volume_id, {
                "group_id": None, "project_id": group.project_id,
                "volume_type_id": type_ids(group),
                "status": states.VOLUME_GROUP_ADDABLE},
                {"group_id": group_id}):
            raise exception.InvalidVolume(
                reason="Cannot add volume %s to group %s: it must be of "
                       "its project, of a volume type the group supports, "
                       "in no other group, and %s." % (
                           volume_id, group_id,
                           " or ".join(states.VOLUME_GROUP_ADDABLE)))
    for volume_id in remove:
        if not conditional_update(session, VOL, volume_id, {
                "group_id": group_id,
                "status": states.VOLUME_GROUP_REMOVABLE},
                {"group_id": None}):
            raise exception.InvalidVolume(
                reason="Cannot remove volume %s from group %s: it must be "
                       "in the group and %s." % (
                           volume_id, group_id,
                           " or ".join(states.VOLUME_GROUP_REMOVABLE)))
    for key, value in values.items():
        setattr(group, key, value)
    group.updated_at = utcnow()


@retry_on_deadlock
@writer
def group_delete(context: RequestContext, group_id: str,
                 expected: dict[str, Any],
                 delete_volumes: bool) -> list[models.Volume]:
    """Make the group ``deleting`` and, with ``delete_volumes``, its volumes
    too, in one transaction; a group left without volumes goes at once.

    :returns: the volumes made ``deleting`` (their services remove them;
        the last removal removes the group, ``settle_deleted``).
    :raises InvalidGroup: the group is not in ``expected``, has group
        snapshots, or has volumes that cannot go (attached, with
        snapshots, in another status than ``states.VOLUME_DELETABLE``), or
        has volumes
        and not ``delete_volumes``.
    """
    session = context.session
    if not conditional_update(session, GROUP, group_id, expected,
                              {"status": GRP_STATUS.DELETING}):
        raise exception.InvalidGroup(
            reason="Group %s status must be available or error." % group_id)
    if session.execute(sa.select(models.GroupSnapshot.id).where(
            models.GroupSnapshot.group_id == group_id)).first() is not None:
        raise exception.InvalidGroup(reason="Group has existing snapshots.")
    volumes = list(session.execute(sa.select(VOL).where(
        VOL.group_id == group_id)).scalars())
    if volumes and not delete_volumes:
        raise exception.InvalidGroup(
            reason="Group %s still contains volumes. The delete-volumes flag "
                   "is required to delete it." % group_id)
    for volume in volumes:
        if not conditional_update(session, VOL, volume.id, {
                "group_id": group_id, "attachment_count": 0,
                "snapshot_count": 0,
                "migration_status": states.MIGRATION_SETTLED,
                "status": states.VOLUME_DELETABLE},
                {"status": VOL_STATUS.DELETING}):
            raise exception.InvalidGroup(
                reason="Volume %s in group %s is attached, has snapshots or "
                       "is in a status it cannot be deleted in." % (
                           volume.id, group_id))
    if not volumes:
        _destroy(session, group_id)
    return volumes


def _destroy(session: SessionOrConnection, group_id: str) -> None:
    session.execute(sa.delete(models.GroupVolumeType).where(
        models.GroupVolumeType.group_id == group_id))
    session.execute(sa.delete(GROUP).where(GROUP.id == group_id))


def settle_deleted(session: SessionOrConnection, group_id: str) -> None:
    """In the transaction that removed a volume of the group: remove the
    group too if it is ``deleting`` and has no volume left.

    The group's row is locked first, so of two volumes removed at once
    the second sees the first gone.
    """
    group = session.execute(sa.select(GROUP.status).where(
        GROUP.id == group_id).with_for_update()).first()
    if group is None or group.status != GRP_STATUS.DELETING:
        return
    if session.execute(sa.select(VOL.id).where(
            VOL.group_id == group_id)).first() is None:
        _destroy(session, group_id)
