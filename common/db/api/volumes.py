"""Volumes and their metadata."""

import functools
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import exception
from common.db import models
from common.db.api import autocommit_read
from common.db.api import conditional_update
from common.db.api import groups as groups_db
from common.db.api import metadata as metadata_db
from common.db.api import project_page
from common.db.api import reader
from common.db.api import retry_on_deadlock
from common.db.api import single_statement
from common.db.api import utcnow
from common.db.api import writer


#: Runs in a writer transaction's session before its change (a quota
#: check, ``common.db.api.quotas.enforce``); raises to refuse it.
Check = Callable[[Any], None]


@retry_on_deadlock
@writer
def volume_create(context: Any, values: dict, metadata: dict | None = None,
                  check: Check | None = None) -> models.Volume:
    """Insert a volume; ``check`` first, in the same transaction."""
    if check is not None:
        check(context.session)
    row = models.Volume(**values)
    row.volume_metadata = [models.VolumeMetadata(key=k, value=v)
                           for k, v in (metadata or {}).items()]
    context.session.add(row)
    context.session.flush()
    return _get(context.session, row.id)


def _load_options(with_type_specs: bool,
                  attachments: Any = orm.selectinload) -> list:
    """What a volume read brings along: its type and metadata in one
    statement, and its attachments (``attachments``, a loader option) in
    another; the type's extra specs only when asked for."""
    vtype = orm.joinedload(models.Volume.volume_type)
    return [vtype.selectinload(models.VolumeType.extra_specs)
            if with_type_specs
            else vtype.raiseload(models.VolumeType.extra_specs),
            orm.joinedload(models.Volume.volume_metadata),
            attachments(models.Volume.attachments).raiseload(
                models.VolumeAttachment.specs)]


@functools.cache
def _reads(with_type_specs: bool) -> tuple[Any, Any]:
    """The two prebuilt reads of ``_get`` (built once: building a query
    with its loader options costs more CPU than running it)."""
    volume = sa.select(models.Volume) \
        .where(models.Volume.id == sa.bindparam("volume_id")) \
        .options(*_load_options(with_type_specs, orm.lazyload)) \
        .execution_options(populate_existing=True)
    attachments = sa.select(models.VolumeAttachment) \
        .where(models.VolumeAttachment.volume_id == sa.bindparam("volume_id")) \
        .options(orm.raiseload(models.VolumeAttachment.specs)) \
        .execution_options(populate_existing=True)
    return volume, attachments


def _get(session: Any, volume_id: str,
         with_type_specs: bool = False) -> models.Volume:
    """One volume, its attachments read only when its counter has some
    (most reads are of volumes with none: a statement fewer)."""
    volume, attachments = _reads(with_type_specs)
    key = {"volume_id": volume_id}
    row = session.execute(volume, key).unique().scalars().first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    orm.attributes.set_committed_value(
        row, "attachments", session.execute(attachments, key).scalars().all()
        if row.attachment_count else [])
    return row


@autocommit_read
def volume_get(session: Any, volume_id: str,
               with_type_specs: bool = False) -> models.Volume:
    """``(context, volume_id)``: the volume, read on its own (clients poll
    it), or in the context's open transaction.

    :param with_type_specs: also load the type's extra specs.
    :raises VolumeNotFound:"""
    return _get(session, volume_id, with_type_specs)


@reader
def volume_list(context: Any, project_id: str | None = None,
                filters: dict | None = None, limit: int | None = None,
                marker: str | None = None, sort_keys: list | None = None,
                sort_dirs: list | None = None,
                offset: int | None = None) -> list[models.Volume]:
    """List volumes of ``project_id`` (all projects when None).

    :raises VolumeNotFound: for an unknown marker, or one of another
        project, as Cinder does.
    """
    query = context.session.query(models.Volume).options(
        *_load_options(False))
    marker_row = _get(context.session, marker) if marker else None
    return project_page(query, models.Volume, project_id, filters,
                        marker_row, exception.VolumeNotFound(volume_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def volume_update(context: Any, volume_id: str, values: dict,
                  metadata: dict | None = None,
                  delete_metadata: bool = True) -> models.Volume:
    """Change non-status fields and the metadata.

    :param metadata: the whole new set (keys not in it go); without
        ``delete_metadata``, keys merged into the volume's metadata.
    :raises VolumeNotFound:
    """
    row = _get(context.session, volume_id)
    for key, value in values.items():
        setattr(row, key, value)
    if metadata is not None:
        metadata_db.set_items(context.session, row, "volume_metadata",
                              models.VolumeMetadata, metadata,
                              replace=delete_metadata)
    row.updated_at = utcnow()
    return row


@retry_on_deadlock
@writer
def volume_metadata_delete(context: Any, volume_id: str, key: str) -> None:
    """Remove one key of the volume's metadata.

    :raises VolumeNotFound:
    :raises VolumeMetadataNotFound: the volume has no such key.
    """
    metadata_db.delete_item(
        context.session, models.Volume, models.VolumeMetadata.volume_id,
        volume_id, key, exception.VolumeNotFound(volume_id=volume_id),
        exception.VolumeMetadataNotFound(volume_id=volume_id,
                                         metadata_key=key))


def volume_cas(context: Any, volume_id: str, expected: dict,
               values: dict, check: Check | None = None,
               then: Check | None = None) -> bool:
    """Compare-and-swap the volume's status fields; see conditional_update.
    ``check`` first and, once the swap is made, ``then`` (which may raise to
    undo it), in the same transaction; without either, the swap is one
    statement on its own (``single_statement``)."""
    if check is None and then is None:
        return _volume_swap(context, volume_id, expected, values)
    return _volume_cas_checked(context, volume_id, expected, values, check,
                               then)


@retry_on_deadlock
@single_statement(writer)
def _volume_swap(conn: Any, volume_id: str, expected: dict,
                 values: dict) -> bool:
    return conditional_update(conn, models.Volume, volume_id, expected,
                              values)


@retry_on_deadlock
@writer
def _volume_cas_checked(context: Any, volume_id: str, expected: dict,
                        values: dict, check: Check | None,
                        then: Check | None) -> bool:
    if check is not None:
        check(context.session)
    swapped = conditional_update(context.session, models.Volume, volume_id,
                                 expected, values)
    if swapped and then is not None:
        then(context.session)
    return swapped


@retry_on_deadlock
@writer
def volume_destroy(context: Any, volume_id: str) -> None:
    """Remove the row, its metadata and any transfer of it (the caller
    made sure nothing is attached); the last volume of a ``deleting`` group
    takes the group with it."""
    session = context.session
    group_id = session.execute(sa.select(models.Volume.group_id).where(
        models.Volume.id == volume_id)).scalar()
    for owned in (models.VolumeMetadata, models.Transfer):
        session.execute(sa.delete(owned).where(owned.volume_id == volume_id))
    session.execute(sa.delete(models.Volume).where(
        models.Volume.id == volume_id))
    if group_id is not None:
        groups_db.settle_deleted(session, group_id)


def metadata_of(row: models.Volume) -> dict:
    return {item.key: item.value for item in row.volume_metadata}


@reader
def usage_on_host(context: Any, host: str) -> dict[str, list[int]]:
    """Per project: ``[volumes, their GB, snapshots, their GB]`` of the
    volumes of ``host`` (``host@backend``, any of its pools)."""
    vol, snap = models.Volume, models.Snapshot
    on_host = sa.or_(vol.host == host,
                     vol.host.startswith(host + "#", autoescape=True))
    found: dict[str, list[int]] = {}
    for project, count, size in context.session.execute(
            sa.select(vol.project_id, sa.func.count(),
                      sa.func.coalesce(sa.func.sum(vol.size), 0))
            .where(on_host).group_by(vol.project_id)):
        found[project] = [count, int(size), 0, 0]
    for project, count, size in context.session.execute(
            sa.select(snap.project_id, sa.func.count(),
                      sa.func.coalesce(sa.func.sum(snap.volume_size), 0))
            .join(vol, snap.volume_id == vol.id)
            .where(on_host).group_by(snap.project_id)):
        found.setdefault(project, [0, 0, 0, 0])[2:] = [count, int(size)]
    return found
