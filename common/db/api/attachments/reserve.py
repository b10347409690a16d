"""The reservation: admit a new attachment of a volume and insert its row.

The reservation locks the volume first: its guard decides.  ``UPDATE
volumes SET attachment_count = attachment_count + 1 ... WHERE id = :id AND
status IN (...) AND attachment_count < :limit ...``.  The database
re-evaluates the ``WHERE`` against the latest committed row after waiting
for the lock (PostgreSQL, InnoDB) or runs writers one at a time (SQLite),
so however many reservations race, the counter admits exactly as many as
the guard allows; a loser's transaction writes nothing.  The row a
reservation inserts is new, so no other transaction holds it; it goes in
once the guard admitted it (``_reserve`` says why not before).

Before it, the volume is read without a lock and handed to the caller's
``decide`` (policy, state machine), so that reading, deciding and writing
cost one transaction; the guard requires what was decided on.  On
PostgreSQL (``data_modifying_with``) the guard, the new row and its
connector rows are one statement, a data-modifying ``WITH`` run on its own
(``_admitting``; the read is a statement before it).
"""

import dataclasses
import functools
import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from common import attach_rules
from common import exception
from common import states
from common.context import RequestContext
from common.db.api import direct
from common.db.api.attachments.connectors import insert_specs
from common.db.api.attachments.connectors import spec_values
from common.db.api.attachments.statements import among
from common.db.api.attachments.statements import BRIEF
from common.db.api.attachments.statements import BRIEF_SPECS
from common.db.api.attachments.statements import INSERT_ROW
from common.db.api.attachments.statements import RAISED
from common.db.api.attachments.statements import SPEC
from common.db.api.attachments.statements import VA
from common.db.api.attachments.statements import VID
from common.db.api.attachments.statements import VOL
from common.db.api.attachments.volume_status import raised
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import data_modifying_with
from common.db.api.execution import Record
from common.db.api.execution import single_statement
from common.db.api.execution import transaction
from common.db.api.rows import AttachmentRow
from common.db.api.rows import VolumeBrief
from common.db.api.timestamps import utcnow
from common.db.api.types import Specs


@dataclasses.dataclass
class Reservation:
    """What a new attachment of a volume asks for (see
    ``attachment_reserve``)."""

    guard: attach_rules.ReserveGuard
    #: Columns of the new row, ``id`` included.
    values: dict[str, Any]
    connector: dict[str, Any] | None = None


#: ``(volume, type_specs) -> Reservation`` (see ``attachment_reserve``).
Decide = Callable[[VolumeBrief, Specs], Reservation]


#: Columns of a new row not given by the caller.
_UNSET = {"instance_uuid": None, "attached_host": None, "mountpoint": None,
          "attach_mode": states.MODE_NULL, "connection_info": None,
          "attach_time": None, "detach_time": None, "transition": None,
          "updated_at": None, "fenced_at": None, "fenced_clients": None,
          "clients": None, "lease_expires_at": None, "agent_made": None}


@functools.lru_cache(maxsize=None)
def _reserve_statement(multiattach: bool, same_instance: bool,
                       one_writer: bool) -> sa.Update:
    """The counter ``UPDATE`` that admits a reservation, per guard shape.

    Parameters: volume_id, new_id (the new row's, which may be in already),
    limit, instance_uuid, writer (0/1), was_bootable,
    was_readonly (the flags as read: the caller decided policy and mode on
    them), now, and ``raised`` of the new row's status (a new row can only
    raise the volume's statuses).
    """
    conditions = [VOL.id == VID, among(VOL.status, states.RESERVABLE),
                  VOL.multiattach == multiattach,
                  VOL.bootable == sa.bindparam("was_bootable"),
                  VOL.readonly == sa.bindparam("was_readonly")]
    if multiattach:
        conditions.append(VOL.attachment_count < sa.bindparam("limit"))
    else:
        alone = VOL.attachment_count == 0
        if same_instance:
            same = sa.exists().where(
                VA.volume_id == VID, VA.id != sa.bindparam("new_id"),
                VA.instance_uuid == sa.bindparam("instance_uuid"))
            alone = sa.or_(alone, sa.and_(VOL.attachment_count == 1, same))
        conditions.append(alone)
    if one_writer:
        conditions.append(VOL.writer_count == 0)
    return sa.update(VOL).where(*conditions).ordered_values(
        *RAISED, (VOL.attachment_count, VOL.attachment_count + 1),
        (VOL.writer_count, VOL.writer_count + sa.bindparam("writer")),
        (VOL.updated_at, sa.bindparam("now")))


class _Refused(Exception):
    """The guard refused a reservation (rolls back what was inserted)."""

    def __init__(self, volume: VolumeBrief, wanted: Reservation) -> None:
        super().__init__()
        self.volume, self.wanted = volume, wanted


def attachment_reserve(context: RequestContext, volume_id: str,
                       decide: Decide
                       ) -> tuple[AttachmentRow | None, VolumeBrief,
                                  Reservation]:
    """Reserve a place on the volume and insert the row, atomically.

    :param decide: ``(volume, type_specs) -> Reservation``, called with the
        volume's ``BRIEF`` columns as read in this transaction; raise to
        refuse (nothing written).  The guard also requires the volume's
        ``bootable`` and ``readonly`` flags as read (policy and the mode
        were decided on them).
    :returns: ``(row, volume, reservation)``; ``row`` is None when the guard
        refused (nothing written).
    :raises VolumeNotFound:
    """
    try:
        if data_modifying_with():
            return _reserve_at_once(context, volume_id, decide)
        return _reserve(context, volume_id, decide)
    except _Refused as refused:
        return None, refused.volume, refused.wanted
    except db_exc.DBReferenceError:
        # NOTE(ashlar): the volume row went between the read and the insert.
        raise exception.VolumeNotFound(volume_id=volume_id)


@retry_on_deadlock
@transaction(writer)
def _reserve(conn: direct.Connection, volume_id: str, decide: Decide
             ) -> tuple[AttachmentRow, VolumeBrief, Reservation]:
    """``(context, volume_id, decide)``: ``attachment_reserve``'s
    transaction (MySQL, SQLite).

    NOTE(ashlar): the guard goes first, then the new rows: InnoDB's foreign
    key check takes a shared lock on the volume that two reservations would
    both hold and then both want to upgrade (a deadlock) were the rows
    first; SQLite runs writers one at a time.

    :raises _Refused: the guard refused (the transaction rolls back).
    """
    volume, specs = _brief_and_specs(conn, volume_id)
    wanted = decide(volume, specs)
    query, params, values = _admission(volume_id, volume, wanted)
    if conn.execute(query, params).rowcount != 1:
        raise _Refused(volume, wanted)
    _insert_row(conn, values, wanted.connector)
    return Record(**values), volume, wanted


def _admission(volume_id: str, volume: VolumeBrief, wanted: Reservation
               ) -> tuple[sa.Update, dict[str, Any], dict[str, Any]]:
    """The guard (``_reserve_statement``) of a reservation decided on
    ``volume``, its parameters, and the new row's columns."""
    guard = wanted.guard
    query = _reserve_statement(
        guard.multiattach,
        not guard.multiattach and bool(guard.instance_uuid),
        bool(guard.single_writer and guard.writer))
    values = dict(_UNSET, volume_id=volume_id, created_at=utcnow(),
                  **wanted.values)
    params = dict(raised(values["attach_status"]), volume_id=volume_id,
                  new_id=values["id"], limit=guard.limit,
                  instance_uuid=guard.instance_uuid, writer=int(guard.writer),
                  was_bootable=bool(volume.bootable),
                  was_readonly=bool(volume.readonly), now=utcnow())
    return query, params, values


def _reserve_at_once(context: RequestContext, volume_id: str,
                     decide: Decide
                     ) -> tuple[AttachmentRow, VolumeBrief, Reservation]:
    """``attachment_reserve`` where ``data_modifying_with``: read the volume
    (a statement of its own, as ``_reserve`` reads it without a lock), then
    admit and insert in one statement (``_admitting``).

    :raises _Refused: the guard refused (nothing was written).
    """
    volume, specs = volume_and_specs(context, volume_id)
    wanted = decide(volume, specs)
    query, params, values = _admission(volume_id, volume, wanted)
    if not _admit(context, query, params, values, wanted.connector):
        raise _Refused(volume, wanted)
    return Record(**values), volume, wanted


@single_statement(reader)
def volume_and_specs(conn: Conn,
                     volume_id: str) -> tuple[VolumeBrief, Specs]:
    """The volume (as ``volume_brief``) and its type's extra specs."""
    return _brief_and_specs(conn, volume_id)


def _brief_and_specs(conn: Conn,
                     volume_id: str) -> tuple[VolumeBrief, Specs]:
    """The volume's ``BRIEF`` columns and its type's extra specs, in one
    statement (one result row per spec).

    :raises VolumeNotFound:
    """
    found = conn.execute(BRIEF_SPECS, {"volume_id": volume_id}).all()
    if not found:
        raise exception.VolumeNotFound(volume_id=volume_id)
    specs = {row.spec_key: row.spec_value for row in found
             if row.spec_key is not None}
    return Record(**{column.key: getattr(found[0], column.key)
                     for column in BRIEF}), specs


#: The columns of a new row, in the order ``_admitting`` selects them.
_NEW_ROW = tuple(column.key for column in VA.__table__.columns)


@functools.lru_cache(maxsize=None)
def _admitting(guard: sa.Update, with_connector: bool) -> sa.Insert:
    """The guard ``UPDATE``, then the new row and its connector rows if it
    matched: one statement (PostgreSQL's data-modifying ``WITH``).

    Parameters: the guard's, ``n_<column>`` of the new row (its
    ``volume_id`` comes from the guard) and ``connector`` (a JSON object
    of ``spec_values``).  The volume's lock, taken first,
    is held until the statement's commit, with no round trip to the client
    in between; the new rows' foreign keys find it locked by the statement
    itself.
    """
    admitted = guard.returning(VOL.id).cte("admitted")
    table = VA.__table__
    row = sa.insert(VA).from_select(_NEW_ROW, sa.select(*(
        admitted.c.id if key == "volume_id" else
        sa.cast(sa.bindparam("n_" + key), table.c[key].type)
        for key in _NEW_ROW)))
    if not with_connector:
        return row
    added = row.returning(VA.id, VA.created_at).cte("added")
    spec = sa.func.json_each_text(
        sa.cast(sa.bindparam("connector"), sa.JSON)).table_valued(
        "key", "value")
    return sa.insert(SPEC).from_select(
        ("attachment_id", "key", "value", "created_at"),
        sa.select(added.c.id, spec.c.key, spec.c.value,
                  added.c.created_at).select_from(
            added.join(spec, sa.true())))


@retry_on_deadlock
@single_statement(writer)
def _admit(conn: Conn, guard: sa.Update, params: dict[str, Any],
           values: dict[str, Any], connector: dict[str, Any] | None) -> bool:
    """Run ``_admitting``; whether the guard admitted the reservation.

    NOTE(ashlar): SQLAlchemy keeps an ``INSERT``'s rowcount only when asked
    (psycopg 3 reports none once the cursor is closed).
    """
    specs = spec_values(connector)
    params = dict(params, connector=json.dumps(specs), **{
        "n_" + key: value for key, value in values.items()})
    return conn.execute(_admitting(guard, bool(specs)), params,
                        execution_options={"preserve_rowcount": True}
                        ).rowcount > 0


def _insert_row(conn: Conn, values: dict[str, Any],
                connector: dict[str, Any] | None) -> None:
    conn.execute(INSERT_ROW, values)
    insert_specs(conn, values["id"], connector)
