"""Compare-and-swap of one row: every status change goes through here.

``conditional_update`` changes a row only if its columns still hold what
the caller read (``UPDATE .. SET values WHERE id = :id AND expected``) and
tells whether it did; ``compare_and_swap`` builds that statement (or the
``DELETE`` of the row) for callers that add to it.  The statement of each
shape of ``expected`` is built once.
"""

import functools
from typing import Any
from typing import overload

import sqlalchemy as sa

from common.db import models
from common.db.api import direct
from common.db.api.execution import SessionOrConnection
from common.db.api.timestamps import utcnow

#: A column's expectation: ``null``, ``in``, ``in_or_null`` or ``eq``.
_Shape = tuple[tuple[str, str], ...]


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "in_or_null" if None in value else "in"
    return "eq"


@functools.lru_cache(maxsize=512)
def _cas_statement(table: sa.Table, shape: _Shape,
                   keys: tuple[str, ...] | None) -> sa.Update | sa.Delete:
    """``UPDATE table SET keys`` (``DELETE FROM table`` when ``keys`` is
    None) ``WHERE id = :row_id AND shape``, with bound parameters
    ``e_<column>`` and ``v_<key>``; built once per shape."""
    where = [table.c.id == sa.bindparam("row_id")]
    for column, kind in shape:
        col = table.c[column]
        if kind == "null":
            where.append(col.is_(None))
        elif kind in ("in", "in_or_null"):
            matches = col.in_(sa.bindparam("e_" + column, expanding=True))
            where.append(matches if kind == "in"
                         else sa.or_(matches, col.is_(None)))
        else:
            where.append(col == sa.bindparam("e_" + column))
    if keys is None:
        return sa.delete(table).where(*where)
    return sa.update(table).where(*where).values(
        {key: sa.bindparam("v_" + key) for key in keys})


@overload
def compare_and_swap(model: type[models.BASE], row_id: str,
                     expected: dict[str, Any], values: dict[str, Any]
                     ) -> tuple[sa.Update, dict[str, Any]]: ...


@overload
def compare_and_swap(model: type[models.BASE], row_id: str,
                     expected: dict[str, Any], values: None
                     ) -> tuple[sa.Delete, dict[str, Any]]: ...


def compare_and_swap(model: type[models.BASE], row_id: str,
                     expected: dict[str, Any], values: dict[str, Any] | None
                     ) -> tuple[sa.Update | sa.Delete, dict[str, Any]]:
    """The statement and parameters of a compare-and-swap of one row.

    :param expected: column -> value (None: IS NULL), or column ->
        list/tuple of values (None among them: or NULL).
    :param values: column -> plain value; None deletes the row instead.
    """
    shape = []
    params: dict[str, Any] = {"row_id": row_id}
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


def conditional_update(session: SessionOrConnection | direct.Connection,
                       model: type[models.BASE], row_id: str,
                       expected: dict[str, Any], values: dict[str, Any]
                       ) -> bool:
    """Compare-and-swap one row: ``UPDATE .. SET values WHERE expected``.

    :param session: a Session, a Connection or a ``direct.Connection``.
    :returns: whether the row matched (and was changed).
    """
    query, params = compare_and_swap(model, row_id, expected,
                                     dict(values, updated_at=utcnow()))
    # Session.execute's DML result is a CursorResult (typed Result).
    return session.execute(  # type: ignore[union-attr]
        query, params).rowcount == 1
