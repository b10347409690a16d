"""Group types and their group specs (a JSON object on the row)."""

import json
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy import orm

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.paging import page

GTYPE = models.GroupType


def specs_of(row: models.GroupType) -> dict[str, Any]:
    specs: dict[str, Any] = json.loads(row.group_specs)
    return specs


def _get(session: orm.Session, type_id: str,
         lock: bool = False) -> models.GroupType:
    query = sa.select(GTYPE).where(GTYPE.id == type_id)
    row = session.execute(query.with_for_update() if lock
                          else query).scalars().first()
    if row is None:
        raise exception.GroupTypeNotFound(group_type_id=type_id)
    return row


def _flush(session: orm.Session, name: str) -> None:
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.GroupTypeExists(id=name)


@retry_on_deadlock
@writer
def gtype_create(context: RequestContext, values: dict[str, Any],
                 specs: dict[str, Any]) -> models.GroupType:
    """:raises GroupTypeExists: the name is taken."""
    row = GTYPE(group_specs=json.dumps(specs), **values)
    context.session.add(row)
    _flush(context.session, values["name"])
    return row


@reader
def gtype_get(context: RequestContext, type_id: str) -> models.GroupType:
    """:raises GroupTypeNotFound:"""
    return _get(context.session, type_id)


@reader
def gtype_resolve(context: RequestContext,
                  name_or_id: str) -> models.GroupType:
    """The type of that id, else of that name.

    :raises GroupTypeNotFound:
    """
    row = context.session.execute(sa.select(GTYPE).where(sa.or_(
        GTYPE.id == name_or_id, GTYPE.name == name_or_id))
        .order_by(GTYPE.id != name_or_id)).scalars().first()
    if row is None:
        raise exception.GroupTypeNotFound(group_type_id=name_or_id)
    return row


@reader
def gtype_list(context: RequestContext, is_public: bool | None = None,
               limit: int | None = None, marker: str | None = None,
               sort_keys: list[str] | None = None,
               sort_dirs: list[str] | None = None,
               offset: int | None = None) -> list[models.GroupType]:
    """:param is_public: only public (True) or private (False) types; None:
        both.
    :raises GroupTypeNotFound: an unknown marker."""
    query = context.session.query(GTYPE)
    if is_public is not None:
        query = query.filter(GTYPE.is_public == is_public)
    marker_row = _get(context.session, marker) if marker else None
    return page(query, GTYPE, marker_row, limit, sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def gtype_update(context: RequestContext, type_id: str,
                 values: dict[str, Any]) -> models.GroupType:
    """:raises GroupTypeNotFound:
    :raises GroupTypeExists: the new name is taken."""
    row = _get(context.session, type_id, lock=True)
    for key, value in values.items():
        setattr(row, key, value)
    _flush(context.session, values.get("name", row.name))
    return row


@retry_on_deadlock
@writer
def gtype_destroy(context: RequestContext, type_id: str) -> None:
    """:raises GroupTypeNotFound:
    :raises GroupTypeInUse: groups (deleted or not yet) have the type."""
    session = context.session
    _get(session, type_id, lock=True)
    if session.execute(sa.select(models.Group.id).where(
            models.Group.group_type_id == type_id)).first() is not None:
        raise exception.GroupTypeInUse(group_type_id=type_id)
    session.execute(sa.delete(GTYPE).where(GTYPE.id == type_id))


@retry_on_deadlock
@writer
def specs_update(context: RequestContext, type_id: str,
                 specs: dict[str, Any],
                 delete_key: str | None = None) -> dict[str, Any]:
    """Merge ``specs`` into the type's, or remove ``delete_key``, under the
    row's lock; the type's specs after.

    :raises GroupTypeNotFound:
    :raises GroupTypeSpecsNotFound: no such key to remove.
    """
    row = _get(context.session, type_id, lock=True)
    merged = {**specs_of(row), **specs}
    if delete_key is not None:
        if delete_key not in merged:
            raise exception.GroupTypeSpecsNotFound(
                group_type_id=type_id, group_specs_key=delete_key)
        del merged[delete_key]
    row.group_specs = json.dumps(merged)
    return merged
