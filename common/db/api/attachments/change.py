"""Compare-and-swap of one attachment, removal included.

A change of the row alone (its ``attach_status``, connector and mode stay)
is one statement (``attachment_record``); on PostgreSQL a change that can
only raise the volume's statuses (``os-complete``) is one statement too
(``_raising``); any other runs steps 1-3 of the family's design in one
short transaction (``_apply``).  Removing a row (``attachment_destroy``) is
such a change: the row goes, then the volume's lock is taken.
"""

import dataclasses
import datetime
import functools
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.dml import ReturningDelete

from common import exception
from common import states
from common.context import RequestContext
from common.db.api.attachments.connectors import replace_connector
from common.db.api.attachments.reads import attachment_with_volume
from common.db.api.attachments.statements import AID
from common.db.api.attachments.statements import LEAVE
from common.db.api.attachments.statements import LIVE_ROWS
from common.db.api.attachments.statements import RAISE_VALUES
from common.db.api.attachments.statements import VA
from common.db.api.attachments.statements import VID
from common.db.api.attachments.statements import VOL
from common.db.api.attachments.volume_status import lock_volume
from common.db.api.attachments.volume_status import only_row
from common.db.api.attachments.volume_status import raise_statuses
from common.db.api.attachments.volume_status import raised
from common.db.api.attachments.volume_status import state_after
from common.db.api.attachments.volume_status import supports_returning
from common.db.api.attachments.volume_status import sync_volume
from common.db.api.cas import compare_and_swap
from common.db.api.cas import conditional_update
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import data_modifying_with
from common.db.api.execution import Record
from common.db.api.execution import single_statement
from common.db.api.execution import transaction
from common.db.api.rows import AttachmentRow
from common.db.api.rows import AttachmentWithConnector
from common.db.api.rows import Destroyed
from common.db.api.rows import VolumeBrief
from common.db.api.timestamps import utcnow


class Lost(Exception):
    """A compare-and-swap found the row changed (nothing was written)."""


@dataclasses.dataclass
class Change:
    """A compare-and-swap of one attachment (see ``attachment_change``)."""

    expected: dict[str, Any]
    values: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: New connector rows, when ``replace_connector``.
    connector: dict[str, Any] | None = None
    replace_connector: bool = False
    #: Change of the volume's writer count (the mode was set).
    writer_delta: int = 0
    #: Remove the row instead (``values`` unused).
    destroy: bool = False

    def status_after(self) -> str | None:
        """The row's ``attach_status`` once changed: the one set, else the
        one expected (None when neither says)."""
        return self.values.get("attach_status",
                               self.expected.get("attach_status"))

    def keeps_volume(self) -> bool:
        """Whether the volume's statuses and counters stay as they are: the
        row stays, with its (known) ``attach_status`` and writer count."""
        before = self.expected.get("attach_status")
        return (isinstance(before, str) and not self.destroy
                and not self.writer_delta and self.status_after() == before)

    def row_only(self) -> bool:
        """Whether it changes columns of the row alone (one statement):
        the volume and the connector rows stay."""
        return self.keeps_volume() and not self.replace_connector

    def raises_to(self) -> str | None:
        """The row's ``attach_status`` after the change, when the row stays
        in an ``attach_status`` (known before and after) that can only
        raise the volume's statuses (``states.raises``), as
        ``os-complete``'s; None for any other change."""
        before = self.expected.get("attach_status")
        now = self.status_after()
        if (isinstance(before, str) and isinstance(now, str)
                and not self.destroy and states.raises(before, now)):
            return now
        return None


def _apply(conn: Conn, volume_id: str, attachment_id: str,
           change: Change) -> Destroyed | None:
    """Apply ``change``: the row first, then the volume if its status may
    follow (see the module's steps 1-3).

    :returns: what ``_destroy`` returns when the change removes the row.
    :raises Lost: ``change.expected`` did not match.
    """
    if change.destroy:
        return _destroy(conn, volume_id, attachment_id, change.expected)
    now = change.status_after()
    expected = dict(change.expected, volume_id=volume_id)
    if not conditional_update(conn, VA, attachment_id, expected,
                              change.values):
        raise Lost()
    if change.replace_connector:
        replace_connector(conn, attachment_id, change.connector)
    if change.keeps_volume():
        return None
    raises_to = change.raises_to()
    if raises_to is not None:
        raise_statuses(conn, volume_id, raises_to, change.writer_delta)
    else:
        state = lock_volume(conn, volume_id,
                            writer_delta=change.writer_delta)
        sync_volume(conn, volume_id, state, only_row(state, now))
    return None


def attachment_change(
        context: RequestContext, attachment_id: str,
        decide: Callable[[AttachmentWithConnector, VolumeBrief],
                         Change | None]
) -> tuple[AttachmentWithConnector, VolumeBrief, Destroyed | None]:
    """Read a row and its volume, let ``decide`` choose, apply it.

    The read is a statement of its own; the change's compare-and-swap,
    expecting what ``decide`` saw, is what makes acting on it safe.

    :param decide: ``(row, volume) -> Change`` or None for no change;
        raise to refuse (nothing written).
    :returns: ``(row, volume, destroyed)``: the row with the change's
        values, and what ``attachment_destroy`` returns if it was removed.
    :raises Lost: the row changed between the read and the write.
    :raises AttachmentNotFound:
    """
    row, volume, _none = attachment_with_volume(context, attachment_id)
    change = decide(row, volume)
    if change is None:
        return row, volume, None
    destroyed: Destroyed | None = None
    if change.row_only():
        values = {key: value for key, value in change.values.items()
                  if key != "attach_status"}
        if not attachment_record(context, volume.id, attachment_id,
                                 change.expected, values):
            raise Lost()
    elif ((raises_to := change.raises_to()) is not None
          and not change.replace_connector and data_modifying_with()):
        if not _raise_with_row(context, volume.id, attachment_id, change,
                               raises_to):
            raise Lost()
    else:
        destroyed = _attachment_cas(context, volume.id, attachment_id, change)
    return Record(**dict(vars(row), **change.values)), volume, destroyed


@functools.lru_cache(maxsize=None)
def _raising(query: sa.Update) -> sa.Update:
    """``query``, a compare-and-swap of a row, then ``RAISE`` of its volume
    if it matched: one statement (PostgreSQL's data-modifying ``WITH``).

    The row is locked before the volume, as in ``_apply``; the volume's
    lock is held until the statement's commit, with no round trip to the
    client in between.
    """
    changed = query.returning(VA.volume_id).cte("changed")
    return sa.update(VOL).where(VOL.id == changed.c.volume_id).ordered_values(
        *RAISE_VALUES)


@retry_on_deadlock
@single_statement(writer)
def _raise_with_row(conn: Conn, volume_id: str, attachment_id: str,
                    change: Change, raises_to: str) -> bool:
    """Apply a ``change`` that raises the volume's statuses (the row goes
    to ``raises_to``) and keeps the connector rows, in one statement
    (``_raising``; only where ``data_modifying_with``).

    :returns: whether ``change.expected`` matched (else nothing changed).
    """
    now = utcnow()
    query, params = compare_and_swap(
        VA, attachment_id, dict(change.expected, volume_id=volume_id),
        dict(change.values, updated_at=now))
    params.update(raised(raises_to),
                  writer_delta=change.writer_delta, now=now)
    return conn.execute(_raising(query), params).rowcount == 1


#: ``_apply(context, volume_id, attachment_id, change)`` in a writer
#: transaction of its own, on the driver's cursor.
_attachment_cas = retry_on_deadlock(transaction(writer)(_apply))


def attachment_cas(context: RequestContext, volume_id: str, attachment_id: str,
                   expected: dict[str, Any], values: dict[str, Any],
                   connector: dict[str, Any] | None = None,
                   replace_connector: bool = False,
                   writer_delta: int = 0) -> bool:
    """Compare-and-swap one attachment of ``volume_id``; recompute the volume.

    :param connector: new connector rows, when ``replace_connector``.
    :param writer_delta: change of the volume's writer count (mode set).
    :returns: whether ``expected`` matched (else nothing was written).
    """
    try:
        _attachment_cas(context, volume_id, attachment_id, Change(
            expected, values, connector, replace_connector, writer_delta))
    except Lost:
        return False
    return True


@retry_on_deadlock
@single_statement(writer)
def attachment_record(conn: Conn, volume_id: str, attachment_id: str,
                      expected: dict[str, Any], values: dict[str, Any]
                      ) -> bool:
    """Compare-and-swap columns of one row that leave its ``attach_status``
    (and so its volume's statuses) alone, such as the volume service
    recording a connection: one statement.

    :returns: whether ``expected`` matched (else nothing was written).
    :raises ValueError: ``values`` change ``attach_status``.
    """
    if "attach_status" in values:
        raise ValueError("attachment_record leaves attach_status alone")
    return conditional_update(conn, VA, attachment_id,
                              dict(expected, volume_id=volume_id), values)


_GONE = sa.select(VA.attached_host, VA.attach_mode, VA.fenced_at).where(
    VA.id == AID, VA.volume_id == VID)


@functools.lru_cache(maxsize=None)
def _returning_gone(query: sa.Delete) -> ReturningDelete[
        str | None, str, datetime.datetime | None]:
    return query.returning(VA.attached_host, VA.attach_mode, VA.fenced_at)


def _destroy(conn: Conn, volume_id: str, attachment_id: str,
             expected: dict[str, Any]) -> Destroyed:
    """Remove the row, then take the volume's lock; see attachment_destroy.

    :raises Lost: nothing matched.
    """
    query, params = compare_and_swap(
        VA, attachment_id, dict(expected, volume_id=volume_id), None)
    # NOTE(ashlar): the connector rows go with the row (ON DELETE CASCADE).
    if supports_returning(conn, "delete_returning"):
        gone = conn.execute(_returning_gone(query), params).first()
    else:
        gone = conn.execute(_GONE, {"attachment_id": attachment_id,
                                    "volume_id": volume_id}).first()
        if gone is not None and conn.execute(query, params).rowcount != 1:
            gone = None
    if gone is None:
        raise Lost()
    host, mode, fenced_at = gone
    state = state_after(conn, LEAVE, {
        "volume_id": volume_id, "now": utcnow(),
        "writer": int(states.counts_as_writer(mode, fenced_at))})
    if state is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    remaining: list[AttachmentRow] = []
    if state.attachment_count:
        remaining = list(conn.execute(LIVE_ROWS, {"volume_id": volume_id}))
        sync_volume(conn, volume_id, state,
                    [other.attach_status for other in remaining])
    shared = [other.id for other in remaining
              if host and other.attached_host == host
              and states.holds_connection(other.attach_status,
                                          other.transition)]
    return {"volume_id": volume_id, "remaining": remaining, "shared": shared}


#: ``_destroy(context, volume_id, attachment_id, expected)`` in a writer
#: transaction of its own, on the driver's cursor.
_attachment_destroy = retry_on_deadlock(transaction(writer)(_destroy))


def attachment_destroy(context: RequestContext, volume_id: str,
                       attachment_id: str, expected: dict[str, Any]
                       ) -> Destroyed | None:
    """Remove one row of ``volume_id`` if it matches ``expected``; recompute
    the volume.

    :returns: ``{"volume_id", "remaining": [rows], "shared": [ids]}``, as
        they stand in this transaction, or None when nothing matched.
    """
    try:
        return _attachment_destroy(context, volume_id, attachment_id,
                                   expected)
    except (Lost, exception.AttachmentNotFound):
        return None
