"""A real database for unit tests: one SQLite file per test session.

oslo.db's transaction context is configured once per process, so every test
module that needs the database shares this one; ``clean()`` empties the
tables between tests.  Import it as ``tests.unit.db.fixtures`` (or ``db.
fixtures`` when pytest put ``tests/unit`` on the path).

``ASHLAR_UNIT_DB_URL`` points it at another (empty) database instead, e.g.
to run the race tests of ``test_attachments_db.py`` on PostgreSQL or
MariaDB.
"""

import atexit
import contextlib
import os
import shutil
import tempfile
import uuid

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from common import conf as ashlar_conf
from common import context
from common import policy
from common.conf import attachments as attachments_conf
from common.db import migrations
from common.db import models
from common.db.api import engine as db_engine
from common.db.api import execution

_READY = False


def make_conf(**overrides) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    attachments_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    for name, value in overrides.items():
        conf.set_override(name, value)
    return conf


def setup() -> None:
    """Configure the shared database once and bring it to the head."""
    global _READY
    if _READY:
        return
    if cfg.CONF._namespace is None:
        cfg.CONF([], project="ashlar", default_config_files=[])
    policy.reset()
    if not db_engine._CONFIGURED:
        folder = tempfile.mkdtemp(prefix="ashlar-unit-db-")
        atexit.register(shutil.rmtree, folder, True)
        conf = make_conf()
        url = os.environ.get("ASHLAR_UNIT_DB_URL",
                             "sqlite:///%s/unit.sqlite" % folder)
        conf.set_override("connection", url, "database")
        db_engine.configure(conf)
    migrations.upgrade(db_engine.get_engine())
    _READY = True


def clean() -> None:
    """Empty every table but keep the default volume type (quota limits
    too: a limit one test set must not refuse another's creates)."""
    engine = db_engine.get_engine()
    with engine.begin() as conn:
        for table in ("backups", "transfers", "attachment_specs",
                      "volume_attachment",
                      "snapshot_metadata", "snapshots", "group_snapshots",
                      "volume_metadata", "volumes", "group_volume_types",
                      "groups", "group_types", "volume_type_extra_specs",
                      "volume_type_projects", "services", "clusters", "quotas",
                      "quota_classes", "project_locks", "messages"):
            conn.execute(sa.text("DELETE FROM %s" % table))
        conn.execute(sa.text("UPDATE volume_types SET qos_specs_id = NULL"))
        conn.execute(sa.text("DELETE FROM volume_types WHERE name != "
                             "'__DEFAULT__'"))
        conn.execute(sa.text("DELETE FROM qos_specs"))


@pytest.fixture(autouse=True)
def database():
    """An empty database for each test of a module that imports this
    (``database = fixtures.database``)."""
    setup()
    clean()
    yield
    clean()


def admin() -> context.RequestContext:
    return context.get_admin_context()


def user(project: str = "p1", roles=("member",),
         service_roles=()) -> context.RequestContext:
    return context.RequestContext(user_id="u-" + project, project_id=project,
                                  roles=list(roles),
                                  service_roles=list(service_roles),
                                  overwrite=False)


def make_type(name: str | None = None, specs: dict | None = None):
    from common.db.api import types as types_db
    return types_db.type_create(admin(), name or "t-" + uuid.uuid4().hex[:8],
                                extra_specs=specs or {})


def make_volume(project: str = "p1", status: str = "available",
                multiattach: bool = False, host: str = "node1@b1#b1",
                vtype=None, **values) -> execution.Record:
    from common.db.api import types as types_db
    from common.db.api import volumes as volumes_db
    if vtype is None:
        vtype = types_db.type_get_by_name(admin(), "__DEFAULT__")
    row = dict(id=str(uuid.uuid4()), project_id=project, user_id="u",
               size=1, status=status, attach_status="detached",
               volume_type_id=vtype.id, multiattach=multiattach, host=host,
               provider_location="fake://x")
    row.update(values)
    return volumes_db.volume_create(admin(), row)


def make_volume_on(driver, **values) -> execution.Record:
    """``make_volume``, and the volume made on ``driver`` too."""
    from services.volume import backend as volume_backend
    row = make_volume(**values)
    driver.create_volume(volume_backend.driver_volume(row))
    return row


def reserve(volume_id: str, guard, values: dict, connector=None):
    """``attachment_reserve`` with a fixed decision: the new row, or None
    when the guard refused."""
    from common.db.api import attachments as attachments_db
    row, _volume, _wanted = attachments_db.attachment_reserve(
        admin(), volume_id,
        lambda _vol, _specs: attachments_db.Reservation(guard, values,
                                                        connector))
    return row


def make_snapshot(volume, status: str = "available", metadata=None,
                  expected=None, check=None, **values) -> models.Snapshot:
    """A snapshot of ``volume`` (counted on it), as ``snapshot_create``
    makes them; ``expected`` defaults to the volume's status as given."""
    from common.db.api import snapshots as snapshots_db
    row = dict(id=str(uuid.uuid4()), volume_id=volume.id,
               project_id=volume.project_id, user_id="u", status=status,
               volume_size=volume.size)
    row.update(values)
    return snapshots_db.snapshot_create(
        admin(), row, metadata,
        {"status": volume.status} if expected is None else expected, check)


def race(n: int, fn, errors: bool = True) -> list:
    """Run ``fn(i)`` in n threads released at once; each one's result, or
    the exception it raised (``errors=False``: none may raise)."""
    import threading
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = fn(i)
        except Exception as exc:  # noqa: BLE001 - the caller sorts them
            results[i] = exc
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors or not [r for r in results if isinstance(r, Exception)], \
        results
    return results


@contextlib.contextmanager
def selects():
    """The SELECT statements run within the block, on the transactions'
    engine and on the autocommit pool of ``single_statement`` (a server
    database's)."""
    seen: list[str] = []
    engines = [db_engine.get_engine()]
    if execution.autocommit_pool() is not None:
        engines.append(execution.autocommit_pool())

    def spy(_conn, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)
    for engine in engines:
        sa.event.listen(engine, "before_cursor_execute", spy)
    try:
        yield seen
    finally:
        for engine in engines:
            sa.event.remove(engine, "before_cursor_execute", spy)
