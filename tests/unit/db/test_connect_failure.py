"""A connection that cannot be made is the database being unreachable."""

import socket

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters

from common.db.api import dialects


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _engine(tuned: bool) -> sa.engine.Engine:
    engine = sa.create_engine("postgresql+psycopg://nobody@127.0.0.1:%d/x"
                              % _closed_port())
    exc_filters.register_engine(engine)
    if tuned:
        dialects.connect_failure_is_disconnect(engine)
    return engine


def test_psycopg3_connect_failure_is_not_translated_by_oslo_db_alone():
    """What the listener is for: oslo.db leaves psycopg 3's failed
    connect a bare OperationalError (a 500 at the api)."""
    with pytest.raises(sa.exc.OperationalError):
        _engine(tuned=False).connect()


def test_a_failed_connect_is_a_db_connection_error():
    with pytest.raises(db_exc.DBConnectionError):
        _engine(tuned=True).connect()


def test_oslo_db_still_translates_after_the_reorder():
    """oslo.db's handler stays on the engine, after the listener."""
    engine = _engine(tuned=True)
    names = [getattr(fn, "__name__", "") for fn
             in engine.dialect.dispatch.handle_error]
    assert names == ["_connect_failed", "handler"]
