"""Which volume services run: the database's answer and Python's agree."""

import datetime

import sqlalchemy as sa

from common.db import models
from common.db.api import clusters as clusters_db
from common.db.api import engine as db_engine
from common.db.api import services as services_db
from common.db.api import timestamps

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database
BINARY = "ashlar-volume"


def _register(host, cluster=None, age=0.0, disabled=False):
    services_db.service_register(fixtures.admin(), host, BINARY, BINARY,
                                 "nova", cluster_name=cluster)
    beat = timestamps.utcnow() - datetime.timedelta(seconds=age)
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.update(models.Service).where(
            models.Service.host == host).values(heartbeat_at=beat,
                                                disabled=disabled))


def _judged_in_python(down_time):
    return {row.host for row in services_db.service_liveness(
        fixtures.admin(), BINARY)
        if not row.disabled and services_db.is_up(row, down_time)}


def test_running_backends_are_the_enabled_that_heartbeat():
    _register("n1@up")
    _register("n2@stale", age=120)
    _register("n3@off", disabled=True)
    _register("m1@x", cluster="c1@x", age=120)
    _register("m2@x", cluster="c1@x")
    _register("m3@y", cluster="c2@y")
    clusters_db.cluster_set_disabled(fixtures.admin(), "c2@y", BINARY, True,
                                     "maintenance")
    _register("m4@z", cluster="c3@z", age=120)
    running = services_db.running_backends(fixtures.admin(), 60)
    assert running == {"n1@up", "c1@x"}
    assert running == _judged_in_python(60)
    assert services_db.running_backends(fixtures.admin(), 600) == {
        "n1@up", "n2@stale", "c1@x", "c3@z"} == _judged_in_python(600)


def test_a_service_stopped_is_not_running():
    _register("n1@up")
    [row] = services_db.service_list(fixtures.admin(), binary=BINARY)
    services_db.service_stopped(fixtures.admin(), row.id)
    assert services_db.running_backends(fixtures.admin(), 60) == set()
