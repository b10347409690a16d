"""Prebuilt statements on the driver's cursor answer as SQLAlchemy does.

Run on SQLite here, and on PostgreSQL and MariaDB by the functional run
(``test_unit_db_on_servers.py``): each database's driver and SQLAlchemy
dialect process parameters and results its own way (SQLite's booleans are
integers, MariaDB has no ``UPDATE ... RETURNING``).
"""

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from common import attach_rules
from common.db import models
from common.db.api import cas
from common.db.api import direct
from common.db.api import engine as db_engine
from common.db.api import execution
from common.db.api import timestamps
from common.db.api.attachments import connectors
from common.db.api.attachments import reads
from common.db.api.attachments import statements
from common.db.api.attachments import volume_status

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database
VOL = models.Volume
#: What runs only on the SQLAlchemy releases tested (``direct.TESTED``).
plans = pytest.mark.skipif(not direct.PLANS, reason="SQLAlchemy outside the "
                           "tested range: statements run through it")


@pytest.fixture(scope="module")
def engine():
    """The unit database through the autocommit pool of server databases
    (``db_engine.autocommit_engine``: oslo.db's error translation, no
    listener on cursor executions, so SQLite runs plans too)."""
    fixtures.setup()
    url = db_engine.get_engine().url
    made = db_engine.autocommit_engine(url, fixtures.make_conf().database)
    yield made
    made.dispose()


@pytest.fixture
def connect(engine):
    """Open a connection of ``engine`` (a context manager)."""
    return engine.connect


def _attached_pair():
    """A bootable multiattach volume (its type has extra specs) with two
    attached rows on one host."""
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = fixtures.make_volume(multiattach=True, vtype=vtype, bootable=True)
    rows = [fixtures.reserve(vol.id, attach_rules.ReserveGuard(
        multiattach=True, limit=8), {
            "id": "a%d" % i, "attach_status": "attached",
            "transition": None, "attached_host": "h1"},
        connector={"host": "h1", "wwpns": ["w%d" % i]}) for i in range(2)]
    return vol, rows


def _both(conn, statement, params):
    """A read's rows (as dicts) through SQLAlchemy, then as a plan."""
    through = [found._asdict() for found in conn.execute(statement, params)]
    answer = direct.Connection(conn).execute(statement, params)
    assert isinstance(answer, direct.Result)
    return through, [found._asdict() for found in answer]


@plans
def test_reads_answer_the_same_rows(connect):
    """Every read of the hot paths, with types processed (SQLite and
    MariaDB answer booleans as integers)."""
    vol, _rows = _attached_pair()
    with connect() as conn:
        _compare_reads(conn, vol)


def _compare_reads(conn, vol):
    for statement, params in (
            (statements.WITH_VOLUME, {"attachment_id": "a0"}),
            (statements.WITH_VOLUME_SHARED, {"attachment_id": "a0"}),
            (statements.BRIEF_SPECS, {"volume_id": vol.id}),
            (statements.DISCONNECT_STATE, {"attachment_id": "a0",
                                    "volume_id": vol.id, "host": "h1"}),
            (statements.SELECT_ROW, {"attachment_id": "a1"}),
            (statements.WITH_VOLUME, {"attachment_id": "nothing"})):
        expected, got = _both(conn, statement, params)
        assert got == expected
    with_volume = direct.Connection(conn).execute(
        statements.WITH_VOLUME, {"attachment_id": "a0"}).one()
    assert with_volume.vol__bootable is True
    assert with_volume.has_connector is True


def test_changes_answer_the_rows_they_matched(connect):
    """A compare-and-swap's rowcount counts matched rows (MariaDB's too,
    when the values stay), and a mismatch matches none."""
    _vol, rows = _attached_pair()
    with connect() as conn:
        through = direct.Connection(conn)
        for expected, count in (({"transition": None}, 1),
                                ({"transition": None}, 1),
                                ({"transition": "connecting"}, 0)):
            query, params = cas.compare_and_swap(
                models.VolumeAttachment, rows[0].id, expected,
                {"mountpoint": "/dev/vdb"})
            assert through.execute(query, params).rowcount == count


def test_parameters_go_through_the_dialects_processors(connect):
    """A boolean parameter (an integer to SQLite) and a returned state."""
    vol = fixtures.make_volume()
    with connect() as conn:
        _flag_and_count(direct.Connection(conn), vol)


def _flag_and_count(through, vol):
    query = sa.update(VOL).where(VOL.id == sa.bindparam("volume_id")).values(
        bootable=sa.bindparam("flag", type_=sa.Boolean))
    assert through.execute(query, {"volume_id": vol.id,
                                   "flag": True}).rowcount == 1
    state = volume_status.state_after(through, statements.COUNT, {
        "volume_id": vol.id, "writer_delta": 1, "now": timestamps.utcnow()})
    assert tuple(state) == ("available", "detached", 0)
    found = through.execute(statements.SELECT_BRIEF, {"volume_id": vol.id}).one()
    assert (found.bootable, found.writer_count) == (True, 1)


@plans
def test_an_insert_sets_the_columns_its_parameters_name(connect):
    """``INSERT`` without values of its own, as through SQLAlchemy: the
    columns not named keep their defaults (a server-side id, NULL)."""
    _vol, rows = _attached_pair()
    spec = {"attachment_id": rows[0].id, "key": "k",
            "created_at": timestamps.utcnow()}
    with connect() as conn:
        answer = direct.Connection(conn).execute(statements.INSERT_SPECS, spec)
        assert isinstance(answer, direct.Result) and answer.rowcount == 1
        found = conn.execute(sa.select(models.AttachmentSpec).where(
            models.AttachmentSpec.key == "k")).one()
    assert (found.attachment_id, found.value) == (rows[0].id, None)
    assert found.id is not None


def test_database_errors_are_translated_as_through_sqlalchemy(connect):
    vol = fixtures.make_volume()
    insert = sa.insert(VOL).values(
        id=sa.bindparam("id"), project_id="p1", user_id="u", size=1,
        status="available", attach_status="detached",
        volume_type_id=vol.volume_type_id)
    with connect() as conn, pytest.raises(db_exc.DBDuplicateEntry):
        direct.Connection(conn).execute(insert, {"id": vol.id})


def test_what_a_plan_cannot_run_goes_through_sqlalchemy(connect):
    """Several parameter sets, and an expanding ``IN``."""
    _vol, rows = _attached_pair()
    with connect() as conn:
        _fall_back(direct.Connection(conn), rows)


def _fall_back(through, rows):
    through.execute(sa.insert(models.AttachmentSpec), [
        {"attachment_id": "a1", "key": key, "value": '"v"',
         "created_at": timestamps.utcnow()} for key in ("k1", "k2")])
    query, params = cas.compare_and_swap(
        models.VolumeAttachment, rows[1].id,
        {"attach_status": ["attached", "attaching"]}, {"mountpoint": "/m"})
    answer = through.execute(query, params)
    assert not isinstance(answer, direct.Result)
    assert answer.rowcount == 1
    assert connectors._connector(through, "a1") == {"host": "h1", "wwpns": ["w1"],
                                            "k1": "v", "k2": "v"}


def test_outside_the_tested_range_statements_run_through_sqlalchemy(
        connect, monkeypatch):
    """The public path: with a SQLAlchemy outside ``direct.TESTED`` no plan
    is made; every statement runs through SQLAlchemy's execution and
    answers as a plan does."""
    def no_plan(*_args):
        raise AssertionError("a plan was made")
    monkeypatch.setattr(direct, "PLANS", False)
    monkeypatch.setattr(direct, "_plan", no_plan)
    vol, rows = _attached_pair()
    with connect() as conn:
        through = direct.Connection(conn)
        answer = through.execute(statements.WITH_VOLUME,
                                 {"attachment_id": "a0"})
        assert not isinstance(answer, direct.Result)
        found = answer.one()
        assert (found.vol__bootable, found.has_connector) == (True, True)
        _flag_and_count(through, fixtures.make_volume())
        _fall_back(through, rows)
    with connect() as conn, pytest.raises(db_exc.DBDuplicateEntry):
        direct.Connection(conn).execute(sa.insert(VOL).values(
            id=vol.id, project_id="p1", user_id="u", size=1,
            status="available", attach_status="detached",
            volume_type_id=vol.volume_type_id))


def test_watched_statements_go_through_sqlalchemy(engine):
    """A cursor-execute listener sees every statement: plans step aside."""
    seen = []

    def record(_conn, _cursor, statement, *_args):
        seen.append(statement)
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        with engine.connect() as conn:
            answer = direct.Connection(conn).execute(
                statements.SELECT_ROW, {"attachment_id": "a0"})
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert not isinstance(answer, direct.Result)
    assert len(seen) == 1 and "volume_attachment" in seen[0]


def test_a_prebuilt_transaction_runs_on_the_driver_s_cursor():
    """``transaction(writer)`` hands its function a ``direct.Connection``
    on its transaction's connection (the one the context has open, when it
    has one) and commits what it wrote, or rolls it back on a raise."""
    given = []

    @execution.transaction(db_engine.writer)
    def rename(conn, volume_id, name, fail=False):
        given.append(conn)
        conn.execute(sa.update(VOL).where(VOL.id == volume_id).values(
            display_name=name))
        if fail:
            raise RuntimeError("undo")

    vol = fixtures.make_volume()
    ctxt = fixtures.admin()
    rename(ctxt, vol.id, "kept")
    with pytest.raises(RuntimeError):
        rename(ctxt, vol.id, "undone", fail=True)
    assert reads.volume_brief(ctxt, vol.id).display_name == "kept"
    with db_engine.writer.connection.using(ctxt) as conn:
        rename(ctxt, vol.id, "joined")
        assert given[-1].connection is conn
    assert reads.volume_brief(ctxt, vol.id).display_name == "joined"
    assert len(given) == 3
    assert all(isinstance(conn, direct.Connection) for conn in given)


@plans
def test_single_statements_run_plans_on_server_databases():
    """``single_statement`` hands its function a ``direct.Connection`` on
    the autocommit pool of PostgreSQL and MariaDB (unwatched: SQLAlchemy's
    log stays at WARNING unless ``connection_debug`` asks for more), a plain
    one on SQLite."""
    given = []

    @execution.single_statement(db_engine.reader)
    def probe(conn):
        given.append(conn)
        return reads._brief(conn, vol.id)

    vol = fixtures.make_volume()
    assert probe(fixtures.admin()).id == vol.id
    server = db_engine.get_engine().dialect.name != "sqlite"
    assert isinstance(given[0], direct.Connection) is server
    if server:
        assert not given[0]._watched
