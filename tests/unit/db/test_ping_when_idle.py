"""Pooled connections of a server database are tested after idling, and
before their first use when the pool had them before it was watched."""

import pytest
import sqlalchemy as sa

from common.db.api import dialects
from common.db.api import engine as db_engine

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database

#: How to learn a server session's id, and to end it as a restart does.
_SESSION = {"postgresql": ("SELECT pg_backend_pid()",
                           "SELECT pg_terminate_backend(%d, 5000)"),
            "mysql": ("SELECT CONNECTION_ID()", "KILL %d")}


@pytest.fixture
def pool(monkeypatch):
    """A one-connection pool on the unit database holding a connection
    made before ``ping_when_idle`` watched it (as oslo.db's engine does);
    yields the engine, that connection's session id (None on SQLite) and
    the connections pinged."""
    engine = sa.create_engine(db_engine.get_engine().url, pool_size=1,
                              max_overflow=0, pool_pre_ping=True)
    queries = _SESSION.get(engine.dialect.name)
    with engine.connect() as conn:
        session = conn.exec_driver_sql(queries[0]).scalar() if queries \
            else None
    pings = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping",
                        lambda conn: pings.append(conn) or ping(conn))
    dialects.ping_when_idle(engine)
    yield engine, session, pings
    engine.dispose()


def _end_session(engine: sa.engine.Engine, session: int) -> None:
    admin = sa.create_engine(engine.url, poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.exec_driver_sql(_SESSION[engine.dialect.name][1] % session)
    admin.dispose()


def test_a_connection_pooled_before_the_listeners_is_tested_first(pool):
    """oslo.db opens a connection while it creates its engine: after a
    database restart its first checkout must not hand it out untested (on
    SQLite, which has no session to end, the ping alone is checked)."""
    engine, session, pings = pool
    if session is not None:
        _end_session(engine, session)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    assert len(pings) == 1
    # Just made again, or just used: known good, not tested.
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT 2").scalar() == 2
    assert len(pings) == 1


def test_a_connection_idle_longer_than_the_limit_is_tested(pool,
                                                           monkeypatch):
    engine, _session, pings = pool
    with engine.connect():  # the pooled one: tested, then known good
        pass
    with engine.connect():
        pass
    assert len(pings) == 1
    monkeypatch.setattr(dialects, "PING_IDLE_SECONDS", 0.0)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    assert len(pings) == 2
