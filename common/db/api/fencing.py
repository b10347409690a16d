"""Fencing in the database: which rows a host holds, and granting a writer.

A fence itself is a compare-and-swap of the row (``attachments.change``:
``fencing`` transition, then ``fenced_at`` with the writer count lowered).
What is here gives a row the right to write (a takeover, an unfence): the
row changes first (a compare-and-swap), then the volume's writer count goes
up under a guard, ``writer_count < :most``, in the same transaction, so
however a takeover, an unfence and a read/write attach race, a
single-writer volume never counts two writers (the reservation's guard
tests the same counter).  Rows are locked before their volume, as
everywhere else.
"""

from typing import Any

import sqlalchemy as sa

from common.context import RequestContext
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import single_statement
from common.db.api.rows import FencedRow
from common.db.api.timestamps import utcnow

VA = models.VolumeAttachment
VOL = models.Volume
#: Largest writer count a volume that is not single-writer may reach.
_UNBOUNDED = 2 ** 31 - 1


class WriterTaken(Exception):
    """The volume is single-writer and already counts a writer."""


_FENCED_OF_HOST = sa.select(VA.id, VA.fenced_at).where(
    VA.volume_id == sa.bindparam("volume_id"),
    VA.attached_host == sa.bindparam("host"),
    VA.fenced_at.is_not(None)).limit(1)


@single_statement(reader)
def fenced_row_of_host(conn: Conn, volume_id: str,
                       host: str) -> FencedRow | None:
    """``(id, fenced_at)`` of a fenced attachment of the volume on
    ``host``, or None (one statement, on the attach path)."""
    return conn.execute(_FENCED_OF_HOST, {"volume_id": volume_id,
                                          "host": host}).first()


@reader
def rows_of_host(context: RequestContext, host: str,
                 fenced: bool) -> list[models.VolumeAttachment]:
    """Attachments of ``host`` (every project), fenced or not as asked."""
    query = sa.select(VA).where(
        VA.attached_host == host,
        VA.fenced_at.is_not(None) if fenced else VA.fenced_at.is_(None)
    ).order_by(VA.created_at)
    return list(context.session.execute(query).scalars())


@retry_on_deadlock
@writer.connection
def _grant(context: RequestContext, volume_id: str, attachment_id: str,
           expected: dict[str, Any], values: dict[str, Any],
           single_writer: bool, connector: dict[str, Any] | None) -> None:
    conn = context.connection
    if not conditional_update(conn, VA, attachment_id,
                              dict(expected, volume_id=volume_id), values):
        raise attachments_db.Lost()
    if connector is not None:
        attachments_db.replace_connector(conn, attachment_id, connector)
    granted = conn.execute(
        sa.update(VOL).where(
            VOL.id == volume_id,
            VOL.writer_count < (1 if single_writer else _UNBOUNDED)).values(
            writer_count=VOL.writer_count + 1, updated_at=utcnow()))
    if granted.rowcount != 1:
        raise WriterTaken()  # the transaction rolls back the row's change


def grant_writer(context: RequestContext, volume_id: str,
                 attachment_id: str, expected: dict[str, Any],
                 values: dict[str, Any], single_writer: bool,
                 connector: dict[str, Any] | None = None) -> None:
    """Change a row that becomes a writer, and count it, atomically.

    :param expected: the row as read (compare-and-swap).
    :param values: its new columns (mode, fenced_at, connection_info ...).
    :param connector: new connector rows, if they change.
    :raises Lost: the row changed since it was read (nothing written).
    :raises WriterTaken: a single-writer volume has its writer (nothing
        written).
    """
    _grant(context, volume_id, attachment_id, expected, values,
           single_writer, connector)
