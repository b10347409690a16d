"""How family modules run SQL: the ways that remain, and why each.

1. **An ORM session** under ``@reader``/``@writer``
   (``common.db.api.engine``; ``context.session``).  The default: rows as
   objects, relationships, oslo.db's paging (``common.db.api.paging``).
   Every family uses it off the hot paths.
2. **Core on the transaction's connection** under
   ``@reader.connection``/``@writer.connection`` (``context.connection``,
   SQLAlchemy's own execution).  Several statements that must commit
   together, where they hand their connection to checks written against
   SQLAlchemy's ``Connection`` (a create's quota check, a delete's source
   check, a group settling as its last volume goes) or build statements
   per call (the volume writes, the fencing grant, the start's warm-up).
3. **Prebuilt statements in a transaction, on the driver's cursor**:
   ``transaction(manager)`` runs ``fn(connection, ...)`` under
   ``manager.connection`` with the connection wrapped in
   ``common.db.api.direct.Connection``.  The attachment transactions
   (reserve, change, destroy, a volume leaving a status): their statements
   are built once, and a plan skips SQLAlchemy's per-execution work, which
   cost the api more CPU than the driver's own (commit b5f7e12: api CPU
   per attach cycle -11%, S3 at c=8 +7%).
4. **One statement with no transaction of its own**:
   ``single_statement(manager)``.  On a server database outside an open
   transaction, ``fn``'s statements run each on its own on the autocommit
   pool, on the driver's cursor; on SQLite, or inside a transaction the
   context has open, under ``manager`` on the transaction's connection (as
   way 2).  A transaction costs round trips of its own (psycopg's
   ``BEGIN``/``COMMIT``, PyMySQL's ``COMMIT`` or ``ROLLBACK``): one round
   trip instead of three for a one-statement read or record on PostgreSQL
   (46b0520); per volume created and deleted on MariaDB, ROLLBACKs 25.9 ->
   17.9 and statements 65.1 -> 57.1 (f0acee8); with the volume's reads on
   prebuilt statements, ``GET /volumes/{id}`` 1.49 -> 1.02 ms of api CPU
   and the scheduler 3.5 -> 2.2 ms per create (f3a0032).  Where
   ``data_modifying_with`` (PostgreSQL), the attach cycle's reservation and
   ``os-complete`` are one such statement each (a data-modifying
   ``WITH``): 20 -> 13 round trips per attach cycle (b8e0bcb).

Ways 2 and 3 stay apart: a plan is cached per statement object, so a
statement built per call, which SQLAlchemy's compiled cache serves by its
cache key, would be compiled again at every call; and the checks way 2
hands its connection to use SQLAlchemy's result API (``scalar()``, ...).  Besides
these four, only migrations run SQL (alembic on ``engine.get_engine()``,
``common.db.migrations``).

Folded away: ``prebuilt_read`` (it was ``single_statement(reader)`` under a
second name), the wrapper ``single_statement`` shared with a reader that
no longer exists, and three hand-written ``direct.Connection(
context.connection)`` transactions (now way 3, which
``volume_leave_status`` joined: the same prebuilt statements, run through
SQLAlchemy before).
"""

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from typing import Concatenate
from typing import ParamSpec
from typing import Protocol
from typing import TypeAlias
from typing import TypeVar

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy import orm

from common.context import RequestContext
from common.db.api import direct

#: Connections in autocommit mode for ``single_statement`` (not on SQLite).
_SINGLE: sa.engine.Engine | None = None

#: A row read with Core: attribute access, no session, no lazy loads.
#: Functions returning one say its shape (``common.db.api.rows``).
Record = SimpleNamespace

#: What a function run by ``single_statement`` is given: the connection of
#: the context's transaction, or one of the autocommit pool that runs
#: prebuilt statements on the driver's cursor.
Conn: TypeAlias = sa.engine.Connection | direct.Connection
#: What the checks a writer runs in its transaction are given (a quota
#: check, ``common.db.api.volumes.Check``): its session or its connection.
SessionOrConnection: TypeAlias = orm.Session | sa.engine.Connection

_C = TypeVar("_C")
_P = ParamSpec("_P")
_R = TypeVar("_R")
_F = TypeVar("_F", bound=Callable[..., Any])

#: ``fn(connection, *args)``, and the function of ``(context, *args)``
#: that ``transaction`` and ``single_statement`` make of it.
OnConnection: TypeAlias = Callable[Concatenate[_C, _P], _R]
InContext: TypeAlias = Callable[Concatenate[RequestContext, _P], _R]


class TransactionManager(Protocol):
    """What Ashlar uses of oslo.db's transaction context manager
    (``common.db.api.engine.reader``/``writer``; oslo.db is untyped)."""

    def __call__(self, fn: _F, /) -> _F:
        """Run ``fn(context, ...)`` in a transaction of the context with
        an ORM session (``context.session``)."""

    @property
    def connection(self) -> "TransactionManager":
        """The same with a Core connection (``context.connection``)."""

    def get_engine(self) -> sa.engine.Engine:
        """The engine the transactions run on."""


def use_autocommit_pool(engine: sa.engine.Engine | None) -> None:
    """Run ``single_statement`` on ``engine`` (``autocommit_engine``) when
    no transaction is open; None: always under its transaction manager."""
    global _SINGLE
    _SINGLE = engine
    if engine is not None:
        direct.announce()


def autocommit_pool() -> sa.engine.Engine | None:
    """The engine ``single_statement`` runs on, None on SQLite."""
    return _SINGLE


def transaction_open(context: RequestContext) -> bool:
    """Whether the context has a transaction of ``context_manager`` open."""
    try:
        return context.transaction_ctx is not None
    except db_exc.NoEngineContextEstablished:
        return False


def transaction(manager: TransactionManager) -> Callable[
        [OnConnection[direct.Connection, _P, _R]], InContext[_P, _R]]:
    """Make ``fn(connection, *args)``, which runs prebuilt Core statements,
    a function of ``(context, *args)`` that runs them in one transaction of
    ``manager`` (``reader`` or ``writer``; joining one the context has
    open), on the driver's cursor (``common.db.api.direct``)."""
    def decorator(fn: OnConnection[direct.Connection, _P, _R]
                  ) -> InContext[_P, _R]:
        @functools.wraps(fn)
        def on_cursor(context: RequestContext, *args: _P.args,
                      **kwargs: _P.kwargs) -> _R:
            return fn(direct.Connection(context.connection), *args,
                      **kwargs)
        return manager.connection(on_cursor)
    return decorator


def single_statement(manager: TransactionManager) -> Callable[
        [OnConnection[Conn, _P, _R]], InContext[_P, _R]]:
    """Make ``fn(connection, *args)``, which runs one SQL statement (or
    reads with a few), a function of ``(context, *args)``.

    NOTE(ashlar): a transaction costs round trips of its own (psycopg
    sends ``BEGIN`` and ``COMMIT``, PyMySQL ``COMMIT``), two or three where
    the work is one, and at READ COMMITTED gives a read's statements no
    common snapshot anyway.  A single statement is atomic by itself; on a
    server database it runs on a connection in autocommit mode (a second
    pool: switching a pooled connection's mode costs a round trip each
    way), ``fn``'s prebuilt statements on the driver's cursor.  On SQLite,
    and inside a transaction the context has open, it runs under
    ``manager`` (``reader`` or ``writer``) as any other function.
    """
    def decorator(fn: OnConnection[Conn, _P, _R]) -> InContext[_P, _R]:
        @manager.connection
        def in_transaction(context: RequestContext, *args: _P.args,
                           **kwargs: _P.kwargs) -> _R:
            return fn(context.connection, *args, **kwargs)

        @functools.wraps(fn)
        def wrapper(context: RequestContext, *args: _P.args,
                    **kwargs: _P.kwargs) -> _R:
            if _SINGLE is None or transaction_open(context):
                return in_transaction(context, *args, **kwargs)
            with _SINGLE.connect() as conn:
                return fn(direct.Connection(conn), *args, **kwargs)
        return wrapper
    return decorator


def data_modifying_with() -> bool:
    """Whether one statement may change rows of several tables (PostgreSQL's
    data-modifying ``WITH``) and run on its own (``single_statement``)."""
    return _SINGLE is not None and _SINGLE.dialect.name == "postgresql"
