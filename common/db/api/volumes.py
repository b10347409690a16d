"""Volumes and their metadata."""

import collections
import functools
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm
from sqlalchemy.orm.interfaces import LoaderOption

from common import constants
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import groups as groups_db
from common.db.api import metadata as metadata_db
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import Record
from common.db.api.execution import SessionOrConnection
from common.db.api.execution import single_statement
from common.db.api.paging import LIMIT
from common.db.api.paging import newest_first
from common.db.api.paging import project_page
from common.db.api.rows import VolumeRow
from common.db.api.timestamps import utcnow


#: Runs in a writer transaction, on its connection or session, before its
#: change (a quota check, ``common.db.api.quotas.enforce``); raises to
#: refuse it.
Check = Callable[[SessionOrConnection], None]


_VOL = models.Volume.__table__
_TYPE = models.VolumeType.__table__
_META = models.VolumeMetadata.__table__
_ATT = models.VolumeAttachment.__table__

#: A volume and its type (an outer join: a volume may have none), and its
#: metadata too (a result row per item, one when it has none).
_OF_TYPE = _TYPE.c.id == _VOL.c.volume_type_id
_VOL_TYPE = _VOL.outerjoin(_TYPE, _OF_TYPE)
_VOL_TYPE_META = _VOL_TYPE.outerjoin(_META, _META.c.volume_id == _VOL.c.id)

#: The volume, its type's name and its metadata: a result row per item of
#: the metadata (one when it has none).
_VOLUME = sa.select(
    _VOL, _TYPE.c.name.label("type_name"), _META.c.key.label("meta_key"),
    _META.c.value.label("meta_value")).select_from(
    _VOL_TYPE_META).where(
    _VOL.c.id == sa.bindparam("volume_id"))
_ATTACHMENTS = sa.select(_ATT).where(
    _ATT.c.volume_id == sa.bindparam("volume_id"))
_GROUP_OF = sa.select(_VOL.c.group_id).where(
    _VOL.c.id == sa.bindparam("volume_id"))
#: What removing a volume deletes: what it owns, then its row.
_DESTROY = tuple(sa.delete(table).where(
    column == sa.bindparam("volume_id")) for table, column in (
    (_META, _META.c.volume_id),
    (models.Transfer.__table__, models.Transfer.__table__.c.volume_id),
    (_VOL, _VOL.c.id)))
_INSERT_VOLUME = sa.insert(_VOL)
_INSERT_METADATA = sa.insert(_META)


@retry_on_deadlock
@writer.connection
def volume_create(context: RequestContext, values: dict[str, Any],
                  metadata: Mapping[str, str | None] | None = None,
                  check: Check | None = None) -> VolumeRow:
    """Insert a volume, ``check`` first, in the same transaction; the
    volume as ``volume_get`` reads it."""
    conn = context.connection
    if check is not None:
        check(conn)
    conn.execute(_INSERT_VOLUME, values)
    if metadata:
        conn.execute(_INSERT_METADATA, [
            {"volume_id": values["id"], "key": key, "value": value}
            for key, value in metadata.items()])
    return volume_get(context, values["id"])


def _load_options(lazy_attachments: bool = False) -> list[LoaderOption]:
    """What an ORM volume read brings along: its type (without its extra
    specs) and metadata in one statement, and its attachments in another
    (or, ``lazy_attachments``, once read)."""
    attachments = orm.lazyload if lazy_attachments else orm.selectinload
    return [orm.joinedload(models.Volume.volume_type).raiseload(
                models.VolumeType.extra_specs),
            orm.joinedload(models.Volume.volume_metadata),
            attachments(models.Volume.attachments).raiseload(
                models.VolumeAttachment.specs)]


@functools.cache
def _reads() -> tuple[sa.Select[models.Volume],
                      sa.Select[models.VolumeAttachment]]:
    """The two prebuilt reads of ``_get`` (built once: building a query
    with its loader options costs more CPU than running it)."""
    volume = sa.select(models.Volume) \
        .where(models.Volume.id == sa.bindparam("volume_id")) \
        .options(*_load_options(lazy_attachments=True)) \
        .execution_options(populate_existing=True)
    attachments = sa.select(models.VolumeAttachment) \
        .where(models.VolumeAttachment.volume_id == sa.bindparam("volume_id")) \
        .options(orm.raiseload(models.VolumeAttachment.specs)) \
        .execution_options(populate_existing=True)
    return volume, attachments


def _get(session: orm.Session, volume_id: str) -> models.Volume:
    """One volume as an ORM row (to change it, or to page from it), its
    attachments read only when its counter has some (most reads are of
    volumes with none: a statement fewer)."""
    volume, attachments = _reads()
    key = {"volume_id": volume_id}
    row = session.execute(volume, key).unique().scalars().first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    orm.attributes.set_committed_value(
        row, "attachments", session.execute(attachments, key).scalars().all()
        if row.attachment_count else [])
    return row


def _type_record(type_id: str | None, name: str | None) -> Record | None:
    """A volume's ``volume_type`` as its reads give it: ``id`` and
    ``name``, None when no type row joined."""
    return None if name is None else Record(id=type_id, name=name)


@single_statement(reader)
def volume_get(conn: Conn, volume_id: str) -> VolumeRow:
    """``(context, volume_id)``: the volume (clients poll it), read with
    Core in one statement: its columns, ``volume_type`` (``id`` and
    ``name``; its extra specs come with ``types.type_resolve``),
    ``volume_metadata`` (``key``, ``value``) and ``attachments`` (rows of
    ``volume_attachment``, a second statement only when its counter has
    some).  A Record, read-only as a detached ORM row is.

    :raises VolumeNotFound:"""
    found = conn.execute(_VOLUME, {"volume_id": volume_id}).all()
    if not found:
        raise exception.VolumeNotFound(volume_id=volume_id)
    values = found[0]._asdict()
    type_name = values.pop("type_name")
    del values["meta_key"], values["meta_value"]
    return Record(
        **values, volume_type=_type_record(values["volume_type_id"],
                                           type_name),
        volume_metadata=[Record(key=row.meta_key, value=row.meta_value)
                         for row in found if row.meta_key is not None],
        attachments=conn.execute(_ATTACHMENTS, {"volume_id": volume_id})
        .all() if values["attachment_count"] else [])


@reader
def volume_list(context: RequestContext, project_id: str | None = None,
                filters: dict[str, Any] | None = None,
                limit: int | None = None, marker: str | None = None,
                sort_keys: list[str] | None = None,
                sort_dirs: list[str] | None = None,
                offset: int | None = None) -> list[models.Volume]:
    """List volumes of ``project_id`` (all projects when None).

    :raises VolumeNotFound: for an unknown marker, or one of another
        project, as Cinder does.
    """
    query = context.session.query(models.Volume).options(
        *_load_options())
    marker_row = _get(context.session, marker) if marker else None
    return project_page(query, models.Volume, project_id, filters,
                        marker_row, exception.VolumeNotFound(volume_id=marker),
                        limit, sort_keys, sort_dirs, offset)


#: The volume columns the list views show (``services.api.views.volumes``)
#: and ``attachment_count``: a page reads these, not every column.
_LISTED = tuple(_VOL.c[name] for name in (
    "id", "project_id", "user_id", "display_name", "display_description",
    "size", "status", "migration_status", "host", "cluster_name",
    "availability_zone", "volume_type_id", "multiattach", "bootable",
    "readonly", "encrypted", "service_uuid", "attachment_count",
    "snapshot_id", "source_volid", "group_id", "created_at", "updated_at"))
#: A volume of a page: the ``_LISTED`` columns, then its type, metadata
#: and (attached) attachments; read-only, as a Record.
ListedVolume = collections.namedtuple(  # type: ignore[misc]
    "ListedVolume", [column.name for column in _LISTED]
    + ["volume_type", "volume_metadata", "attachments"])
#: A page's metadata, and its volumes' attachments that are attached (the
#: only ones the views show), each one statement for the whole page.
_PAGE_METADATA = sa.select(_META.c.volume_id, _META.c.key, _META.c.value) \
    .where(_META.c.volume_id.in_(sa.bindparam("ids", expanding=True)))
_ATTACHED = sa.select(
    _ATT.c.id, _ATT.c.volume_id, _ATT.c.instance_uuid, _ATT.c.attached_host,
    _ATT.c.mountpoint, _ATT.c.attach_time, _ATT.c.attach_status).where(
    _ATT.c.attach_status == constants.AttachStatus.ATTACHED)
_PAGE_ATTACHMENTS = _ATTACHED.where(
    _ATT.c.volume_id.in_(sa.bindparam("ids", expanding=True)))


def volume_page(context: RequestContext, project_id: str | None = None,
                filters: dict[str, Any] | None = None,
                limit: int | None = None, marker: str | None = None,
                sort_keys: list[str] | None = None,
                sort_dirs: list[str] | None = None,
                offset: int | None = None) -> list[Any]:
    """The page ``volume_list`` reads, as the list views show it:
    ListedVolumes, with ``volume_type`` (a Record of ``id`` and ``name``),
    ``volume_metadata`` (Records of ``key`` and ``value``) and
    ``attachments`` (the attached ones only), in three statements per
    page and with no ORM objects (as ORM rows, a 1,000-row page cost
    about 2.5 times the api CPU of this read).

    A first page in the default order (no marker or offset) is read by
    prebuilt statements with no transaction (``first_page``); any other
    is built through the ORM.

    :raises VolumeNotFound: as ``volume_list``.
    """
    if (limit is not None and not (marker or offset)
            and newest_first(sort_keys or [], sort_dirs or [])):
        return first_page(context, project_id, filters or {}, limit)
    return _page(context, project_id, filters, limit, marker, sort_keys,
                 sort_dirs, offset)


@reader
def _page(context: RequestContext, project_id: str | None,
          filters: dict[str, Any] | None, limit: int | None,
          marker: str | None, sort_keys: list[str] | None,
          sort_dirs: list[str] | None, offset: int | None) -> list[Any]:
    query = context.session.query(*_LISTED, _TYPE.c.name).outerjoin(
        _TYPE, _OF_TYPE)
    marker_row = _get(context.session, marker) if marker else None
    rows = project_page(query, models.Volume, project_id, filters,
                        marker_row, exception.VolumeNotFound(volume_id=marker),
                        limit, sort_keys, sort_dirs, offset)
    return _listed(context.session, rows)


def _of_shape(query: sa.Select[Any], project: bool,
              keys: frozenset[str]) -> sa.Select[Any]:
    """``query`` limited to one project's volumes (``:project_id``) and
    to those whose columns ``keys`` equal ``:f_KEY``."""
    if project:
        query = query.where(_VOL.c.project_id == sa.bindparam("project_id"))
    for key in sorted(keys):
        query = query.where(_VOL.c[key] == sa.bindparam("f_" + key))
    return query


def _shape_params(project_id: str | None,
                  filters: Mapping[str, Any]) -> dict[str, Any]:
    params = {"f_" + key: value for key, value in filters.items()}
    if project_id is not None:
        params["project_id"] = project_id
    return params


# NOTE(ashlar): one statement per shape (whether of a project, which
# filters): a plan is cached per statement object, and the shapes are at
# most two per subset of the list's filters.
@functools.lru_cache(maxsize=None)
def _first_page_of(project: bool, keys: frozenset[str]) -> sa.Select[Any]:
    """The first ``:limit`` volumes of a shape, newest first."""
    listed = sa.select(*_LISTED, _TYPE.c.name).select_from(_VOL_TYPE)
    return _of_shape(listed, project, keys).order_by(
        _VOL.c.created_at.desc(), _VOL.c.id.desc()).limit(LIMIT)


@functools.lru_cache(maxsize=None)
def _count_of(project: bool, keys: frozenset[str]) -> sa.Select[Any]:
    return _of_shape(sa.select(sa.func.count()).select_from(_VOL),
                     project, keys)


@single_statement(reader)
def first_page(conn: Conn, project_id: str | None,
               filters: Mapping[str, Any], limit: int) -> list[Any]:
    """``(context, project_id, filters, limit)``: ``volume_page``'s first
    page in the default order, in its three statements, prebuilt, with no
    transaction (its ``ROLLBACK`` and ORM work cost the api more than the
    statements)."""
    params = _shape_params(project_id, filters)
    params["limit"] = limit
    rows = list(conn.execute(
        _first_page_of(project_id is not None, frozenset(filters)), params))
    return _listed(conn, rows)


#: ``volume_shown``'s read: the ``_LISTED`` columns, the type's name and
#: the metadata, a row per item of the metadata (one when it has none).
_SHOWN = sa.select(*_LISTED, _TYPE.c.name, _META.c.key.label("meta_key"),
                   _META.c.value.label("meta_value")).select_from(
    _VOL_TYPE_META).where(
    _VOL.c.id == sa.bindparam("volume_id"))
_SHOWN_ATTACHMENTS = _ATTACHED.where(
    _ATT.c.volume_id == sa.bindparam("volume_id"))


@single_statement(reader)
def volume_shown(conn: Conn, volume_id: str) -> Any:
    """``(context, volume_id)``: one volume as the views show it (a
    ListedVolume, as ``volume_page`` reads it), in one statement, a
    second for its attachments when its counter has some.  Narrower than
    ``volume_get``: with PyMySQL each column of a result costs the api a
    field descriptor parsed in Python, and ``GET /volumes/{id}`` read 52.

    :raises VolumeNotFound:"""
    found = conn.execute(_SHOWN, {"volume_id": volume_id}).all()
    if not found:
        raise exception.VolumeNotFound(volume_id=volume_id)
    *columns, type_name, _, _ = first = found[0]
    return ListedVolume._make((
        *columns, _type_record(first.volume_type_id, type_name),
        [Record(key=row.meta_key, value=row.meta_value)
         for row in found if row.meta_key is not None],
        conn.execute(_SHOWN_ATTACHMENTS, {"volume_id": volume_id}).all()
        if first.attachment_count else ()))


def _listed(conn: Conn | orm.Session, rows: list[Any]) -> list[Any]:
    """``rows`` (the ``_LISTED`` columns and the type's name) as
    ListedVolumes, with their metadata and attachments."""
    metadata: dict[str, list[Record]] = {}
    attachments: dict[str, list[Any]] = {}
    if rows:
        for item in conn.execute(_PAGE_METADATA,
                                 {"ids": [row.id for row in rows]}):
            metadata.setdefault(item.volume_id, []).append(
                Record(key=item.key, value=item.value))
    attached = [row.id for row in rows if row.attachment_count]
    if attached:
        for att in conn.execute(_PAGE_ATTACHMENTS, {"ids": attached}):
            attachments.setdefault(att.volume_id, []).append(att)
    types: dict[tuple[str, str | None], Record | None] = {}
    listed = []
    for row in rows:
        *columns, type_name = row
        key = (row.volume_type_id, type_name)
        if key not in types:
            types[key] = _type_record(*key)
        listed.append(ListedVolume._make((
            *columns, types[key], metadata.get(row.id, ()),
            attachments.get(row.id, ()))))
    return listed


@reader
def volumes_of_backend(context: RequestContext, backend: str,
                       statuses: Collection[str]) -> list[models.Volume]:
    """The volumes of ``backend`` (``host@backend``, any of its pools)
    in any of ``statuses``, in one statement: a node's periodic resume
    read every project's volumes of each status, one status at a time."""
    vol = models.Volume
    return list(context.session.query(vol).options(*_load_options()).filter(
        vol.status.in_(sorted(statuses)),
        sa.or_(vol.host == backend,
               vol.host.startswith(backend + "#", autoescape=True))
    ).order_by(vol.created_at.desc(), vol.id.desc()).all())


@single_statement(reader)
def volume_count(conn: Conn, project_id: str | None = None,
                 filters: dict[str, Any] | None = None) -> int:
    """``(context, project_id, filters)``: how many volumes
    ``volume_list`` lists without a page, in one prebuilt ``SELECT
    count(*)`` of its own (no rows read: ``with_count`` at 100,000 volumes
    read them all; no transaction: its round trips and ORM work cost the
    api more than the count)."""
    given = filters or {}
    statement = _count_of(project_id is not None, frozenset(given))
    params = _shape_params(project_id, given)
    return int(conn.execute(statement, params).one()[0])


@retry_on_deadlock
@writer
def volume_update(context: RequestContext, volume_id: str,
                  values: dict[str, Any],
                  metadata: Mapping[str, str | None] | None = None,
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
def volume_metadata_delete(context: RequestContext, volume_id: str,
                           key: str) -> None:
    """Remove one key of the volume's metadata.

    :raises VolumeNotFound:
    :raises VolumeMetadataNotFound: the volume has no such key.
    """
    metadata_db.delete_item(
        context.session, models.Volume, models.VolumeMetadata.volume_id,
        volume_id, key, exception.VolumeNotFound(volume_id=volume_id),
        exception.VolumeMetadataNotFound(volume_id=volume_id,
                                         metadata_key=key))


def volume_cas(context: RequestContext, volume_id: str,
               expected: dict[str, Any], values: dict[str, Any],
               check: Check | None = None,
               then: Check | None = None) -> bool:
    """Compare-and-swap the volume's status fields; see conditional_update.
    ``check`` first and, once the swap is made, ``then`` (which may raise to
    undo it), in the same transaction; without either, the swap is one
    statement on its own (``single_statement``)."""
    if check is None and then is None:
        return _volume_swap(context, volume_id, expected, values)
    return _volume_cas_checked(context, volume_id, expected, values, check,
                               then)


_SERVICES = models.Service.__table__
_CLUSTERS = models.Cluster.__table__
_SERVICE: sa.BindParameter[str] = sa.bindparam("service_host")
#: A creating volume placed on a pool, only while that pool's backend is
#: enabled (its service, or for a cluster one member and the cluster): a
#: placement made from a list of running backends read before an
#: operator's disable cannot land on the disabled one.
_PLACE = sa.update(_VOL).where(
    _VOL.c.id == sa.bindparam("volume_id"),
    _VOL.c.status == constants.VolumeStatus.CREATING,
    _VOL.c.host.is_(None),
    sa.exists().where(sa.or_(_SERVICES.c.host == _SERVICE,
                             _SERVICES.c.cluster_name == _SERVICE),
                      _SERVICES.c.binary == constants.VOLUME_BINARY,
                      _SERVICES.c.disabled.is_(False)),
    ~sa.exists().where(_CLUSTERS.c.name == _SERVICE,
                       _CLUSTERS.c.binary == constants.VOLUME_BINARY,
                       _CLUSTERS.c.disabled.is_(True))).values(
    host=sa.bindparam("host"),
    cluster_name=sa.bindparam("cluster_name"),
    availability_zone=sa.func.coalesce(sa.bindparam("zone"),
                                       _VOL.c.availability_zone),
    updated_at=sa.bindparam("now"))


@retry_on_deadlock
@single_statement(writer)
def volume_place(conn: Conn, volume_id: str, host: str, zone: str | None,
                 cluster: bool = False) -> bool:
    """Place a ``creating`` volume on ``host`` (``host@backend#pool``), and
    in ``zone`` if given, unless it was placed meanwhile or that backend is
    disabled now; tell whether it was placed.

    :param cluster: the pool is a cluster's (``cluster@backend#pool``):
        the volume names it as its ``cluster_name``.
    """
    backend = host.split("#", 1)[0]
    return conn.execute(_PLACE, {
        "volume_id": volume_id, "host": host, "zone": zone, "now": utcnow(),
        "service_host": backend,
        "cluster_name": backend if cluster else None}).rowcount == 1


@retry_on_deadlock
@single_statement(writer)
def _volume_swap(conn: Conn, volume_id: str, expected: dict[str, Any],
                 values: dict[str, Any]) -> bool:
    return conditional_update(conn, models.Volume, volume_id, expected,
                              values)


@retry_on_deadlock
@writer.connection
def _volume_cas_checked(context: RequestContext, volume_id: str,
                        expected: dict[str, Any], values: dict[str, Any],
                        check: Check | None, then: Check | None) -> bool:
    conn = context.connection
    if check is not None:
        check(conn)
    swapped = conditional_update(conn, models.Volume, volume_id, expected,
                                 values)
    if swapped and then is not None:
        then(conn)
    return swapped


@retry_on_deadlock
@writer.connection
def volume_destroy(context: RequestContext, volume_id: str) -> None:
    """Remove the row, its metadata and any transfer of it (the caller
    made sure nothing is attached); the last volume of a ``deleting`` group
    takes the group with it."""
    conn = context.connection
    key = {"volume_id": volume_id}
    group_id = conn.execute(_GROUP_OF, key).scalar()
    for statement in _DESTROY:
        conn.execute(statement, key)
    if group_id is not None:
        groups_db.settle_deleted(conn, group_id)


def metadata_of(row: VolumeRow) -> dict[str, str | None]:
    return {item.key: item.value for item in row.volume_metadata}


@reader
def usage_on_host(context: RequestContext,
                  host: str) -> dict[str, list[int]]:
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


#: Ids a read of moved volumes names in one statement.
_MOVED_CHUNK = 500


@reader
def moved_volumes(context: RequestContext, volume_ids: Collection[str]
                  ) -> list[Any]:
    """Of the volumes ``volume_ids``, those whose ``migration_status``
    says they moved (``success``, or ``error`` of an ended move): their
    id, size, host, provider_location, migration_status and times."""
    vol = models.Volume
    ids = sorted(volume_ids)
    found: list[Any] = []
    for start in range(0, len(ids), _MOVED_CHUNK):
        found += context.session.execute(sa.select(
            vol.id, vol.size, vol.host, vol.provider_location,
            vol.migration_status, vol.updated_at, vol.created_at).where(
            vol.id.in_(ids[start:start + _MOVED_CHUNK]),
            vol.migration_status.in_((constants.MigrationStatus.SUCCESS,
                                      constants.MigrationStatus.ERROR))
        )).all()
    return found
