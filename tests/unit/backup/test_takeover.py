"""Which in-flight backups of dead backup services a live one takes over,
and that the move of ``host`` is a compare-and-swap only one taker wins."""

import os
import uuid

from common import constants
from common.db.api import backups as backups_db
from common.db.api import services as services_db
from services.backup import manager
from services.backup import takeover

try:
    from tests.unit.backup import test_work
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from backup import test_work  # type: ignore[no-redef]
    from db import fixtures  # type: ignore[no-redef]

database = fixtures.database
worker = test_work.worker
POSIX = "drivers.backup.posix"


def _service(host, up):
    row = services_db.service_register(
        fixtures.admin(), host, constants.BACKUP_BINARY,
        constants.BACKUP_TOPIC, "nova")
    if not up:  # as after a heartbeat older than service_down_time
        services_db.service_stopped(fixtures.admin(), row.id)


def _in_flight(worker, host, status="creating", service=None):
    vol = test_work._volume(worker, os.urandom(test_work.CHUNK))
    row = backups_db.backup_create(fixtures.admin(), worker.conf, dict(
        id=str(uuid.uuid4()), volume_id=vol.id, project_id="p1",
        size=vol.size, container="c", host=host),
        {"status": ["available", "in-use"]})
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": status, "service": service})
    return row.id


def _host(backup_id):
    return backups_db.backup_get(fixtures.admin(), backup_id).host


def test_only_reachable_rows_of_down_services_are_taken(worker):
    _service("bk1", up=True)
    _service("dead", up=False)
    _service("alive", up=True)
    fresh = _in_flight(worker, "dead")                 # nothing written yet
    same = _in_flight(worker, "dead", service=POSIX)
    other = _in_flight(worker, "dead", service="drivers.backup.ceph")
    done = _in_flight(worker, "dead", status="available", service=POSIX)
    busy = _in_flight(worker, "alive", service=POSIX)
    taken = takeover.take_over(fixtures.admin(), worker.conf, "bk1", POSIX)
    assert sorted(row.id for row in taken) == sorted([fresh, same])
    assert (_host(fresh), _host(same)) == ("bk1", "bk1")
    assert (_host(other), _host(done), _host(busy)) == ("dead", "dead",
                                                        "alive")
    # Taken rows are this host's now: nothing is left to take.
    assert takeover.take_over(fixtures.admin(), worker.conf, "bk1",
                              POSIX) == []


def test_a_taken_backup_is_resumed_to_available(worker):
    _service("dead", up=False)
    backup_id = _in_flight(worker, "dead")
    mgr = manager.BackupManager.__new__(manager.BackupManager)
    mgr.worker = worker
    (taken,) = takeover.take_over(fixtures.admin(), worker.conf, "bk1", POSIX)
    mgr._resume_rows(fixtures.admin(), [taken])
    row = backups_db.backup_get(fixtures.admin(), backup_id)
    assert (row.status, row.host, row.service) == ("available", "bk1", POSIX)


def test_of_two_takers_one_takes_each_row(worker):
    _service("dead", up=False)
    ids = {_in_flight(worker, "dead") for _ in range(3)}
    won = fixtures.race(2, lambda i: takeover.take_over(
        fixtures.admin(), worker.conf, "taker%d" % i, POSIX), errors=False)
    taken = [row.id for rows in won for row in rows]
    assert sorted(taken) == sorted(ids)
    assert {_host(i) for i in ids} <= {"taker0", "taker1"}


def test_a_service_back_up_keeps_its_rows(worker):
    _service("dead", up=False)
    backup_id = _in_flight(worker, "dead")
    (row,) = backups_db.in_flight_of_down_services(
        fixtures.admin(), worker.conf.service_down_time)
    _service("dead", up=True)                # it restarted meanwhile
    assert not backups_db.backup_take_over(fixtures.admin(), row, "bk1",
                                           worker.conf.service_down_time)
    assert _host(backup_id) == "dead"


def test_the_check_runs_only_with_backup_takeover(worker):
    mgr = manager.BackupManager.__new__(manager.BackupManager)
    mgr.worker = worker
    assert mgr.periodic_tasks() == []
    worker.conf.set_override("backup_takeover", True)
    worker.conf.set_override("backup_takeover_interval", 5)
    assert mgr.periodic_tasks() == [(5, mgr.take_over_dead)]
