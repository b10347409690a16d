"""What each database's engines are tuned with, and why.

``common.db.api.engine`` applies these as it creates an engine: SQLite's
pragmas and ``BEGIN IMMEDIATE`` (``tune_sqlite``), the pool's pre-ping
skipped for a connection good just now (``ping_when_idle``, server
databases), and on MySQL/MariaDB READ COMMITTED (``read_committed``), the
session's ``sql_mode`` on the autocommit pool (``set_sql_mode``) and one
shared TLS context for PyMySQL (``share_preferred_tls``); on every server
database, a connection that cannot be made is the database being
unreachable (``connect_failure_is_disconnect``).
"""

import time
from typing import Any

import sqlalchemy as sa
from oslo_db.sqlalchemy import exc_filters
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.engine.interfaces import DBAPICursor
from sqlalchemy.engine.interfaces import ExecutionContext
from sqlalchemy.pool import ConnectionPoolEntry

#: A pooled connection idle longer than this is tested before use.
PING_IDLE_SECONDS = 1.0


def connect_failure_is_disconnect(engine: sa.engine.Engine) -> None:
    """A driver's OperationalError while a connection is made counts as
    a disconnect, which oslo.db turns into ``DBConnectionError`` (a 503
    at the api, retried where that is safe).

    NOTE(ashlar): oslo.db knows a failed connect by psycopg2's words
    ("could not connect to server") or SQLAlchemy's ``is_disconnect``;
    psycopg 3 says "connection failed: ... FATAL: the database system is
    shutting down" (or "starting up") while PostgreSQL restarts, which
    neither matches: the fault campaign's database fault got 500s.  Our
    listener must run before oslo.db's, which re-raises any other
    OperationalError and so ends the chain: oslo.db's is taken off and
    put back after ours (SQLAlchemy 2.1 ignores ``insert=True`` here).
    """
    def _connect_failed(context: sa.engine.ExceptionContext) -> None:
        if context.connection is None and isinstance(
                context.sqlalchemy_exception, sa.exc.OperationalError):
            context.is_disconnect = True

    oslo_db_first = sa.event.contains(engine, "handle_error",
                                      exc_filters.handler)
    if oslo_db_first:
        sa.event.remove(engine, "handle_error", exc_filters.handler)
    sa.event.listen(engine, "handle_error", _connect_failed)
    if oslo_db_first:
        sa.event.listen(engine, "handle_error", exc_filters.handler,
                        retval=True)


def tune_sqlite(engine: sa.engine.Engine) -> None:
    """WAL, a busy timeout, and BEGIN IMMEDIATE for every transaction.

    NOTE(ashlar): a deferred transaction that reads and then writes fails at
    once with "database is locked" when another writer got in between (what
    made Cinder answer 500 at 4 clients).  Taking the write lock at BEGIN
    makes writers queue on the busy timeout instead.
    """
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: DBAPIConnection,
                    _record: ConnectionPoolEntry) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    # oslo.db emits the BEGIN itself (pysqlite's own is off); make it take
    # the write lock at once.
    @sa.event.listens_for(engine, "before_cursor_execute", retval=True)
    def _immediate(conn: sa.engine.Connection, cursor: DBAPICursor,
                   statement: str, params: Any,
                   context: ExecutionContext | None,
                   executemany: bool) -> tuple[str, Any]:
        if statement == "BEGIN":
            statement = "BEGIN IMMEDIATE"
        return statement, params

    # oslo.db tested a connection while creating the engine; drop it so every
    # pooled connection gets the settings above.
    engine.dispose()


def ping_when_idle(engine: sa.engine.Engine) -> None:
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

    def do_ping(dbapi_conn: DBAPIConnection) -> bool:
        since = good.get(id(dbapi_conn))
        if since is not None and \
                time.monotonic() - since < PING_IDLE_SECONDS:
            return True
        return ping(dbapi_conn)

    # This engine's dialect alone pings so (a method set on the instance).
    engine.dialect.do_ping = do_ping  # type: ignore[method-assign,assignment]

    @sa.event.listens_for(engine, "connect")
    @sa.event.listens_for(engine, "checkin")
    def _known_good(dbapi_conn: DBAPIConnection | None,
                    _record: ConnectionPoolEntry) -> None:
        if dbapi_conn is not None:
            good[id(dbapi_conn)] = time.monotonic()

    @sa.event.listens_for(engine, "close")
    @sa.event.listens_for(engine, "close_detached")
    def _closed(dbapi_conn: DBAPIConnection,
                *_record: ConnectionPoolEntry) -> None:
        good.pop(id(dbapi_conn), None)


def read_committed(engine: sa.engine.Engine) -> None:
    """MySQL/MariaDB sessions in READ COMMITTED, PostgreSQL's default.

    NOTE(ashlar): attachment transactions read the live rows of a volume
    after taking its lock and without locking them
    (``common.db.api.attachments.volume_status``); under REPEATABLE READ
    that read would see the snapshot of the transaction's first read
    instead of what committed before the lock.
    """
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: DBAPIConnection,
                    _record: ConnectionPoolEntry) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL "
                       "READ COMMITTED")
        cursor.close()

    # Pooled connections made while the engine was created predate this.
    engine.dispose()


def set_sql_mode(engine: sa.engine.Engine, sql_mode: str) -> None:
    """Set MySQL's ``sql_mode`` on each new connection of ``engine``, as
    oslo.db does on its own engines (``[database] mysql_sql_mode``)."""
    @sa.event.listens_for(engine, "connect")
    def _sql_mode(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
        # A MySQL driver's connection (its cursors are context managers).
        with dbapi_conn.cursor() as cursor:
            cursor.execute("SET SESSION sql_mode = %s", [sql_mode])


def share_preferred_tls(engine: sa.engine.Engine) -> None:
    """``pymysql_tls`` for an engine that connects through PyMySQL; no
    other process imports PyMySQL (about 25 ms of its start)."""
    if engine.dialect.driver == "pymysql":
        from common.db.api import pymysql_tls
        pymysql_tls.share_preferred_tls(engine)
