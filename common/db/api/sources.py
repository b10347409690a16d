"""Sources of volumes being made: a create holds its source, a delete
waits for the volumes still being made from it.

A create from a snapshot or a volume touches the source's row with a
conditional ``UPDATE`` (the source must still be usable) in the transaction
that inserts the new volume; a delete of a snapshot or a volume first locks
the source's row (``SELECT ... FOR UPDATE``) and refuses while a volume made
from it is still ``creating``.  Both take the source row's lock, so
whichever commits second sees the other's work: a source is never deleted
under a copy in progress.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common.db import models
from common.db.api.execution import SessionOrConnection
from common.db.api.timestamps import utcnow

VOL = models.Volume
_Model = type[models.Snapshot] | type[models.Volume]
_Column = orm.InstrumentedAttribute[str | None]
#: kind -> (the source's model, the new volume's column naming it).
_KINDS: dict[str, tuple[_Model, _Column]] = {
    "snapshot": (models.Snapshot, VOL.snapshot_id),
    "volume": (VOL, VOL.source_volid)}


def _refusal(kind: str, source_id: str, why: str) -> exception.Invalid:
    if kind == "snapshot":
        return exception.InvalidSnapshot(
            reason="Snapshot %s %s." % (source_id, why))
    return exception.InvalidVolume(reason="Volume %s %s." % (source_id, why))


def hold(session: SessionOrConnection, kind: str, source_id: str,
         statuses: tuple[str, ...]) -> None:
    """Lock the source for the creating transaction, if it is still in
    ``statuses``.

    :raises InvalidSnapshot: or InvalidVolume: it changed meanwhile.
    """
    model, _column = _KINDS[kind]
    # Session.execute's DML result is a CursorResult (typed Result).
    done = session.execute(  # type: ignore[attr-defined]
        sa.update(model).where(model.id == source_id,
                               model.status.in_(statuses)).values(
            updated_at=utcnow())).rowcount
    if done != 1:
        raise _refusal(kind, source_id, "changed while a volume was being "
                       "made from it")


def _copied_statements(model: _Model, column: _Column
                       ) -> tuple[sa.Select[str], sa.Select[str]]:
    """``refuse_if_copied``'s two statements for a kind of source: lock
    its row, then find a volume ``creating`` from it."""
    source_id: sa.BindParameter[str] = sa.bindparam("source_id")
    return (sa.select(model.id).where(model.id == source_id)
            .with_for_update(),
            sa.select(VOL.id).where(
                column == source_id,
                VOL.status == constants.VolumeStatus.CREATING).limit(1))


#: kind -> ``_copied_statements`` (prebuilt: a delete runs them each time).
_COPIED = {kind: _copied_statements(*found) for kind, found in _KINDS.items()}


def refuse_if_copied(session: SessionOrConnection, kind: str,
                     source_id: str) -> None:
    """Lock the source row and refuse while a volume made from it is
    ``creating``.

    :raises InvalidSnapshot: or InvalidVolume:
    """
    lock, copying = _COPIED[kind]
    params = {"source_id": source_id}
    session.execute(lock, params)
    busy = session.execute(copying, params).first()
    if busy is not None:
        raise _refusal(kind, source_id, "has a volume being made from it "
                       "(%s); try again when that is done" % busy.id)
