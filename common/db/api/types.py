"""Volume types, their extra specs and project access."""

import types
import uuid
from collections.abc import Mapping
from typing import Any
from typing import TypeVar

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy import orm

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import single_statement
from common.db.api.rows import ResolvedType

#: A type's extra specs: key -> value (which may be NULL).
Specs = dict[str, str | None]

_Query = TypeVar("_Query", bound=sa.Select[models.VolumeType])
_Specs = TypeVar("_Specs", bound=Mapping[str, str | None])


def _get(session: orm.Session, type_id: str) -> models.VolumeType:
    row = session.get(models.VolumeType, type_id)
    if row is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return row


def _in_use(session: orm.Session, type_id: str) -> bool:
    """Whether a volume has the type, or is being retyped to it."""
    query = sa.select(models.Volume.id).where(sa.or_(
        models.Volume.volume_type_id == type_id,
        models.Volume.pending_type_id == type_id)).limit(1)
    return session.execute(query).first() is not None


@retry_on_deadlock
@writer
def type_create(context: RequestContext, name: str,
                description: str | None = None, is_public: bool = True,
                extra_specs: Mapping[str, str | None] | None = None
                ) -> models.VolumeType:
    """Create a type; :raises VolumeTypeExists: when the name is taken."""
    row = models.VolumeType(id=str(uuid.uuid4()), name=name,
                            description=description, is_public=is_public)
    row.extra_specs = [models.VolumeTypeExtraSpec(key=k, value=v)
                       for k, v in (extra_specs or {}).items()]
    context.session.add(row)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeExists(name=name)
    return row


@reader
def type_get(context: RequestContext, type_id: str) -> models.VolumeType:
    return _get(context.session, type_id)


@reader
def type_get_by_name(context: RequestContext, name: str) -> models.VolumeType:
    query = sa.select(models.VolumeType).where(models.VolumeType.name == name)
    row = context.session.execute(query).scalars().first()
    if row is None:
        raise exception.VolumeTypeNotFoundByName(volume_type_name=name)
    return row


_TYPES = models.VolumeType.__table__
_SPECS = models.VolumeTypeExtraSpec.__table__
_NAME_OR_ID: sa.BindParameter[str] = sa.bindparam("name_or_id")
#: Types whose id or name is the key, one row per extra spec (Core, built
#: once: this is on the path of every create).
_TYPE_WITH_SPECS = sa.select(
    _TYPES.c.id, _TYPES.c.name, _TYPES.c.description, _TYPES.c.is_public,
    _SPECS.c.key, _SPECS.c.value).select_from(_TYPES.outerjoin(
        _SPECS, _SPECS.c.volume_type_id == _TYPES.c.id)).where(
    sa.or_(_TYPES.c.id == _NAME_OR_ID, _TYPES.c.name == _NAME_OR_ID))


_ACCESS = models.VolumeTypeProject.__table__
_HAS_ACCESS = sa.select(_ACCESS.c.id).where(
    _ACCESS.c.volume_type_id == sa.bindparam("type_id"),
    _ACCESS.c.project_id == sa.bindparam("project_id")).limit(1)


@single_statement(reader)
def type_resolve(conn: Conn, name_or_id: str,
                 project_id: str | None = None
                 ) -> tuple[ResolvedType, Specs]:
    """``(context, name_or_id)``: resolve what a create, retype or pool
    filter names: an id first, then a name.  One statement (two for a
    private type), no transaction of its own.

    :param project_id: the project that will use the type: a private type
        it has no access to is not found.  None: any type (administrators).
    :returns: the type (``id``, ``name``, ``description``, ``is_public``)
        and its extra specs.
    :raises VolumeTypeNotFoundByName:
    """
    rows = conn.execute(_TYPE_WITH_SPECS, {"name_or_id": name_or_id}).all()
    if not rows:
        raise exception.VolumeTypeNotFoundByName(volume_type_name=name_or_id)
    chosen = min(rows, key=lambda r: r.id != name_or_id).id
    mine = [r for r in rows if r.id == chosen]
    vtype = types.SimpleNamespace(id=chosen, name=mine[0].name,
                                  description=mine[0].description,
                                  is_public=mine[0].is_public)
    if (project_id is not None and not vtype.is_public
            and conn.execute(_HAS_ACCESS, {"type_id": chosen,
                                           "project_id": project_id}
                             ).first() is None):
        raise exception.VolumeTypeNotFoundByName(volume_type_name=name_or_id)
    return vtype, {r.key: r.value for r in mine if r.key is not None}


def _visible_to(query: _Query, project_id: str) -> _Query:
    """Public types and the private ones ``project_id`` may use."""
    shared = sa.select(models.VolumeTypeProject.volume_type_id).where(
        models.VolumeTypeProject.project_id == project_id)
    return query.where(sa.or_(models.VolumeType.is_public.is_(True),
                              models.VolumeType.id.in_(shared)))


@reader
def type_get_for(context: RequestContext, type_id: str,
                 project_id: str | None) -> models.VolumeType:
    """A type ``project_id`` may use (any type when it is None).

    :raises VolumeTypeNotFound: no such type, or private without access.
    """
    query = sa.select(models.VolumeType).where(models.VolumeType.id == type_id)
    if project_id is not None:
        query = _visible_to(query, project_id)
    row = context.session.execute(query).scalars().first()
    if row is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return row


@reader
def type_access_list(context: RequestContext, type_id: str) -> list[str]:
    """The projects that may use a (private) type, in the order added."""
    query = sa.select(models.VolumeTypeProject.project_id).where(
        models.VolumeTypeProject.volume_type_id == type_id).order_by(
        models.VolumeTypeProject.id)
    return list(context.session.execute(query).scalars())


@retry_on_deadlock
@writer
def type_access_add(context: RequestContext, type_id: str,
                    project_id: str) -> None:
    """:raises VolumeTypeAccessExists: the project has access already."""
    _get(context.session, type_id)
    context.session.add(models.VolumeTypeProject(volume_type_id=type_id,
                                                 project_id=project_id))
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeAccessExists(volume_type_id=type_id,
                                               project_id=project_id)


@retry_on_deadlock
@writer
def type_access_remove(context: RequestContext, type_id: str,
                       project_id: str) -> None:
    """:raises VolumeTypeAccessNotFound: the project had no access."""
    result = context.session.execute(sa.delete(models.VolumeTypeProject).where(
        models.VolumeTypeProject.volume_type_id == type_id,
        models.VolumeTypeProject.project_id == project_id))
    # Session.execute's DML result is a CursorResult (typed Result).
    if not result.rowcount:  # type: ignore[attr-defined]
        raise exception.VolumeTypeAccessNotFound(volume_type_id=type_id,
                                                 project_id=project_id)


@reader
def type_list(context: RequestContext, is_public: bool | None = None,
              filters: dict[str, Any] | None = None,
              project_id: str | None = None) -> list[models.VolumeType]:
    """List types, newest first; ``is_public=None`` means all.

    :param project_id: only the types this project may use (public ones
        and private ones shared with it), whatever ``is_public`` says.
    """
    query = sa.select(models.VolumeType)
    if project_id is not None:
        query = _visible_to(query, project_id)
    elif is_public is not None:
        query = query.where(models.VolumeType.is_public == is_public)
    for key in ("name", "description"):
        if filters and key in filters:
            query = query.where(getattr(models.VolumeType, key) == filters[key])
    query = query.order_by(models.VolumeType.created_at.desc(),
                           models.VolumeType.id.desc())
    return list(context.session.execute(query).scalars())


@retry_on_deadlock
@writer
def type_update(context: RequestContext, type_id: str,
                values: dict[str, Any]) -> models.VolumeType:
    row = _get(context.session, type_id)
    for key, value in values.items():
        setattr(row, key, value)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.VolumeTypeExists(name=values.get("name"))
    return row


@retry_on_deadlock
@writer
def type_delete(context: RequestContext, type_id: str) -> None:
    """Delete an unused type; :raises VolumeTypeInUse: when volumes use it."""
    row = _get(context.session, type_id)
    if _in_use(context.session, type_id):
        raise exception.VolumeTypeInUse()
    context.session.execute(sa.delete(models.VolumeTypeProject).where(
        models.VolumeTypeProject.volume_type_id == type_id))
    context.session.delete(row)


@retry_on_deadlock
@writer
def extra_specs_update(context: RequestContext, type_id: str,
                       specs: _Specs) -> _Specs:
    """Merge ``specs`` into the type's extra specs (refused while in use)."""
    row = _get(context.session, type_id)
    if _in_use(context.session, type_id):
        raise exception.VolumeTypeInUse()
    existing = {spec.key: spec for spec in row.extra_specs}
    for key, value in specs.items():
        if key in existing:
            existing[key].value = value
        else:
            row.extra_specs.append(
                models.VolumeTypeExtraSpec(key=key, value=value))
    return specs


@retry_on_deadlock
@writer
def extra_spec_delete(context: RequestContext, type_id: str, key: str) -> None:
    row = _get(context.session, type_id)
    if _in_use(context.session, type_id):
        raise exception.VolumeTypeInUse()
    for spec in row.extra_specs:
        if spec.key == key:
            row.extra_specs.remove(spec)
            return
    raise exception.VolumeTypeExtraSpecsNotFound(volume_type_id=type_id,
                                                 extra_specs_key=key)


@retry_on_deadlock
@writer
def specs_replace_scope(context: RequestContext, type_id: str, scope: str,
                        specs: Mapping[str, str | None]) -> None:
    """Replace the type's extra specs whose keys start with ``scope`` by
    ``specs`` (all keys in that scope; empty: remove them), refused while
    volumes use the type.

    :raises VolumeTypeNotFound:
    :raises VolumeTypeInUse:
    """
    session = context.session
    _get(session, type_id)
    if _in_use(session, type_id):
        raise exception.VolumeTypeInUse()
    spec = models.VolumeTypeExtraSpec
    session.execute(sa.delete(spec).where(
        spec.volume_type_id == type_id,
        spec.key.startswith(scope, autoescape=True)))
    session.add_all([spec(volume_type_id=type_id, key=key, value=value)
                     for key, value in specs.items()])


def specs_of(row: models.VolumeType) -> Specs:
    """The extra specs of a loaded type as a plain dict."""
    return {spec.key: spec.value for spec in row.extra_specs}
