"""One-statement work: autocommit on PostgreSQL, a transaction elsewhere."""

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


def test_postgresql_runs_a_single_statement_without_a_transaction():
    """psycopg2 wraps every statement of a plain connection in BEGIN ...
    COMMIT, round trips of their own; the autocommit pool does not."""
    from tests.functional import harness
    psycopg2 = pytest.importorskip("psycopg2")
    url, drop = harness.database("postgresql")
    plain = sa.create_engine(url)
    single = db_api.autocommit_engine(url, fixtures.make_conf().database)
    try:
        for engine, status in (
                (plain, psycopg2.extensions.TRANSACTION_STATUS_INTRANS),
                (single, psycopg2.extensions.TRANSACTION_STATUS_IDLE)):
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
                assert conn.connection.dbapi_connection \
                    .get_transaction_status() == status
    finally:
        plain.dispose()
        single.dispose()
        drop()
