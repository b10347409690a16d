"""The transaction context and helpers shared by the table-family modules.

Functions in ``volumes``, ``types``, ``services`` and ``attachments`` take a
RequestContext and run under ``@reader``/``@writer`` of the one
``context_manager`` below.  Status changes go through ``conditional_update``.
"""

import datetime
import functools
import os
import time
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import exc_filters
from oslo_db.sqlalchemy import utils as db_utils

from common.db.api import direct

context_manager = enginefacade.transaction_context()
reader = context_manager.reader
writer = context_manager.writer

#: Retry writer transactions that lost a deadlock or a SQLite lock race.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=10, retry_on_deadlock=True, retry_interval=0.01,
    inc_retry_interval=True, max_retry_interval=0.2)

_CONFIGURED = False
#: Connections in autocommit mode for ``single_statement`` (not on SQLite).
_SINGLE: sa.engine.Engine | None = None

#: A pooled connection idle longer than this is tested before use.
PING_IDLE_SECONDS = 1.0


def default_connection(conf: cfg.ConfigOpts) -> str:
    """The embedded default: an SQLite file under ``state_path``."""
    path = os.path.abspath(os.path.join(conf.state_path, "ashlar.sqlite"))
    return "sqlite:///" + path


def configure(conf: cfg.ConfigOpts) -> None:
    """Point the transaction context at ``[database] connection``."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    connection = conf.database.connection or default_connection(conf)
    if connection.startswith("sqlite:///"):
        os.makedirs(os.path.dirname(connection[len("sqlite:///"):]) or ".",
                    exist_ok=True)
    context_manager.configure(connection=connection,
                              max_pool_size=conf.database.max_pool_size,
                              max_overflow=conf.database.max_overflow,
                              pool_timeout=conf.database.pool_timeout,
                              sqlite_fk=True)
    engine = get_engine()
    if engine.dialect.name == "sqlite":
        _tune_sqlite(engine)
    else:
        _ping_when_idle(engine)
    if engine.dialect.name == "mysql":
        _share_preferred_tls(engine)
        _read_committed(engine)
    if engine.dialect.name != "sqlite":
        global _SINGLE
        _SINGLE = autocommit_engine(connection, conf.database)
    _CONFIGURED = True


def autocommit_engine(url: str, options: Any) -> sa.engine.Engine:
    """A pool of connections to a server database that run each statement
    on its own, set up as oslo.db sets up its engines (encoding, MySQL's
    ``sql_mode``, exception translation).

    :param options: the ``[database]`` group.
    """
    url = sa.engine.make_url(url)
    kwargs = {key: value for key, value in (
        ("pool_size", options.max_pool_size),
        ("max_overflow", options.max_overflow),
        ("pool_timeout", options.pool_timeout)) if value is not None}
    if url.get_backend_name() == "postgresql":
        kwargs["client_encoding"] = "utf8"
    elif "charset" not in url.query:
        url = url.update_query_dict({"charset": "utf8"})
    # NOTE(ashlar): no reset on return, and no ROLLBACK as a Session on it
    # ends: a connection in autocommit mode holds no transaction to roll
    # back, and PyMySQL and mysqlclient would send the ROLLBACK anyway, a
    # round trip per statement (SQLAlchemy's pooling guide: "Disabling
    # Reset on Return for non-transactional connections", and
    # ``skip_autocommit_rollback``).
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT",
                              pool_recycle=options.connection_recycle_time,
                              pool_pre_ping=True, pool_reset_on_return=None,
                              skip_autocommit_rollback=True, **kwargs)
    _share_preferred_tls(engine)
    if url.get_backend_name() == "mysql" and options.mysql_sql_mode:
        @sa.event.listens_for(engine, "connect")
        def _sql_mode(dbapi_conn: Any, _record: Any) -> None:
            with dbapi_conn.cursor() as cursor:
                cursor.execute("SET SESSION sql_mode = %s",
                               [options.mysql_sql_mode])
    exc_filters.register_engine(engine)
    _ping_when_idle(engine)
    return engine


def _share_preferred_tls(engine: sa.engine.Engine) -> None:
    """``pymysql_tls`` for an engine that connects through PyMySQL; no
    other process imports PyMySQL (about 25 ms of its start)."""
    if engine.dialect.driver == "pymysql":
        from common.db.api import pymysql_tls
        pymysql_tls.share_preferred_tls(engine)


def _in_transaction(context: Any) -> bool:
    """Whether the context has a transaction of ``context_manager`` open."""
    try:
        return context.transaction_ctx is not None
    except db_exc.NoEngineContextEstablished:
        return False


def _alone_or_in_transaction(fn: Callable, in_transaction: Callable,
                             alone: Callable) -> Callable:
    """A function of ``(context, *args)`` that runs ``alone(connection,
    *args)`` on the autocommit pool, or on SQLite and inside a transaction
    the context has open, ``in_transaction(context, *args)``."""
    @functools.wraps(fn)
    def wrapper(context: Any, *args: Any, **kwargs: Any) -> Any:
        if _SINGLE is None or _in_transaction(context):
            return in_transaction(context, *args, **kwargs)
        with _SINGLE.connect() as conn:
            return alone(conn, *args, **kwargs)
    return wrapper


def single_statement(manager: Any) -> Callable:
    """Make ``fn(connection, *args)``, which runs one SQL statement, a
    function of ``(context, *args)``.

    NOTE(ashlar): a transaction costs round trips of its own (psycopg
    sends ``BEGIN`` and ``COMMIT``, PyMySQL ``COMMIT``), two or three where
    the work is one.  A single statement is atomic by itself; on a server
    database it runs on a connection in autocommit mode (a second pool:
    switching a pooled connection's mode costs a round trip each way).  On
    SQLite, and inside a transaction the context has open, it runs under
    ``manager`` (``reader`` or ``writer``) as any other function.  On the
    autocommit pool, ``fn``'s prebuilt statements run on the driver's cursor
    (``common.db.api.direct``).
    """
    def decorator(fn: Callable) -> Callable:
        @manager.connection
        def in_transaction(context: Any, *args: Any, **kwargs: Any) -> Any:
            return fn(context.connection, *args, **kwargs)

        def alone(conn: Any, *args: Any, **kwargs: Any) -> Any:
            return fn(direct.Connection(conn), *args, **kwargs)
        return _alone_or_in_transaction(fn, in_transaction, alone)
    return decorator


#: A row read with Core: attribute access, no session, no lazy loads.
Record = SimpleNamespace


def prebuilt_read(fn: Callable) -> Callable:
    """Make ``fn(connection, *args)``, which only reads, through prebuilt
    Core statements, a function of ``(context, *args)``.

    NOTE(ashlar): a reader transaction costs round trips of its own
    (psycopg's BEGIN and ROLLBACK; PyMySQL's and mysqlclient's ROLLBACK,
    then the pool's) and, at READ COMMITTED, gives its statements no common
    snapshot anyway.  So ``fn`` runs as ``single_statement(reader)`` runs
    one statement: on a server database outside an open transaction, each
    of its statements on its own on the autocommit pool, on the driver's
    cursor; on SQLite, and inside a transaction the context has open, under
    ``reader``.
    """
    return single_statement(reader)(fn)


def data_modifying_with() -> bool:
    """Whether one statement may change rows of several tables (PostgreSQL's
    data-modifying ``WITH``) and run on its own (``single_statement``)."""
    return _SINGLE is not None and _SINGLE.dialect.name == "postgresql"


def get_engine() -> sa.engine.Engine:
    return context_manager.writer.get_engine()


def _tune_sqlite(engine: sa.engine.Engine) -> None:
    """WAL, a busy timeout, and BEGIN IMMEDIATE for every transaction.

    NOTE(ashlar): a deferred transaction that reads and then writes fails at
    once with "database is locked" when another writer got in between (what
    made Cinder answer 500 at 4 clients).  Taking the write lock at BEGIN
    makes writers queue on the busy timeout instead.
    """
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    # oslo.db emits the BEGIN itself (pysqlite's own is off); make it take
    # the write lock at once.
    @sa.event.listens_for(engine, "before_cursor_execute", retval=True)
    def _immediate(conn: Any, cursor: Any, statement: str, params: Any,
                   context: Any, executemany: bool) -> tuple:
        if statement == "BEGIN":
            statement = "BEGIN IMMEDIATE"
        return statement, params

    # oslo.db tested a connection while creating the engine; drop it so every
    # pooled connection gets the settings above.
    engine.dispose()


def _ping_when_idle(engine: sa.engine.Engine) -> None:
    """Let the pool's pre-ping skip a connection that was good just now.

    NOTE(ashlar): oslo.db turns on SQLAlchemy's ``pool_pre_ping``: a
    ``SELECT 1`` round trip before every transaction, a sixth of the
    statements of an attachment cycle.  The pool pings through the
    dialect's ``do_ping``; this engine's answers at once for a connection
    made or checked in less than ``PING_IDLE_SECONDS`` ago.  One idle longer
    (as every connection is after a database restart of more than that) is
    pinged as before, and a failed ping is the pool's, as before.  A
    connection the pool holds from before this (oslo.db opens one while it
    creates the engine) has no such time and is pinged at its first use.

    :param engine: one whose pool pre-pings (``pool_pre_ping=True``).
    """
    #: When each open DBAPI connection (by id) was last known good; a
    #: new connection with a reused id is recorded at its "connect".
    good: dict[int, float] = {}
    ping = engine.dialect.do_ping

    def do_ping(dbapi_conn: Any) -> bool:
        since = good.get(id(dbapi_conn))
        if since is not None and \
                time.monotonic() - since < PING_IDLE_SECONDS:
            return True
        return ping(dbapi_conn)

    engine.dialect.do_ping = do_ping

    @sa.event.listens_for(engine, "connect")
    @sa.event.listens_for(engine, "checkin")
    def _known_good(dbapi_conn: Any, _record: Any) -> None:
        if dbapi_conn is not None:
            good[id(dbapi_conn)] = time.monotonic()

    @sa.event.listens_for(engine, "close")
    @sa.event.listens_for(engine, "close_detached")
    def _closed(dbapi_conn: Any, *_record: Any) -> None:
        good.pop(id(dbapi_conn), None)


def _read_committed(engine: sa.engine.Engine) -> None:
    """MySQL/MariaDB sessions in READ COMMITTED, PostgreSQL's default.

    NOTE(ashlar): attachment transactions read the live rows of a volume
    after taking its lock and without locking them
    (``common/db/api/attachments.py``); under REPEATABLE READ that read
    would see the snapshot of the transaction's first read instead of what
    committed before the lock.
    """
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL "
                       "READ COMMITTED")
        cursor.close()

    # Pooled connections made while the engine was created predate this.
    engine.dispose()


def utcnow() -> datetime.datetime:
    """Naive UTC, as stored in every timestamp column."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def page(query: Any, model: Any, marker_row: Any, limit: int | None,
         sort_keys: list | None, sort_dirs: list | None,
         offset: int | None) -> list:
    """One page of a list query, in Cinder's default order (newest first),
    ``id`` breaking ties (whole-second timestamps make them common)."""
    sort_keys = list(sort_keys or ["created_at"])
    sort_dirs = list(sort_dirs or ["desc"] * len(sort_keys))
    if "id" not in sort_keys:
        sort_keys.append("id")
        sort_dirs.append(sort_dirs[-1])
    query = db_utils.paginate_query(query, model, limit, sort_keys,
                                    marker=marker_row, sort_dirs=sort_dirs)
    if offset:
        query = query.offset(offset)
    return list(query.all())


def project_page(query: Any, model: Any, project_id: str | None,
                 filters: dict | None, marker_row: Any, hidden: Exception,
                 limit: int | None, sort_keys: list | None,
                 sort_dirs: list | None, offset: int | None) -> list:
    """One page of the ``model`` rows of ``project_id`` (every project's
    when None) whose columns equal ``filters``, after ``marker_row``.

    :raises: ``hidden`` for a marker of another project, as Cinder does
        (an unknown marker is the caller's to refuse).
    """
    if project_id is not None:
        query = query.filter(model.project_id == project_id)
    for key, value in (filters or {}).items():
        query = query.filter(getattr(model, key) == value)
    if marker_row is not None and project_id not in (
            None, marker_row.project_id):
        raise hidden
    return page(query, model, marker_row, limit, sort_keys, sort_dirs, offset)


def among(column: Any, values: Iterable[str]) -> Any:
    """``column IN (values)`` for a fixed set of values, as ORed ``=``.

    NOTE(ashlar): SQLAlchemy turns ``in_(list)`` into an "expanding"
    parameter that it renders into the SQL again at every execution; the
    prebuilt statements of the hot paths use this instead.
    """
    return sa.or_(*(column == value for value in sorted(values)))


def older_than(when: datetime.datetime, seconds: float) -> bool:
    """Whether a stored (naive UTC) timestamp is more than ``seconds`` old."""
    return (utcnow() - when).total_seconds() > seconds


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


def conditional_update(session: Any, model: Any, row_id: str,
                       expected: dict, values: dict) -> bool:
    """Compare-and-swap one row: ``UPDATE .. SET values WHERE expected``.

    :param session: a Session or a Connection.
    :returns: whether the row matched (and was changed).
    """
    query, params = compare_and_swap(model, row_id, expected,
                                     dict(values, updated_at=utcnow()))
    return session.execute(query, params).rowcount == 1
