"""Reads of attachments.

One row, a row with its volume, the volume alone, what removing a host
connection needs: each one statement with no transaction of its own
(``single_statement``), on the prebuilt statements, and so is a page of
one volume's rows in the default order.  The other lists (a page, a
volume's rows, a backend's rows in flight or with a lapsed lease) go
through the ORM.
"""

import datetime
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api.attachments.connectors import decode_connector
from common.db.api.attachments.statements import DISCONNECT_STATE
from common.db.api.attachments.statements import PREFIX
from common.db.api.attachments.statements import SELECT_BRIEF
from common.db.api.attachments.statements import SELECT_ROW
from common.db.api.attachments.statements import SHARED
from common.db.api.attachments.statements import VA
from common.db.api.attachments.statements import VOL
from common.db.api.attachments.statements import VOLUME_PAGE
from common.db.api.attachments.statements import VOLUME_PAGE_OWNED
from common.db.api.attachments.statements import WITH_VOLUME
from common.db.api.attachments.statements import WITH_VOLUME_SHARED
from common.db.api.engine import reader
from common.db.api.execution import Conn
from common.db.api.execution import Record
from common.db.api.execution import single_statement
from common.db.api.paging import newest_first
from common.db.api.paging import page
from common.db.api.rows import AttachmentRow
from common.db.api.rows import AttachmentStatus
from common.db.api.rows import AttachmentWithConnector
from common.db.api.rows import VolumeBrief

#: An attachment row, its volume, the other rows sharing its connection.
_WithVolume = tuple[AttachmentWithConnector, VolumeBrief, list[str]]


def _shared(conn: Conn, volume_id: str, attachment_id: str,
            host: str | None) -> list[str]:
    """Other live rows of the volume connected (or connecting) on ``host``."""
    if not host:
        return []
    return list(conn.execute(SHARED, {
        "volume_id": volume_id, "attachment_id": attachment_id,
        "host": host}).scalars())


def _brief(conn: Conn, volume_id: str) -> VolumeBrief:
    row = conn.execute(SELECT_BRIEF, {"volume_id": volume_id}).first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return row


def _with_volume(conn: Conn, attachment_id: str,
                 shared: bool = False) -> _WithVolume:
    """The row (plus ``has_connector``), its volume's ``BRIEF`` columns
    and, if asked, the other rows sharing its host connection
    (``_shared``), in one statement.

    :raises AttachmentNotFound:
    """
    found = conn.execute(WITH_VOLUME_SHARED if shared else WITH_VOLUME,
                         {"attachment_id": attachment_id}).all()
    if not found:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    values = found[0]._asdict()
    others = [row.shared_id for row in found if shared and row.shared_id]
    values.pop("shared_id", None)
    volume = {key[len(PREFIX):]: values.pop(key)
              for key in list(values) if key.startswith(PREFIX)}
    return Record(**values), Record(**volume), others


@single_statement(reader)
def attachment_get(conn: Conn, attachment_id: str) -> AttachmentRow:
    """:raises AttachmentNotFound:"""
    found = conn.execute(SELECT_ROW, {"attachment_id": attachment_id}).first()
    if found is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    return Record(**found._asdict())


@single_statement(reader)
def volume_brief(conn: Conn, volume_id: str) -> VolumeBrief:
    """The volume's columns of ``BRIEF`` (attribute access).

    :raises VolumeNotFound:
    """
    return _brief(conn, volume_id)


@single_statement(reader)
def attachment_with_volume(conn: Conn, attachment_id: str,
                           shared: bool = False) -> _WithVolume:
    """The row, its volume (as ``volume_brief``) and, if asked, its
    ``shared_connections_by_attachment``, in one read.

    :raises AttachmentNotFound:
    """
    return _with_volume(conn, attachment_id, shared)


@single_statement(reader)
def disconnect_state(conn: Conn, volume_id: str, attachment_id: str,
                     host: str | None
                     ) -> tuple[AttachmentStatus | None, dict[str, Any],
                                list[str]]:
    """What removing a row's host connection needs, in one read: the row's
    ``attach_status``/``transition`` (None when gone), its connector and
    the other rows using the connection."""
    parts: dict[str, list[Any]] = {"row": [], "spec": [], "holder": []}
    for found in conn.execute(DISCONNECT_STATE, {
            "attachment_id": attachment_id, "volume_id": volume_id,
            "host": host}):
        parts[found.part].append(found)
    if not parts["row"]:
        return None, {}, []
    row = parts["row"][0]
    return (Record(id=attachment_id, attach_status=row.key,
                   transition=row.value),
            decode_connector((spec.key, spec.value)
                             for spec in parts["spec"]),
            [holder.key for holder in parts["holder"]])


@single_statement(reader)
def connection_holders(conn: Conn, volume_id: str, attachment_id: str,
                       host: str | None) -> list[str]:
    """Rows besides ``attachment_id`` that use the volume's ``host``
    connection (what decides whether terminating it is safe)."""
    return _shared(conn, volume_id, attachment_id, host)


def _project_of(session: orm.Session, volume_id: str) -> str | None:
    return session.execute(sa.select(VOL.project_id).where(
        VOL.id == volume_id)).scalar()


def attachment_list(context: RequestContext, project_id: str | None = None,
                    filters: dict[str, Any] | None = None,
                    limit: int | None = None, marker: str | None = None,
                    sort_keys: list[str] | None = None,
                    sort_dirs: list[str] | None = None,
                    offset: int | None = None) -> Sequence[AttachmentRow]:
    """Attachments of volumes in ``project_id`` (all when None), as rows
    with every column (attribute access).

    ``GET /attachments?volume_id=`` with no marker or offset, in the
    default order (the list's usual read), is one prebuilt statement
    (``volume_page``); any other list is built through the ORM.

    :raises AttachmentNotFound: for an unknown marker, or one of another
        project.
    """
    if (filters and list(filters) == ["volume_id"] and limit is not None
            and not (marker or offset)
            and newest_first(sort_keys or [], sort_dirs or [])):
        return volume_page(context, filters["volume_id"], project_id, limit)
    return _listed(context, project_id, filters, limit, marker, sort_keys,
                   sort_dirs, offset)


@single_statement(reader)
def volume_page(conn: Conn, volume_id: str, project_id: str | None,
                limit: int) -> list[AttachmentRow]:
    """The volume's first ``limit`` rows, newest first; none when
    ``project_id`` is given and the volume is not that project's."""
    if project_id is None:
        found = conn.execute(VOLUME_PAGE, {"volume_id": volume_id,
                                           "limit": limit})
    else:
        found = conn.execute(VOLUME_PAGE_OWNED, {
            "volume_id": volume_id, "project_id": project_id,
            "limit": limit})
    return [Record(**row._asdict()) for row in found]


@reader
def _listed(context: RequestContext, project_id: str | None,
            filters: dict[str, Any] | None, limit: int | None,
            marker: str | None, sort_keys: list[str] | None,
            sort_dirs: list[str] | None, offset: int | None
            ) -> list[models.VolumeAttachment]:
    query = context.session.query(VA)
    if project_id is not None:
        query = query.join(VOL, VOL.id == VA.volume_id).filter(
            VOL.project_id == project_id)
    for key, value in (filters or {}).items():
        query = query.filter(getattr(VA, key) == value)
    marker_row = None
    if marker:
        marker_row = context.session.get(VA, marker)
        if marker_row is None or project_id not in (
                None, _project_of(context.session, marker_row.volume_id)):
            raise exception.AttachmentNotFound(attachment_id=marker)
    return page(query, VA, marker_row, limit, sort_keys, sort_dirs, offset)


@reader
def attachments_of_volume(context: RequestContext, volume_id: str
                          ) -> list[models.VolumeAttachment]:
    query = sa.select(VA).where(VA.volume_id == volume_id).order_by(
        VA.created_at)
    return list(context.session.execute(query).scalars())


def _rows_of_backend(context: RequestContext, backend: str,
                     *where: sa.ColumnElement[bool]
                     ) -> list[models.VolumeAttachment]:
    query = sa.select(VA).join(VOL, VOL.id == VA.volume_id).where(
        *where, VOL.host.like(backend + "#%"))
    return list(context.session.execute(query).scalars())


@reader
def attachments_in_transition(context: RequestContext, backend: str,
                              older_than: datetime.datetime
                              ) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes in flight since before ``older_than``."""
    return _rows_of_backend(
        context, backend, VA.transition.is_not(None),
        sa.func.coalesce(VA.updated_at, VA.created_at) < older_than)


@reader
def attachments_with_lapsed_lease(context: RequestContext, backend: str,
                                  now: datetime.datetime
                                  ) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes at rest whose agent's lease lapsed
    before ``now`` (never completed: reserved or attaching, not fenced)."""
    return _rows_of_backend(
        context, backend, VA.lease_expires_at < now, VA.transition.is_(None),
        VA.fenced_at.is_(None),
        VA.attach_status.in_(states.UNCOMPLETED))


@reader
def attachments_unconfirmed(context: RequestContext, backend: str,
                            older_than: datetime.datetime
                            ) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes connected and at rest since before
    ``older_than`` that no one completed and no lease covers (made over
    REST: ``attaching``, no transition, no lease, not fenced)."""
    return _rows_of_backend(
        context, backend, VA.lease_expires_at.is_(None),
        VA.transition.is_(None), VA.fenced_at.is_(None),
        VA.attach_status == states.ATT.ATTACHING,
        sa.func.coalesce(VA.updated_at, VA.created_at) < older_than)
