"""The transaction context and the engines behind it.

``context_manager`` is the one oslo.db transaction context of a process:
every family module runs under its ``reader``/``writer`` (retrying lost
deadlocks with ``retry_on_deadlock``).  ``configure`` points it at
``[database] connection``, tunes its engine for the dialect
(``common.db.api.dialects``) and, on a server database, opens the second
pool ``single_statement`` runs on (``autocommit_engine``,
``common.db.api.execution``).
"""

import functools
import os
from collections.abc import Callable
from typing import Any
from typing import TypeVar
from typing import cast

import sqlalchemy as sa
from oslo_config import cfg
from oslo_db import api as oslo_db_api
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import exc_filters

from common.db.api import dialects
from common.db.api import execution

_F = TypeVar("_F", bound=Callable[..., Any])


context_manager = enginefacade.transaction_context()
reader: execution.TransactionManager = context_manager.reader
writer: execution.TransactionManager = context_manager.writer

#: oslo.db's retry of a writer transaction that lost a deadlock: InnoDB's,
#: a Galera certification failure or brute-force abort (MariaDB's error
#: 1213, which oslo.db raises as ``DBDeadlock``), or an SQLite lock race.
#: NOTE(ashlar): 20 tries, about 3 s of backoff at most (oslo.db adds
#: jitter for deadlocks): 10 (1.3 s) ran out in 64 racing creates of one
#: project through two api hosts (four workers) on Galera; what still
#: runs out is a 503 at the api (``errors.handle_database_busy``).
_RETRY = oslo_db_api.wrap_db_retry(
    max_retries=20, retry_on_deadlock=True, retry_interval=0.01,
    inc_retry_interval=True, max_retry_interval=0.2)


def retry_on_deadlock(fn: _F) -> _F:
    """Run ``fn(context, ...)``, a whole writer transaction, again when it
    lost a deadlock (``DBDeadlock``), up to 20 times.

    NOTE(ashlar): only a whole transaction is run again.  A deadlock rolls
    the whole transaction back (InnoDB), and Galera fails a transaction
    whose write set lost certification at its ``COMMIT`` (or aborts it
    under a replicated one): when ``fn`` joins a transaction the context
    already has open, running ``fn`` alone again would redo its part of a
    transaction that is gone, so the error goes up to the code that opened
    it.  Every function wrapped here changes nothing but the database, so a
    transaction that was rolled back is safe to run again.
    """
    retried = _RETRY(fn)

    @functools.wraps(fn)
    def wrapper(context: Any, *args: Any, **kwargs: Any) -> Any:
        if execution.transaction_open(context):
            return fn(context, *args, **kwargs)
        return retried(context, *args, **kwargs)
    return cast(_F, wrapper)


#: A database that cannot be reached is asked again for about 15 s: a
#: Galera writer's failover behind haproxy took 6-7 s (deploy/ha).
_RETRY_DISCONNECT = oslo_db_api.wrap_db_retry(
    max_retries=30, retry_on_disconnect=True, retry_interval=0.5,
    inc_retry_interval=False)


def retry_on_disconnect(fn: _F) -> _F:
    """Run ``fn`` again while the database cannot be reached
    (``DBConnectionError``), for about 15 s.

    Only for work that is safe to run again from its start whatever it
    did before the connection was lost: reads, and compare-and-swaps that
    re-read what they compare (a scheduler's placement of a create).
    """
    return cast(_F, _RETRY_DISCONNECT(fn))


_CONFIGURED = False


def default_connection(conf: cfg.ConfigOpts) -> str:
    """The embedded default: an SQLite file under ``state_path``."""
    path = os.path.abspath(os.path.join(conf.state_path, "ashlar.sqlite"))
    return "sqlite:///" + path


def with_charset(connection: str) -> str:
    """The URL, on MySQL and MariaDB in ``utf8mb4`` unless it names a
    charset.

    NOTE(ashlar): oslo.db's default, ``utf8``, is MySQL's three-byte
    utf8mb3: a character beyond the BMP (an emoji in a volume's name) made
    the insert fail, a 500.  Tables made on MariaDB 10.x and MySQL 8 are
    utf8mb4 by default; on utf8mb3 tables such a value is refused (400).
    """
    url = sa.engine.make_url(connection)
    if url.get_backend_name() != "mysql" or "charset" in url.query:
        return connection
    return url.update_query_dict({"charset": "utf8mb4"}).render_as_string(
        hide_password=False)


def configure(conf: cfg.ConfigOpts) -> None:
    """Point the transaction context at ``[database] connection``."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    connection = with_charset(conf.database.connection
                              or default_connection(conf))
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
        dialects.tune_sqlite(engine)
    else:
        dialects.ping_when_idle(engine)
        dialects.connect_failure_is_disconnect(engine)
    if engine.dialect.name == "mysql":
        dialects.share_preferred_tls(engine)
        dialects.read_committed(engine)
    if engine.dialect.name != "sqlite":
        execution.use_autocommit_pool(
            autocommit_engine(connection, conf.database))
    _CONFIGURED = True


def autocommit_engine(url: str | sa.engine.URL,
                      options: cfg.ConfigOpts.GroupAttr) -> sa.engine.Engine:
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
        url = sa.engine.make_url(with_charset(url.render_as_string(
            hide_password=False)))
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
    dialects.share_preferred_tls(engine)
    if url.get_backend_name() == "mysql" and options.mysql_sql_mode:
        dialects.set_sql_mode(engine, options.mysql_sql_mode)
    exc_filters.register_engine(engine)
    dialects.connect_failure_is_disconnect(engine)
    dialects.ping_when_idle(engine)
    return engine


def get_engine() -> sa.engine.Engine:
    """The engine of ``context_manager`` (``configure`` first)."""
    return writer.get_engine()
