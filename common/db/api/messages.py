"""User messages: write one, read, list and delete them, and remove
those past their ``expires_at``.

Rows are deleted outright (no soft delete, as elsewhere in Ashlar); a
message's text is not stored, only its catalog ids (``common.messages``).
"""

import datetime
from typing import Any

import sqlalchemy as sa

from common import exception
from common.db import models
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.paging import project_page
from common.db.api.timestamps import utcnow

MSG = models.Message


def _get(session: Any, message_id: str) -> models.Message:
    row = session.execute(sa.select(MSG).where(
        MSG.id == message_id)).scalars().first()
    if row is None:
        raise exception.MessageNotFound(message_id=message_id)
    return row


@retry_on_deadlock
@writer
def message_create(context: Any, values: dict,
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


@reader
def message_get(context: Any, message_id: str) -> models.Message:
    """:raises MessageNotFound:"""
    return _get(context.session, message_id)


@reader
def message_list(context: Any, project_id: str | None = None,
                 filters: dict | None = None, limit: int | None = None,
                 marker: str | None = None, sort_keys: list | None = None,
                 sort_dirs: list | None = None,
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
def message_destroy(context: Any, message_id: str) -> None:
    """:raises MessageNotFound: no such message (any more)."""
    if context.session.execute(sa.delete(MSG).where(
            MSG.id == message_id)).rowcount != 1:
        raise exception.MessageNotFound(message_id=message_id)


@retry_on_deadlock
@writer
def message_destroy_expired(context: Any) -> int:
    """Delete every message past its ``expires_at``; how many went.

    Idempotent: schedulers running it at once delete each row once.
    """
    return context.session.execute(sa.delete(MSG).where(
        MSG.expires_at < utcnow())).rowcount
