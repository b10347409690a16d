"""QoS specs: create, read, list, change and delete them, and associate
them with volume types (a type has at most one; ``volume_types.
qos_specs_id``)."""

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

QOS = models.QoSSpecs
TYPE = models.VolumeType


def specs_of(row: models.QoSSpecs) -> dict[str, Any]:
    specs: dict[str, Any] = json.loads(row.specs)
    return specs


def _get(session: orm.Session, qos_id: str,
         lock: bool = False) -> models.QoSSpecs:
    query = sa.select(QOS).where(QOS.id == qos_id)
    row = session.execute(query.with_for_update() if lock
                          else query).scalars().first()
    if row is None:
        raise exception.QoSSpecsNotFound(specs_id=qos_id)
    return row


@retry_on_deadlock
@writer
def qos_create(context: RequestContext, values: dict[str, Any],
               specs: dict[str, Any]) -> models.QoSSpecs:
    """:raises QoSSpecsExists: the name is taken."""
    row = QOS(specs=json.dumps(specs), **values)
    context.session.add(row)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.QoSSpecsExists(specs_id=values["name"])
    return row


@reader
def qos_get(context: RequestContext, qos_id: str) -> models.QoSSpecs:
    """:raises QoSSpecsNotFound:"""
    return _get(context.session, qos_id)


@reader
def qos_list(context: RequestContext, limit: int | None = None,
             marker: str | None = None, sort_keys: list[str] | None = None,
             sort_dirs: list[str] | None = None,
             offset: int | None = None) -> list[models.QoSSpecs]:
    """:raises QoSSpecsNotFound: an unknown marker."""
    marker_row = _get(context.session, marker) if marker else None
    return page(context.session.query(QOS), QOS, marker_row, limit,
                sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def qos_update(context: RequestContext, qos_id: str, specs: dict[str, Any],
               consumer: str | None = None,
               delete_keys: list[str] | None = None) -> models.QoSSpecs:
    """Set ``specs`` (and ``consumer``), or remove ``delete_keys``, under
    the row's lock.

    :raises QoSSpecsNotFound:
    :raises QoSSpecsKeyNotFound: a key to remove is not there (nothing is
        removed).
    """
    row = _get(context.session, qos_id, lock=True)
    merged = {**specs_of(row), **specs}
    for key in delete_keys or ():
        if key not in merged:
            raise exception.QoSSpecsKeyNotFound(specs_id=qos_id,
                                                specs_key=key)
        del merged[key]
    row.specs = json.dumps(merged)
    if consumer is not None:
        row.consumer = consumer
    context.session.flush()
    return row


@reader
def qos_associations(context: RequestContext,
                     qos_id: str) -> list[models.VolumeType]:
    """The types associated with the specs.

    :raises QoSSpecsNotFound:
    """
    _get(context.session, qos_id)
    return list(context.session.execute(
        sa.select(TYPE).where(TYPE.qos_specs_id == qos_id)
        .order_by(TYPE.name)).scalars())


@retry_on_deadlock
@writer
def qos_associate(context: RequestContext, qos_id: str, type_id: str) -> None:
    """:raises QoSSpecsNotFound:
    :raises VolumeTypeNotFound:
    :raises InvalidVolumeType: the type has other specs already."""
    _get(context.session, qos_id)
    vtype = context.session.execute(sa.select(TYPE).where(
        TYPE.id == type_id).with_for_update()).scalars().first()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    if vtype.qos_specs_id not in (None, qos_id):
        raise exception.InvalidVolumeType(
            reason="Type %s is already associated with another qos specs: "
                   "%s" % (type_id, vtype.qos_specs_id))
    vtype.qos_specs_id = qos_id


@retry_on_deadlock
@writer
def qos_disassociate(context: RequestContext, qos_id: str,
                     type_id: str | None = None) -> None:
    """Disassociate one type (``type_id``) or every type.

    :raises QoSSpecsNotFound:
    :raises VolumeTypeNotFound: no such type.
    """
    _get(context.session, qos_id)
    query = sa.update(TYPE).where(TYPE.qos_specs_id == qos_id)
    if type_id is not None:
        if context.session.execute(sa.select(TYPE.id).where(
                TYPE.id == type_id)).first() is None:
            raise exception.VolumeTypeNotFound(volume_type_id=type_id)
        query = query.where(TYPE.id == type_id)
    context.session.execute(query.values(qos_specs_id=None))


@retry_on_deadlock
@writer
def qos_destroy(context: RequestContext, qos_id: str, force: bool) -> None:
    """Delete the specs; with ``force``, disassociate their types first.

    :raises QoSSpecsNotFound:
    :raises QoSSpecsInUse: types use them and ``force`` is false.
    """
    session = context.session
    _get(session, qos_id, lock=True)
    users = sa.select(TYPE.id).where(TYPE.qos_specs_id == qos_id)
    if session.execute(users).first() is not None:
        if not force:
            raise exception.QoSSpecsInUse(specs_id=qos_id)
        session.execute(sa.update(TYPE).where(
            TYPE.qos_specs_id == qos_id).values(qos_specs_id=None))
    session.execute(sa.delete(QOS).where(QOS.id == qos_id))
