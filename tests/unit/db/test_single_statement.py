"""One-statement work: autocommit on PostgreSQL and MariaDB, a
transaction on SQLite and inside an open one."""

import pytest
import sqlalchemy as sa

from common import states
from common.db import api as db_api
from common.db import models
from common.db.api import attachments as db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database


def test_a_single_statement_joins_the_transaction_the_context_has_open():
    vol = fixtures.make_volume()
    ctxt = fixtures.admin()
    with db_api.writer.connection.using(ctxt) as conn:
        conn.execute(sa.update(models.Volume).where(
            models.Volume.id == vol.id).values(display_name="new"))
        # Not committed yet: only the same transaction can see it.
        assert db.volume_brief(ctxt, vol.id).display_name == "new"


def test_record_changes_columns_but_never_the_status():
    vol = fixtures.make_volume(multiattach=True)
    row = fixtures.reserve(vol.id, states.ReserveGuard(
        multiattach=True, limit=8), {"id": "a1", "attach_status": "attaching",
                                     "transition": "creating",
                                     "attached_host": "h1"})
    ctxt = fixtures.admin()
    with pytest.raises(ValueError):
        db.attachment_record(ctxt, vol.id, row.id, {},
                             {"attach_status": "attached"})
    assert not db.attachment_record(ctxt, vol.id, row.id,
                                    {"transition": "connecting"},
                                    {"transition": None})
    assert db.attachment_get(ctxt, row.id).transition == "creating"
    assert db.attachment_record(ctxt, vol.id, row.id,
                                {"transition": "creating"},
                                {"transition": None, "connection_info": "{}"})
    got = db.attachment_get(ctxt, row.id)
    assert (got.transition, got.connection_info) == (None, "{}")


def _in_transaction(dbapi_connection) -> bool:
    """Whether the server holds a transaction open for the connection."""
    if hasattr(dbapi_connection, "get_transaction_status"):  # psycopg2
        import psycopg2.extensions as ext
        return dbapi_connection.get_transaction_status() != \
            ext.TRANSACTION_STATUS_IDLE
    cursor = dbapi_connection.cursor()  # PyMySQL
    cursor.execute("SELECT @@in_transaction")
    return bool(cursor.fetchone()[0])


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_server_databases_run_a_single_statement_without_a_transaction(
        kind):
    """A plain connection's statement opens a transaction that costs a
    COMMIT (and with psycopg2 a BEGIN) round trip; the autocommit pool's
    does not."""
    from tests.functional import harness
    url, drop = harness.database(kind)
    plain = sa.create_engine(url)
    single = db_api.autocommit_engine(url, fixtures.make_conf().database)
    try:
        with plain.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        for engine, open_after in ((plain, True), (single, False)):
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT id FROM t")
                assert _in_transaction(
                    conn.connection.dbapi_connection) is open_after
    finally:
        plain.dispose()
        single.dispose()
        drop()
