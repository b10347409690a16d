"""PyMySQL connections in preferred-TLS mode share one context."""

import ssl

import pytest
import sqlalchemy as sa

from common.db.api import engine as db_engine
from common.db.api import pymysql_tls

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database
#: What runs only on the PyMySQL releases tested (``pymysql_tls.TESTED``).
shared = pytest.mark.skipif(not pymysql_tls.SHARED, reason="PyMySQL outside "
                            "the tested range: each connection builds its own")


def _unconnected(**options) -> pymysql_tls.SharedPreferredTLS:
    return pymysql_tls.SharedPreferredTLS(host="127.0.0.1",
                                          defer_connect=True, **options)


@shared
def test_preferred_mode_connections_share_one_context_that_checks_nothing():
    first, second = _unconnected(), _unconnected()
    assert first.ctx is second.ctx
    assert first.ctx.verify_mode == ssl.CERT_NONE
    assert not first.ctx.check_hostname
    assert first.ssl and not first._ssl_required


@shared
def test_connections_with_tls_options_of_their_own_get_their_own():
    required = _unconnected(ssl={"verify_mode": "required"})
    assert required.ctx is not _unconnected().ctx
    assert required.ctx.verify_mode == ssl.CERT_REQUIRED
    assert required._ssl_required
    assert not _unconnected(ssl_disabled=True).ssl


@shared
def test_pymysql_engines_open_shared_context_connections():
    """Only PyMySQL engines are changed; on MariaDB through PyMySQL (the
    functional run) the service's own pools open such connections."""
    mysql = sa.create_engine("mysql+pymysql://nobody@127.0.0.1/none")
    pymysql_tls.share_preferred_tls(mysql)
    assert mysql.dialect.dispatch.do_connect
    sqlite = sa.create_engine("sqlite://")
    pymysql_tls.share_preferred_tls(sqlite)
    assert not sqlite.dialect.dispatch.do_connect
    engine = db_engine.get_engine()
    if engine.dialect.driver == "pymysql":
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert isinstance(raw, pymysql_tls.SharedPreferredTLS)
            assert conn.exec_driver_sql("SELECT 1").scalar() == 1


def test_outside_the_tested_range_pymysql_builds_each_context(monkeypatch):
    """The public path: a PyMySQL engine's connections are PyMySQL's own."""
    monkeypatch.setattr(pymysql_tls, "SHARED", False)
    mysql = sa.create_engine("mysql+pymysql://nobody@127.0.0.1/none")
    pymysql_tls.share_preferred_tls(mysql)
    assert not mysql.dialect.dispatch.do_connect
    monkeypatch.setattr(pymysql_tls, "SHARED", True)
    pymysql_tls.share_preferred_tls(mysql)
    assert mysql.dialect.dispatch.do_connect
