"""The volume's statuses as its attachments drive them.

Steps 2-3 of the family's design (``common.db.api.attachments``): take the
volume row's lock after the row's own change, raising its statuses in that
same ``UPDATE`` when the change can only raise them (``raise_statuses``),
else recompute them from the live rows and compare-and-swap them
(``sync_volume``).  ``volume_leave_status`` ends a non-attach status the
same way.
"""

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.dml import ReturningUpdate

from common import exception
from common import states
from common.db.api import direct
from common.db.api.attachments.statements import COUNT
from common.db.api.attachments.statements import LIVE_STATUSES
from common.db.api.attachments.statements import LOCK_STATE
from common.db.api.attachments.statements import RAISE
from common.db.api.attachments.statements import SELECT_STATE
from common.db.api.attachments.statements import STATE
from common.db.api.attachments.statements import VOL
from common.db.api.cas import conditional_update
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import transaction
from common.db.api.rows import VolumeState
from common.db.api.timestamps import utcnow


def raised(status: str) -> dict[str, Any]:
    """The parameters of ``RAISED`` for a row now in ``status``."""
    return {"new_rank": states.RANK.get(status, 0),
            "new_attach_status": status,
            "new_status": states.STATUS_OF.get(status)}


def raise_statuses(conn: Conn, volume_id: str, status: str,
                   writer_delta: int = 0) -> None:
    """Lock the volume and raise its statuses for a row now in ``status``
    (``states.raises``): one statement, no row read."""
    params = dict(raised(status), volume_id=volume_id,
                  writer_delta=writer_delta, now=utcnow())
    if conn.execute(RAISE, params).rowcount != 1:
        raise exception.VolumeNotFound(volume_id=volume_id)


def supports_returning(conn: Conn, kind: str) -> bool:
    """Whether the dialect supports ``update_returning``/``delete_returning``
    (not MariaDB's UPDATE)."""
    return bool(getattr(conn.dialect, kind, False))


@functools.lru_cache(maxsize=None)
def _returning_state(query: sa.Update) -> ReturningUpdate[str, str, int]:
    return query.returning(*STATE)


def state_after(conn: Conn, query: sa.Update,
                params: dict[str, Any]) -> VolumeState | None:
    """Run a prebuilt counter ``UPDATE`` of one volume (``params`` name it
    ``volume_id``); its ``STATE`` after, or None when it matched no row."""
    if supports_returning(conn, "update_returning"):
        return conn.execute(_returning_state(query), params).first()
    if conn.execute(query, params).rowcount != 1:
        return None
    return conn.execute(SELECT_STATE, params).one()


def lock_volume(conn: Conn, volume_id: str,
                writer_delta: int = 0) -> VolumeState:
    """Take the volume row's lock, adjusting its counters if asked.

    NOTE(ashlar): taken after the attachment row's own change.  PostgreSQL
    and InnoDB lock the row (``FOR NO KEY UPDATE``, MySQL's ``FOR UPDATE``,
    or the ``UPDATE``) and see its latest committed version;
    SQLite holds its write lock since ``BEGIN IMMEDIATE``
    (``common.db.api.dialects.tune_sqlite``).

    :returns: the volume's ``STATE`` (after the counter change).
    """
    if writer_delta:
        state = state_after(conn, COUNT, {
            "volume_id": volume_id, "writer_delta": writer_delta,
            "now": utcnow()})
    else:
        state = conn.execute(LOCK_STATE, {"volume_id": volume_id}).first()
    if state is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return state


def _live_statuses(conn: Conn, volume_id: str) -> list[str]:
    return list(conn.execute(LIVE_STATUSES,
                             {"volume_id": volume_id}).scalars())


def _derive(state: VolumeState, statuses: list[str],
            force_from: str | None = None) -> tuple[str, str]:
    base = states.VOL.AVAILABLE if state.status == force_from \
        else state.status
    return states.volume_status(statuses, base)


def sync_volume(conn: Conn, volume_id: str, state: VolumeState,
                statuses: list[str] | None = None,
                force_from: str | None = None) -> tuple[str, str]:
    """Recompute the volume's statuses from its live rows (lock held).

    :param state: the volume's ``STATE``, as read under the lock.
    :param statuses: the live rows' statuses when known, else read.
    :param force_from: derive ``status`` even when the volume is in this
        non-attach status (the end of an extend or a retype).
    """
    if statuses is None:
        statuses = _live_statuses(conn, volume_id)
    status, attach_status = _derive(state, statuses, force_from)
    if (status, attach_status) != (state.status, state.attach_status):
        conditional_update(conn, VOL, volume_id, {"status": state.status},
                           {"status": status, "attach_status": attach_status})
    return status, attach_status


def only_row(state: VolumeState, status: object) -> list[str] | None:
    """The live statuses when the row just written (in ``status``) is the
    volume's only one, else None (read them)."""
    if state.attachment_count == 1 and isinstance(status, str):
        return [status]
    return None


@retry_on_deadlock
@transaction(writer)
def volume_leave_status(conn: direct.Connection, volume_id: str,
                        status: str, values: dict[str, Any] | None = None,
                        expected: dict[str, Any] | None = None) -> bool:
    """``(context, volume_id, status, ...)``: end a non-attach status
    (extending, retyping): compare-and-swap it to the status the
    attachments say, with ``values``.

    :param expected: other columns that must hold their values too.
    :returns: whether the volume was in ``status`` (and ``expected``).
    """
    state = lock_volume(conn, volume_id)
    if state.status != status:
        return False
    if values or expected:
        if not conditional_update(conn, VOL, volume_id,
                                  dict(expected or {}, status=status),
                                  values or {}):
            return False
        if set(values or {}) & {"status", "attach_status"}:
            state = conn.execute(SELECT_STATE,
                                 {"volume_id": volume_id}).one()
            if state.status != status:
                return False
    sync_volume(conn, volume_id, state, force_from=status)
    return True
