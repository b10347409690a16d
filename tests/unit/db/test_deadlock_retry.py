"""The rule for lost deadlocks and Galera certification failures
(``common.db.api.engine.retry_on_deadlock``): a whole writer transaction
runs again, never the part of one that joined a transaction already open,
and every writer transaction of the database API is retried.
"""

import ast
import pathlib

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from common.db import models
from common.db.api import engine as db_engine
from common.db.api import volumes as volumes_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database

ROOT = pathlib.Path(__file__).resolve().parents[3]
#: Writer transactions that are not retried, and why.
NOT_RETRIED = {
    # It rolls itself back: a start's warm-up of the writers' statements.
    ("common/warmup.py", "_in_a_transaction"),
}


def _rename(context, volume_id: str, name: str) -> None:
    context.connection.execute(sa.update(models.Volume).where(
        models.Volume.id == volume_id).values(display_name=name))


def _name(volume_id: str) -> str:
    return volumes_db.volume_get(fixtures.admin(), volume_id).display_name


def test_a_transaction_that_lost_a_deadlock_runs_again_whole():
    vol = fixtures.make_volume()
    runs = []

    @db_engine.retry_on_deadlock
    @db_engine.writer.connection
    def rename_twice(context, volume_id):
        runs.append(volume_id)
        _rename(context, volume_id, "first-%d" % len(runs))
        if len(runs) == 1:
            # What oslo.db raises for MariaDB's 1213 (a Galera
            # certification failure): the transaction was rolled back.
            raise db_exc.DBDeadlock()
        _rename(context, volume_id, "second-%d" % len(runs))

    rename_twice(fixtures.admin(), vol.id)
    assert len(runs) == 2
    assert _name(vol.id) == "second-2"


def test_a_deadlock_inside_an_open_transaction_goes_up_to_its_opener():
    """The inner function alone is not run again (its transaction is
    gone): the outer transaction, which opened it, runs again whole."""
    vol = fixtures.make_volume()
    outer_runs, inner_runs = [], []

    @db_engine.retry_on_deadlock
    @db_engine.writer.connection
    def inner(context, volume_id):
        inner_runs.append(volume_id)
        if len(inner_runs) == 1:
            raise db_exc.DBDeadlock()
        _rename(context, volume_id, "inner")

    @db_engine.retry_on_deadlock
    @db_engine.writer.connection
    def outer(context, volume_id):
        outer_runs.append(volume_id)
        _rename(context, volume_id, "outer-%d" % len(outer_runs))
        inner(context, volume_id)

    outer(fixtures.admin(), vol.id)
    assert (len(outer_runs), len(inner_runs)) == (2, 2)
    assert _name(vol.id) == "inner"


@pytest.mark.parametrize("error, runs", [
    # A deadlock lost every time: raised after 20 retries.
    (db_exc.DBDeadlock, 21),
    # Any other database error: raised at once.
    (db_exc.DBDuplicateEntry, 1)])
def test_what_is_raised_after_the_retries(error, runs):
    made = []

    @db_engine.retry_on_deadlock
    @db_engine.writer.connection
    def failing(context):
        made.append(1)
        raise error()

    with pytest.raises(error):
        failing(fixtures.admin())
    assert len(made) == runs


def _writer_transactions(path: pathlib.Path):
    """``(name, retried)`` of each writer transaction ``path`` defines: a
    function decorated with ``writer`` (``writer.connection``,
    ``transaction(writer)``, ``single_statement(writer)``), or a name
    assigned such a decorator's result."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            marks = [ast.unparse(dec) for dec in node.decorator_list]
            if any("writer" in mark for mark in marks):
                yield node.name, any("retry_on_deadlock" in mark
                                     for mark in marks)
        elif isinstance(node, ast.Assign) and isinstance(node.value,
                                                         ast.Call):
            made = ast.unparse(node.value)
            if "(writer)" in made:
                yield ast.unparse(node.targets[0]), made.startswith(
                    "retry_on_deadlock(")


def test_every_writer_transaction_is_retried():
    found, unretried = 0, set()
    for folder in ("common", "services", "drivers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name, retried in _writer_transactions(path):
                found += 1
                if not retried:
                    unretried.add((str(path.relative_to(ROOT)), name))
    assert found > 50
    assert unretried == NOT_RETRIED
