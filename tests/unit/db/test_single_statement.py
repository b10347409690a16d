"""One-statement work: autocommit on PostgreSQL and MariaDB, a
transaction on SQLite and inside an open one."""

import inspect
import uuid

import pytest
import sqlalchemy as sa

from common import attach_rules
from common.db import migrations
from common.db import models
from common.db.api import attachments as db
from common.db.api import engine as db_engine
from common.db.api import execution
from common.db.api import volumes as volumes_db
from common.db.api.attachments import change as change_db
from common.db.api.attachments import reserve as reserve_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database


def test_a_single_statement_joins_the_transaction_the_context_has_open():
    vol = fixtures.make_volume()
    ctxt = fixtures.admin()
    with db_engine.writer.connection.using(ctxt) as conn:
        conn.execute(sa.update(models.Volume).where(
            models.Volume.id == vol.id).values(display_name="new"))
        # Not committed yet: only the same transaction can see it.
        assert db.volume_brief(ctxt, vol.id).display_name == "new"


def test_record_changes_columns_but_never_the_status():
    vol = fixtures.make_volume(multiattach=True)
    row = fixtures.reserve(vol.id, attach_rules.ReserveGuard(
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
    if hasattr(dbapi_connection, "info"):  # psycopg
        import psycopg.pq
        return (dbapi_connection.info.transaction_status
                != psycopg.pq.TransactionStatus.IDLE)
    cursor = dbapi_connection.cursor()  # PyMySQL
    cursor.execute("SELECT @@in_transaction")
    return bool(cursor.fetchone()[0])


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_server_databases_run_a_single_statement_without_a_transaction(
        kind):
    """A plain connection's statement opens a transaction that costs a
    COMMIT (and with psycopg a BEGIN) round trip; the autocommit pool's
    does not."""
    from deploy.testbed import harness
    url, drop = harness.database(kind)
    plain = sa.create_engine(url)
    single = db_engine.autocommit_engine(url, fixtures.make_conf().database)
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


def test_the_autocommit_pool_takes_a_connection_back_without_a_rollback():
    """PyMySQL (as mysqlclient, which the unit run does not install) sends
    the pool's reset-on-return ROLLBACK even where no transaction is open:
    the autocommit pool does without it, a round trip fewer per statement
    (the server counts none)."""
    from deploy.testbed import harness
    url, drop = harness.database("mysql")
    single = db_engine.autocommit_engine(url, fixtures.make_conf().database)

    def rollbacks(conn) -> int:
        cursor = conn.connection.dbapi_connection.cursor()
        cursor.execute("SHOW SESSION STATUS LIKE 'Com_rollback'")
        return int(cursor.fetchone()[1])
    try:
        with single.connect() as conn:
            before = rollbacks(conn)
            dbapi_connection = conn.connection.dbapi_connection
        with single.connect() as conn:
            assert conn.connection.dbapi_connection is dbapi_connection
            assert rollbacks(conn) == before
        with single.connect() as conn:
            assert conn.connection.dbapi_connection is dbapi_connection
            assert rollbacks(conn) == before
    finally:
        single.dispose()
        drop()


def _statements(engine) -> list:
    """The statements ``engine`` runs from now on."""
    seen = []
    sa.event.listen(engine, "before_cursor_execute",
                    lambda *args: seen.append(args[2]))
    return seen


def _reserve_at_once(conn, volume_id, multiattach, connector):
    volume, _specs = reserve_db._brief_and_specs(conn, volume_id)
    wanted = db.Reservation(
        attach_rules.ReserveGuard(multiattach=multiattach, limit=8),
        {"id": str(uuid.uuid4()), "attach_status": "attaching",
         "transition": "creating", "attach_mode": "rw",
         "attached_host": "h1"}, connector)
    guard, params, values = reserve_db._admission(volume_id, volume, wanted)
    return values, inspect.unwrap(reserve_db._admit)(conn, guard, params, values,
                                         connector)


@pytest.mark.parametrize("multiattach", [True, False])
def test_postgresql_reserves_and_completes_in_one_statement_each(
        multiattach):
    """The guard with the new row and its connector rows, and os-complete's
    row change with its volume's, are one statement each on PostgreSQL; a
    refused guard or a lost compare-and-swap writes nothing."""
    from deploy.testbed import harness
    url, drop = harness.database("postgresql")
    plain = sa.create_engine(url)
    single = db_engine.autocommit_engine(url, fixtures.make_conf().database)
    volume_id = str(uuid.uuid4())
    try:
        migrations.upgrade(plain)
        with plain.begin() as conn:
            vtype = conn.execute(sa.select(models.VolumeType.id)).scalar()
            conn.execute(sa.insert(models.Volume).values(
                id=volume_id, project_id="p1", user_id="u", size=1,
                status="available", attach_status="detached",
                volume_type_id=vtype, multiattach=multiattach,
                host="node1@b1#b1"))
        seen = _statements(single)
        with single.connect() as conn:
            values, admitted = _reserve_at_once(
                conn, volume_id, multiattach, {"host": "h1", "wwpns": ["a"]})
            assert admitted and len(seen) == 2  # the read, then one
            _values, again = _reserve_at_once(conn, volume_id, multiattach,
                                              {"host": "h2"})
            assert again is multiattach
            change = db.Change({"attach_status": "attaching",
                                "transition": None},
                               {"attach_status": "attached"})
            del seen[:]
            assert change.raises_to() == "attached"
            assert not inspect.unwrap(change_db._raise_with_row)(
                conn, volume_id, values["id"], change,
                "attached")  # still in flight
            conn.execute(sa.update(models.VolumeAttachment).where(
                models.VolumeAttachment.id == values["id"]).values(
                transition=None))
            assert inspect.unwrap(change_db._raise_with_row)(
                conn, volume_id, values["id"], change, "attached")
            assert len(seen) == 3
            volume = conn.execute(sa.select(models.Volume).where(
                models.Volume.id == volume_id)).one()
            specs = dict(conn.execute(sa.select(
                models.AttachmentSpec.key, models.AttachmentSpec.value).where(
                models.AttachmentSpec.attachment_id == values["id"])).all())
            rows = conn.execute(sa.select(sa.func.count()).select_from(
                models.VolumeAttachment)).scalar()
        assert specs == {"host": '"h1"', "wwpns": '["a"]'}
        assert (volume.status, volume.attach_status) == ("in-use",
                                                         "attached")
        assert volume.attachment_count == rows == (2 if multiattach else 1)
    finally:
        plain.dispose()
        single.dispose()
        drop()


def test_a_volume_read_on_its_own_takes_no_transaction():
    """On a server database a volume read outside a transaction runs on
    the autocommit pool (no BEGIN, no ROLLBACK); on SQLite, and in an open
    transaction, under ``reader``."""
    vol = fixtures.make_volume()
    ctxt = fixtures.admin()
    own = execution.autocommit_pool() or db_engine.get_engine()
    seen = []

    def spy(_conn, _cursor, statement, *_args):
        seen.append(statement)
    sa.event.listen(own, "before_cursor_execute", spy)
    try:
        assert volumes_db.volume_get(ctxt, vol.id).id == vol.id
        assert any("FROM volumes" in sql for sql in seen)
        seen.clear()
        with db_engine.writer.using(ctxt):
            assert volumes_db.volume_get(ctxt, vol.id).id == vol.id
        assert not any("FROM volumes" in sql for sql in seen) or \
            execution.autocommit_pool() is None
    finally:
        sa.event.remove(own, "before_cursor_execute", spy)


def test_a_volume_read_reads_attachments_only_when_it_has_some():
    """A volume without attachments (its counter says none) is one
    statement; one with some brings them, each without its connector."""
    vol = fixtures.make_volume(multiattach=True)
    ctxt = fixtures.admin()
    seen = _statements(execution.autocommit_pool() or db_engine.get_engine())
    row = volumes_db.volume_get(ctxt, vol.id)
    assert row.attachments == []
    reads = [sql for sql in seen if sql.startswith("SELECT")]
    assert len(reads) == 1 and "volume_attachment" not in reads[0]
    made = fixtures.reserve(vol.id, attach_rules.ReserveGuard(
        multiattach=True, limit=8), {"id": "a1", "attach_status": "attaching",
                                     "transition": "creating",
                                     "attached_host": "h1"})
    seen.clear()
    row = volumes_db.volume_get(ctxt, vol.id)
    assert [a.id for a in row.attachments] == [made.id]
    reads = [sql for sql in seen if sql.startswith("SELECT")]
    assert len(reads) == 2 and "FROM volume_attachment" in reads[1]
    assert "attachment_specs" not in " ".join(reads)
