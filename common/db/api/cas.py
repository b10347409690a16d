"""Compare-and-swap of one row: every status change goes through here.

``conditional_update`` changes a row only if its columns still hold what
the caller read (``UPDATE .. SET values WHERE id = :id AND expected``) and
tells whether it did; ``compare_and_swap`` builds that statement (or the
``DELETE`` of the row) for callers that add to it.  The statement of each
shape of ``expected`` is built once.
"""

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common.db.api import direct
from common.db.api.timestamps import utcnow


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "in_or_null" if None in value else "in"
    return "eq"


@functools.lru_cache(maxsize=512)
def _cas_statement(table: sa.Table, shape: tuple, keys: tuple | None) -> Any:
    """``UPDATE table SET keys`` (``DELETE FROM table`` when ``keys`` is
    None) ``WHERE id = :row_id AND shape``, with bound parameters
    ``e_<column>`` and ``v_<key>``; built once per shape."""
    query = sa.update(table) if keys is not None else sa.delete(table)
    query = query.where(table.c.id == sa.bindparam("row_id"))
    for column, kind in shape:
        col = table.c[column]
        if kind == "null":
            query = query.where(col.is_(None))
        elif kind in ("in", "in_or_null"):
            matches = col.in_(sa.bindparam("e_" + column, expanding=True))
            query = query.where(matches if kind == "in"
                                else sa.or_(matches, col.is_(None)))
        else:
            query = query.where(col == sa.bindparam("e_" + column))
    if keys is None:
        return query
    return query.values({key: sa.bindparam("v_" + key) for key in keys})


def compare_and_swap(model: Any, row_id: str, expected: dict,
                     values: dict | None) -> tuple[Any, dict]:
    """The statement and parameters of a compare-and-swap of one row.

    :param expected: column -> value (None: IS NULL), or column ->
        list/tuple of values (None among them: or NULL).
    :param values: column -> plain value; None deletes the row instead.
    """
    shape = []
    params = {"row_id": row_id}
    for column, value in expected.items():
        kind = _kind(value)
        shape.append((column, kind))
        if kind != "null":
            params["e_" + column] = ([item for item in value
                                      if item is not None]
                                     if kind.startswith("in") else value)
    for key, value in (values or {}).items():
        params["v_" + key] = value
    query = _cas_statement(model.__table__, tuple(shape),
                           None if values is None else tuple(values))
    return query, params


def conditional_update(
        session: orm.Session | sa.engine.Connection | direct.Connection,
        model: Any, row_id: str, expected: dict, values: dict) -> bool:
    """Compare-and-swap one row: ``UPDATE .. SET values WHERE expected``.

    :param session: a Session, a Connection or a ``direct.Connection``.
    :returns: whether the row matched (and was changed).
    """
    query, params = compare_and_swap(model, row_id, expected,
                                     dict(values, updated_at=utcnow()))
    return session.execute(query, params).rowcount == 1
