"""User messages: write one, read, list and delete them, and remove
those past their ``expires_at``.

Rows are deleted outright (no soft delete, as elsewhere in Ashlar); a
message's text is not stored, only its catalog ids (``common.messages``).
"""

import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection
from common.db.api.paging import project_page
from common.db.api.timestamps import utcnow

MSG = models.Message


def _get(session: orm.Session, message_id: str) -> models.Message:
    row = session.execute(sa.select(MSG).where(
        MSG.id == message_id)).scalars().first()
    if row is None:
        raise exception.MessageNotFound(message_id=message_id)
    return row


@retry_on_deadlock
@writer
def message_create(context: RequestContext, values: dict[str, Any],
                   ttl: float) -> models.Message:
    """Insert a message that expires ``ttl`` seconds from now.

    :param values: the columns but ``created_at`` and ``expires_at``.
    """
    now = utcnow()
    row = MSG(created_at=now,
              expires_at=now + datetime.timedelta(seconds=ttl), **values)
    context.session.add(row)
    context.session.flush()
    return row


def message_insert(conn: SessionOrConnection, values: dict[str, Any],
                   ttl: float) -> None:
    """Insert a message on ``conn``, in a transaction the caller holds
    (the status change the message explains, e.g.), expiring ``ttl``
    seconds from now."""
    now = utcnow()
    conn.execute(sa.insert(MSG), [dict(
        values, created_at=now,
        expires_at=now + datetime.timedelta(seconds=ttl))])


@reader
def message_get(context: RequestContext, message_id: str) -> models.Message:
    """:raises MessageNotFound:"""
    return _get(context.session, message_id)


@reader
def message_list(context: RequestContext, project_id: str | None = None,
                 filters: dict[str, Any] | None = None,
                 limit: int | None = None, marker: str | None = None,
                 sort_keys: list[str] | None = None,
                 sort_dirs: list[str] | None = None,
                 offset: int | None = None) -> list[models.Message]:
    """List the messages of ``project_id`` (all projects when None),
    newest first unless sorted otherwise.

    :param filters: column -> value, all of which must match.
    :raises MessageNotFound: an unknown marker, or one of another project.
    """
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(MSG), MSG, project_id,
                        filters, marker_row,
                        exception.MessageNotFound(message_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def message_destroy(context: RequestContext, message_id: str) -> None:
    """:raises MessageNotFound: no such message (any more)."""
    # Session.execute's DML result is a CursorResult (typed Result).
    if context.session.execute(  # type: ignore[attr-defined]
            sa.delete(MSG).where(MSG.id == message_id)).rowcount != 1:
        raise exception.MessageNotFound(message_id=message_id)


@retry_on_deadlock
@writer
def message_destroy_expired(context: RequestContext) -> int:
    """Delete every message past its ``expires_at``; how many went.

    Idempotent: schedulers running it at once delete each row once.
    """
    # Session.execute's DML result is a CursorResult (typed Result).
    gone: int = context.session.execute(  # type: ignore[attr-defined]
        sa.delete(MSG).where(MSG.expires_at < utcnow())).rowcount
    return gone
