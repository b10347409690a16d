"""Group snapshots: one row, and one snapshot of each volume of the group
that carries its id (``snapshots.group_snapshot_id``).

The volume service finishes (or removes) each member snapshot in a
transaction that locks the group snapshot's row first and then settles
it (``settle``): ``available`` once every member is, ``error`` once one
failed, gone once the last member of a ``deleting`` one is.
"""

from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import groups as groups_db
from common.db.api import snapshots as snapshots_db
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection
from common.db.api.paging import project_page
from common.db.api.volumes import Check

GSNAP = models.GroupSnapshot
GSNAP_STATUS = constants.GroupSnapshotStatus
GRP_STATUS = constants.GroupStatus
SNAP = models.Snapshot

#: A member snapshot: its columns, what its volume must be, and the
#: quota check of it (``snapshots.insert``).
Member = tuple[dict[str, Any], dict[str, Any], Check]


def _get(session: orm.Session, gsnap_id: str) -> models.GroupSnapshot:
    row = session.execute(sa.select(GSNAP).where(GSNAP.id == gsnap_id)
                          .execution_options(populate_existing=True)
                          ).scalars().first()
    if row is None:
        raise exception.GroupSnapshotNotFound(group_snapshot_id=gsnap_id)
    return row


@retry_on_deadlock
@writer
def gsnap_create(context: RequestContext, values: dict[str, Any],
                 members: list[Member]) -> models.GroupSnapshot:
    """Insert the group snapshot and its members, counted on their
    volumes, in one transaction, while the group is ``available``.

    :raises InvalidGroup: the group is not available.
    :raises InvalidVolume: a volume cannot be snapshotted.
    :raises QuotaError: from a member's check.
    """
    session = context.session
    groups_db.hold(session, values["group_id"], (GRP_STATUS.AVAILABLE,))
    row = GSNAP(**values)
    session.add(row)
    session.flush()
    for snap_values, volume_expected, check in members:
        snapshots_db.insert(session, dict(snap_values,
                                          group_snapshot_id=row.id),
                            None, volume_expected, check)
    return row


@reader
def gsnap_get(context: RequestContext, gsnap_id: str) -> models.GroupSnapshot:
    """:raises GroupSnapshotNotFound:"""
    return _get(context.session, gsnap_id)


@reader
def gsnap_list(context: RequestContext, project_id: str | None = None,
               filters: dict[str, Any] | None = None,
               limit: int | None = None, marker: str | None = None,
               sort_keys: list[str] | None = None,
               sort_dirs: list[str] | None = None,
               offset: int | None = None) -> list[models.GroupSnapshot]:
    """:raises GroupSnapshotNotFound: an unknown marker, or one of another
    project."""
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(GSNAP), GSNAP, project_id,
                        filters, marker_row,
                        exception.GroupSnapshotNotFound(
                            group_snapshot_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@reader
def members(context: RequestContext, gsnap_id: str) -> list[models.Snapshot]:
    """The group snapshot's snapshots, with their volumes."""
    return list(context.session.execute(
        sa.select(SNAP).where(SNAP.group_snapshot_id == gsnap_id)
        .order_by(SNAP.created_at, SNAP.id)).unique().scalars())


@retry_on_deadlock
@writer
def gsnap_cas(context: RequestContext, gsnap_id: str,
              expected: dict[str, Any], values: dict[str, Any]) -> bool:
    return conditional_update(context.session, GSNAP, gsnap_id, expected,
                              values)


@retry_on_deadlock
@writer
def gsnap_delete(context: RequestContext,
                 gsnap_id: str) -> list[models.Snapshot]:
    """``available``/``error`` -> ``deleting``, with its members, in one
    transaction; one without members goes at once.

    :returns: the members made ``deleting`` (those of the group snapshot's
        project; another project's are let go, untouched).
    :raises InvalidGroupSnapshot: another status, a member that is not
        available or error, or a group being made from it.
    """
    session = context.session
    refused = exception.InvalidGroupSnapshot(
        reason="GroupSnapshot status must be available or error, and no "
               "Group can be currently using it as source for its creation.")
    if not conditional_update(session, GSNAP, gsnap_id,
                              {"status": states.GROUP_SNAPSHOT_DELETABLE},
                              {"status": GSNAP_STATUS.DELETING}):
        raise refused
    if session.execute(sa.select(models.Group.id).where(
            models.Group.group_snapshot_id == gsnap_id,
            models.Group.status == GRP_STATUS.CREATING)).first() is not None:
        raise refused
    snaps = _own_members(session, gsnap_id)
    snapshots_db.all_deleting(session, [snap.id for snap in snaps],
                              force=False)
    if not snaps:
        session.execute(sa.delete(GSNAP).where(GSNAP.id == gsnap_id))
    return snaps


def _own_members(session: orm.Session,
                 gsnap_id: str) -> list[models.Snapshot]:
    """The members of the group snapshot's own project; a member of
    another project (its volume was transferred) leaves the group snapshot
    untouched: it is its owner's to delete."""
    project_id = session.execute(sa.select(GSNAP.project_id).where(
        GSNAP.id == gsnap_id)).scalar()
    session.execute(sa.update(SNAP).where(
        SNAP.group_snapshot_id == gsnap_id,
        SNAP.project_id != project_id).values(group_snapshot_id=None))
    return list(session.execute(sa.select(SNAP).where(
        SNAP.group_snapshot_id == gsnap_id)).scalars())


def lock(gsnap_id: str | None) -> Check | None:
    """A check that locks the group snapshot's row (None: no group)."""
    if gsnap_id is None:
        return None

    def _lock(session: SessionOrConnection) -> None:
        session.execute(sa.select(GSNAP.id).where(
            GSNAP.id == gsnap_id).with_for_update()).first()
    return _lock


def settle(gsnap_id: str | None) -> Check | None:
    """What runs after a member changed, in its transaction (after
    ``lock``): the group snapshot follows its members."""
    if gsnap_id is None:
        return None

    def _settle(session: SessionOrConnection) -> None:
        status = session.execute(sa.select(GSNAP.status).where(
            GSNAP.id == gsnap_id)).scalar()
        have = set(session.execute(sa.select(SNAP.status).where(
            SNAP.group_snapshot_id == gsnap_id)).scalars())
        after = states.group_snapshot_follows(status, have)
        if after == states.DESTROY:
            session.execute(sa.delete(GSNAP).where(GSNAP.id == gsnap_id))
        elif after is not None:
            conditional_update(session, GSNAP, gsnap_id, {"status": status},
                               {"status": after})
    return _settle
