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


class _Clock:
    now = 0.0

    def __call__(self):
        return self.now


def _counted(monkeypatch):
    """Which of ``RunningHosts``' statements run: ``rows``, ``check``."""
    ran = []
    for name, label in (("_running_rows", "rows"), ("_unchanged", "check")):
        real = getattr(services_db, name)
        monkeypatch.setattr(services_db, name, lambda *args, _real=real,
                            _label=label, **kwargs: ran.append(_label)
                            or _real(*args, **kwargs))
    return ran


def test_running_hosts_reads_the_names_again_only_when_the_rows_change(
        monkeypatch):
    """Asked again, ``RunningHosts`` checks two counts and answers as the
    table does; a service that starts, comes back or is enabled, and one
    that stops, make it read the names again."""
    _register("n1@a")
    _register("n2@b")
    _register("n3@c", age=120)
    _register("n4@d", disabled=True)
    running = services_db.RunningHosts(BINARY, clock=_Clock())
    ran = _counted(monkeypatch)

    def answer():
        found = running(fixtures.admin(), 60)
        assert found == services_db.running_backends(fixtures.admin(), 60)
        return found
    assert answer() == {"n1@a", "n2@b"} and ran == ["rows"]
    assert answer() == {"n1@a", "n2@b"} and ran == ["rows", "check"]
    for change, expected in (
            (lambda: _register("n5@e"), {"n1@a", "n2@b", "n5@e"}),
            (lambda: _register("n3@c"), {"n1@a", "n2@b", "n3@c", "n5@e"}),
            (lambda: services_db.service_set_disabled(
                fixtures.admin(), "n4@d", BINARY, False, None),
             {"n1@a", "n2@b", "n3@c", "n4@d", "n5@e"}),
            (lambda: _register("n2@b", age=120),
             {"n1@a", "n3@c", "n4@d", "n5@e"})):
        change()
        del ran[:]
        assert answer() == expected and ran == ["check", "rows"]


def test_running_hosts_reads_again_after_a_while(monkeypatch):
    """A member that restarts into a cluster keeps its row and id; the
    cluster's name is read at the latest ``REREAD_AFTER`` seconds on."""
    _register("n1@a")
    clock = _Clock()
    running = services_db.RunningHosts(BINARY, clock=clock)
    assert running(fixtures.admin(), 60) == {"n1@a"}
    _register("n1@a", cluster="c1@a")
    clock.now += services_db.REREAD_AFTER
    assert running(fixtures.admin(), 60) == {"c1@a"}


def test_id_ranges():
    assert services_db.id_ranges([]) == []
    assert services_db.id_ranges([7, 3, 4, 5, 9, 10]) == [
        (3, 5), (7, 7), (9, 10)]


def test_running_hosts_with_too_many_ranges_reads_every_time(monkeypatch):
    """Rows spread over more id ranges than one check takes are read at
    every call (no check)."""
    hosts = ["n%d@x" % i for i in range(2 * services_db.MAX_RANGES + 2)]
    for index, host in enumerate(hosts):
        _register(host, age=120 if index % 2 else 0)
    running = services_db.RunningHosts(BINARY, clock=_Clock())
    ran = _counted(monkeypatch)
    for _ in range(2):
        assert running(fixtures.admin(), 60) == set(hosts[::2])
    assert ran == ["rows", "rows"]
