"""The warm-up at start: it runs the reads the first requests would run
first, and the checks of their writer transactions in one it rolls back;
it leaves nothing written and never stops a service."""

import logging

import sqlalchemy as sa

from common import exception
from common import warmup
from common.db.api import engine as db_engine
from common.db.api import execution
from common.db.api import volumes as volumes_db
from services.api import app
from services.api.operations import volumes as volume_ops

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database

_TABLES = ("volumes", "volume_attachment", "attachment_specs",
           "volume_types", "services", "project_locks", "quotas")


def _counts() -> dict[str, int]:
    with db_engine.get_engine().connect() as conn:
        return {table: conn.execute(sa.text(
            "SELECT COUNT(*) FROM %s" % table)).scalar() for table in _TABLES}


def test_the_api_warm_up_reads_and_leaves_nothing_written():
    vtype = fixtures.make_type("gold", {"multiattach": "<is> True"})
    volumes_db.volume_create(fixtures.admin(), {
        "id": "v1", "project_id": "p1", "user_id": "u", "size": 1,
        "status": "available", "attach_status": "detached",
        "volume_type_id": vtype.id}, {})
    before = _counts()
    seen = []
    engines = {execution.autocommit_pool() or db_engine.get_engine(),
               db_engine.get_engine()}

    def spy(_conn, _cursor, statement, *_args):
        seen.append(statement.lstrip().split(None, 1)[0].upper())
    for engine in engines:
        sa.event.listen(engine, "before_cursor_execute", spy)
    try:
        app._warm_up(volume_ops.VolumeOperations(fixtures.make_conf(),
                                                 None, None))
    finally:
        for engine in engines:
            sa.event.remove(engine, "before_cursor_execute", spy)
    assert seen.count("SELECT") >= 10, seen
    # The quota check's lock row (of a project no row has), rolled back.
    assert seen.count("INSERT") == 1, seen
    assert not {"UPDATE", "DELETE"} & set(seen), seen
    assert _counts() == before


def test_a_failing_warm_up_is_logged_and_the_service_goes_on(caplog):
    ran = []

    def missing(_ctxt, volume_id):
        ran.append(("missing", volume_id))
        volumes_db.volume_get(_ctxt, volume_id)

    def broken(_ctxt, _volume_id):
        ran.append(("broken", _volume_id))
        raise RuntimeError("database down")

    with caplog.at_level(logging.WARNING):
        warmup.warm([missing, broken, missing],
                    steps=[lambda: ran.append("step")])
    assert ran == ["step", ("missing", warmup.NO_SUCH_ID),
                   ("broken", warmup.NO_SUCH_ID)]
    assert "Warm-up failed" in caplog.text


def test_a_refused_check_ends_its_step_only_and_is_undone():
    vtype = fixtures.make_type()
    seen = []

    def over_quota(context, volume_id):
        volumes_db.volume_create(context, {
            "id": volume_id, "project_id": "p1", "user_id": "u", "size": 1,
            "status": "available", "attach_status": "detached",
            "volume_type_id": vtype.id}, {})
        raise exception.QuotaError()

    def then(context, volume_id):
        seen.append(volumes_db.volume_get(context, volume_id).id)
    before = _counts()
    warmup.undone([over_quota, then])
    assert seen == [warmup.NO_SUCH_ID]
    assert _counts() == before
