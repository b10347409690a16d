"""Volume transfers: offer a volume to another project, cancel the offer,
or hand the volume (and its snapshots) over.

Each step is one transaction that compare-and-swaps the volume row:
``available`` -> ``awaiting-transfer`` with the transfer's insert;
back to ``available`` with its delete; and, on acceptance, to
``available`` in the taker's project, expecting the giver's project and
``awaiting-transfer``, so that two accepts, or an accept and a cancel,
never both take effect.
"""

from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.paging import project_page
from common.db.api.volumes import Check

TRANSFER = models.Transfer
STATUS = constants.VolumeStatus


def _get(session: orm.Session, transfer_id: str) -> models.Transfer:
    row = session.execute(sa.select(TRANSFER).where(
        TRANSFER.id == transfer_id)).scalars().first()
    if row is None:
        raise exception.TransferNotFound(transfer_id=transfer_id)
    return row


@reader
def transfer_get(context: RequestContext, transfer_id: str) -> models.Transfer:
    """:raises TransferNotFound:"""
    return _get(context.session, transfer_id)


@reader
def transfer_list(context: RequestContext, project_id: str | None = None,
                  limit: int | None = None, marker: str | None = None,
                  sort_keys: list[str] | None = None,
                  sort_dirs: list[str] | None = None,
                  offset: int | None = None) -> list[models.Transfer]:
    """The transfers of volumes ``project_id`` offers (every project's
    when None), one page.

    :raises TransferNotFound: an unknown marker, or one of another project.
    """
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(TRANSFER), TRANSFER,
                        project_id, None, marker_row,
                        exception.TransferNotFound(transfer_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def transfer_create(context: RequestContext, values: dict[str, Any],
                    volume: dict[str, Any]) -> models.Transfer | None:
    """Insert the transfer if the volume is as ``volume`` expects (then
    ``awaiting-transfer``); None if it is not."""
    if not conditional_update(context.session, models.Volume,
                              values["volume_id"], volume,
                              {"status": STATUS.AWAITING_TRANSFER}):
        return None
    row = TRANSFER(**values)
    context.session.add(row)
    context.session.flush()
    return row


@retry_on_deadlock
@writer
def transfer_destroy(context: RequestContext, row: models.Transfer) -> bool:
    """Cancel: the volume ``available`` again in its project; False if the
    transfer was accepted or cancelled meanwhile."""
    if not _finish(context.session, row):
        return False
    return conditional_update(
        context.session, models.Volume, row.volume_id,
        {"status": STATUS.AWAITING_TRANSFER, "project_id": row.project_id},
        {"status": STATUS.AVAILABLE})


@retry_on_deadlock
@writer
def transfer_accept(context: RequestContext, row: models.Transfer,
                    project_id: str, user_id: str | None,
                    check: Check) -> bool:
    """Hand the volume (and, unless ``no_snapshots``, its snapshots) to
    ``project_id``; ``check`` (the taker's quota) first.  False if the
    transfer was accepted or cancelled meanwhile.

    :raises InvalidVolume: the volume is no longer awaiting the transfer
        (an administrator reset it); the transaction rolls back, and the
        transfer stays to be cancelled.
    :raises InvalidSnapshot: a snapshot going along belongs to a group
        snapshot (likewise).
    """
    session = context.session
    check(session)
    if not _finish(session, row):
        return False
    if not conditional_update(
            session, models.Volume, row.volume_id,
            {"status": STATUS.AWAITING_TRANSFER,
             "project_id": row.project_id},
            {"status": STATUS.AVAILABLE, "project_id": project_id,
             "user_id": user_id}):
        raise exception.InvalidVolume(
            reason="Volume %s is no longer awaiting transfer %s." % (
                row.volume_id, row.id))
    if not row.no_snapshots:
        _refuse_grouped_snapshots(session, row.volume_id)
        session.execute(sa.update(models.Snapshot).where(
            models.Snapshot.volume_id == row.volume_id).values(
                project_id=project_id, user_id=user_id))
    return True


def _refuse_grouped_snapshots(session: orm.Session, volume_id: str) -> None:
    """:raises InvalidSnapshot: a snapshot of the volume belongs to a
        group snapshot, which stays with the giver."""
    grouped = session.execute(sa.select(
        models.Snapshot.id, models.Snapshot.group_snapshot_id).where(
        models.Snapshot.volume_id == volume_id,
        models.Snapshot.group_snapshot_id.is_not(None))).first()
    if grouped is not None:
        raise exception.InvalidSnapshot(
            reason="snapshot: %s belongs to group snapshot %s"
            % tuple(grouped))


def _finish(session: orm.Session, row: models.Transfer) -> bool:
    # Session.execute's DML result is a CursorResult (typed Result).
    gone: int = session.execute(  # type: ignore[attr-defined]
        sa.delete(TRANSFER).where(TRANSFER.id == row.id)).rowcount
    return gone == 1
