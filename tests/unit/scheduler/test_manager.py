"""Tests for the scheduler manager on a real (SQLite) services table."""

import datetime
import threading
import time

from unittest import mock

import pytest

from common import capabilities
from common import context
from common import messages
from common.db import models
from common.db.api import engine as db_engine
from common.db.api import messages as messages_db
from common.db.api import services as services_db
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from services.scheduler import manager as scheduler_manager
from tests.unit.db import fixtures
from tests.unit.scheduler.fakes import ViewAPI


class VolumeAPI:
    def __init__(self):
        self.creates = []
        self.publishes = 0

    def create_volume(self, ctxt, volume_id, host):
        self.creates.append((volume_id, host))

    def migrate_volume_in(self, ctxt, volume_id, host, source_host, source,
                          new_type_id):
        self.creates.append((volume_id, host, source_host, source,
                             new_type_id))

    def publish_service_capabilities(self, ctxt):
        self.publishes += 1


def report(multiattach):
    return {"volume_backend_name": "file", "availability_zone": "nova",
            "pools": [{"pool_name": "file", "total_capacity_gb": 100,
                       "free_capacity_gb": 100,
                       "provisioned_capacity_gb": 0,
                       "thin_provisioning_support": True,
                       "multiattach": multiattach, "backend_state": "up"}]}


@pytest.fixture
def db():
    fixtures.setup()
    fixtures.clean()
    yield
    fixtures.clean()


@pytest.fixture
def mgr(db):
    conf = fixtures.make_conf(backend_stats_polling_interval=1)
    return scheduler_manager.SchedulerManager(conf, volume_api=VolumeAPI(),
                                              view_api=ViewAPI())


def register(host):
    services_db.service_register(fixtures.admin(), host, "ashlar-volume",
                                 "ashlar-volume", "nova")


def creating(vtype=None):
    return fixtures.make_volume(status="creating", host=None,
                                provider_location=None, vtype=vtype)


def test_places_and_casts(mgr):
    register("node1@file")
    mgr.update_service_capabilities(None, "node1@file", report(True),
                                    time.time())
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = creating(vtype)
    mgr.create_volume(fixtures.admin(), vol.id)
    assert mgr.volume_rpcapi.creates == [(vol.id, "node1@file#file")]
    assert volumes_db.volume_get(fixtures.admin(),
                                 vol.id).host == "node1@file#file"


def test_a_type_s_zones_choose_the_pool_and_give_the_volume_its_zone(mgr):
    """A volume the API left without a zone (its type's
    ``RESKEY:availability_zones`` named several) goes to a pool in one of
    them, and takes that pool's zone, as Cinder's scheduler sets it."""
    for host, zone in (("node1@file", "nova"), ("node2@file", "east")):
        register(host)
        mgr.update_service_capabilities(None, host, dict(
            report(False), availability_zone=zone), time.time())
    vtype = fixtures.make_type(specs={
        "RESKEY:availability_zones": "east,west"})
    vol = creating(vtype)
    assert vol.availability_zone is None
    mgr.create_volume(fixtures.admin(), vol.id)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert (row.host, row.availability_zone) == ("node2@file#file", "east")
    placed = creating(vtype)
    volumes_db.volume_update(fixtures.admin(), placed.id,
                             {"availability_zone": "nova"})
    mgr.create_volume(fixtures.admin(), placed.id)
    row = volumes_db.volume_get(fixtures.admin(), placed.id)
    assert (row.host, row.availability_zone) == ("node1@file#file", "nova")


def test_a_disable_takes_effect_for_the_next_placement(mgr):
    """The scheduler's list of running backends is read at most once a
    second; a service disabled since (PUT /os-services/disable) is not
    placed on: its placement's swap refuses it, the list is read again,
    and the volume goes to an enabled backend, or fails if none is."""
    for host, free in (("node1@file", 100), ("node2@file", 10)):
        register(host)
        caps = report(False)
        caps["pools"][0].update(total_capacity_gb=free, free_capacity_gb=free)
        mgr.update_service_capabilities(None, host, caps, time.time())
    first = creating()
    mgr.create_volume(fixtures.admin(), first.id)
    assert volumes_db.volume_get(fixtures.admin(), first.id).host == \
        "node1@file#file"                   # the roomier one, list cached
    services_db.service_set_disabled(fixtures.admin(), "node1@file",
                                     "ashlar-volume", True, "maintenance")
    second = creating()
    mgr.create_volume(fixtures.admin(), second.id)
    assert volumes_db.volume_get(fixtures.admin(), second.id).host == \
        "node2@file#file"
    assert [c[1] for c in mgr.volume_rpcapi.creates] == [
        "node1@file#file", "node2@file#file"]
    services_db.service_set_disabled(fixtures.admin(), "node2@file",
                                     "ashlar-volume", True, "maintenance")
    third = creating()
    mgr.create_volume(fixtures.admin(), third.id)
    row = volumes_db.volume_get(fixtures.admin(), third.id)
    assert (row.status, row.host) == ("error", None)
    assert len(mgr.volume_rpcapi.creates) == 2


def _messages(volume_id):
    return messages_db.message_list(fixtures.admin(),
                                    filters={"resource_uuid": volume_id})


def test_no_valid_backend_shows_a_reason(mgr):
    register("node1@file")
    mgr.update_service_capabilities(None, "node1@file", report(False),
                                    time.time())
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = creating(vtype)
    ctxt = context.RequestContext(user_id="u", project_id="p1",
                                  request_id="req-create", overwrite=False)
    mgr.create_volume(ctxt, vol.id)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error"
    assert row.error_reason == (
        "No valid backend was found. None of 1 pools passed the filters: "
        "CapabilitiesFilter rejected 1 (no multiattach=<is> True).")
    assert mgr.volume_rpcapi.creates == []
    [told] = _messages(vol.id)
    assert (told.event_id, told.request_id, told.project_id) == (
        "VOLUME_VOLUME_001_003", "req-create", "p1")


def _move(mgr, multiattach_pool, host=None):
    """A volume moving to a multiattach type (to pool ``host``, if
    named), handed to the scheduler while node2's pool reports
    ``multiattach_pool``; the volume row."""
    register("node2@file")
    mgr.update_service_capabilities(None, "node2@file",
                                    report(multiattach_pool), time.time())
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = fixtures.make_volume(status="retyping", host="node1@b1#b1",
                               previous_status="available",
                               pending_type_id=vtype.id,
                               migration_status="migrating")
    mgr.migrate_volume(fixtures.admin(), vol.id, vtype.id, {"p": 1}, host)
    return vol, vtype


def test_a_moving_volume_is_handed_to_a_pool_of_its_new_type(mgr):
    vol, vtype = _move(mgr, True)
    assert mgr.volume_rpcapi.creates == [
        (vol.id, "node2@file#file", "node1@b1#b1", {"p": 1}, vtype.id)]


@pytest.mark.parametrize("named", ["node2@file#file", "node2@file"])
def test_a_move_to_a_named_pool_goes_there(mgr, named):
    vol, vtype = _move(mgr, True, named)
    assert mgr.volume_rpcapi.creates == [
        (vol.id, "node2@file#file", "node1@b1#b1", {"p": 1}, vtype.id)]


@pytest.mark.parametrize("named", ["node2@file#other", "node3@file#file"])
def test_a_move_to_a_pool_that_cannot_take_it_ends(mgr, named):
    vol, _vtype = _move(mgr, True, named)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert (row.status, row.migration_status) == ("available", "error")
    assert mgr.volume_rpcapi.creates == []


def test_a_retype_is_placed_among_its_new_type_s_zones(mgr):
    """Cinder's retype request spec: the new type's
    ``RESKEY:availability_zones``, not the volume's own zone; an admin's
    migrate (no new type) stays in the volume's zone."""
    for host, zone in (("node2@file", "nova"), ("node3@file", "east")):
        register(host)
        mgr.update_service_capabilities(None, host, dict(
            report(False), availability_zone=zone), time.time())
    vtype = fixtures.make_type(specs={"RESKEY:availability_zones": "east"})
    retyped = fixtures.make_volume(
        status="retyping", host="node1@b1#b1", availability_zone="nova",
        previous_status="available", pending_type_id=vtype.id,
        migration_status="migrating")
    mgr.migrate_volume(fixtures.admin(), retyped.id, vtype.id, {"p": 1})
    migrated = fixtures.make_volume(
        status="maintenance", host="node1@b1#b1", availability_zone="nova",
        vtype=vtype, migration_status="migrating")
    mgr.migrate_volume(fixtures.admin(), migrated.id, vtype.id, {"p": 1})
    assert [(vid, host) for vid, host, *_rest
            in mgr.volume_rpcapi.creates] == [
        (retyped.id, "node3@file#file"), (migrated.id, "node2@file#file")]


def test_a_move_to_a_deleted_type_ends(mgr):
    vol = fixtures.make_volume(status="retyping", host="node1@b1#b1",
                               pending_type_id="gone",
                               migration_status="migrating")
    mgr.migrate_volume(fixtures.admin(), vol.id, "gone", {"p": 1})
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert (row.status, row.migration_status, row.error_reason) == (
        "available", "error", "Its new type was deleted.")


def test_a_move_with_no_pool_to_go_to_ends_where_it_was(mgr):
    vol, _vtype = _move(mgr, False)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert (row.status, row.migration_status, row.volume_type_id,
            row.host) == ("available", "error", vol.volume_type_id,
                          "node1@b1#b1")
    assert "CapabilitiesFilter rejected 1" in row.error_reason
    assert mgr.volume_rpcapi.creates == []


def test_a_create_whose_volume_service_died_is_an_error_and_a_message(mgr):
    vol = fixtures.make_volume(status="creating", host="node1@file#file",
                               provider_location=None)
    # The service went down longer ago than service_down_time.
    with mock.patch.object(scheduler_manager, "up_volume_hosts",
                           return_value=set()), \
            mock.patch.object(scheduler_manager.timestamps, "older_than",
                              return_value=True):
        mgr._fail_orphaned_creates()
        mgr._fail_orphaned_creates()
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error" and "is down" in row.error_reason
    [told] = _messages(vol.id)
    assert (told.event_id, told.project_id) == ("VOLUME_VOLUME_008_002",
                                                "p1")


def test_expired_messages_are_reaped_at_start_and_periodically(mgr):
    messages.record(fixtures.admin(), 1, messages.NO_BACKEND, "v1", "p1")
    messages.record(fixtures.admin(), 3600, messages.NO_BACKEND, "v2", "p1")
    assert (mgr.conf.message_reap_interval, mgr._reap_messages) in \
        mgr.periodic_tasks()
    later = timestamps.utcnow() + datetime.timedelta(seconds=5)
    with mock.patch.object(messages_db, "utcnow", return_value=later):
        mgr.after_start()
    assert [m.resource_uuid for m in messages_db.message_list(
        fixtures.admin())] == ["v2"]


def test_reports_of_services_not_running_do_not_count(mgr):
    mgr.update_service_capabilities(None, "ghost@file", report(True),
                                    time.time())
    vol = creating()
    mgr.create_volume(fixtures.admin(), vol.id)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error"
    assert "No volume backend has reported" in row.error_reason


def test_disabled_service_does_not_count(mgr):
    register("node1@file")
    services_db.service_set_disabled(fixtures.admin(), "node1@file",
                                     "ashlar-volume", True, "x")
    mgr.update_service_capabilities(None, "node1@file", report(True),
                                    time.time())
    vol = creating()
    mgr.create_volume(fixtures.admin(), vol.id)
    assert volumes_db.volume_get(fixtures.admin(), vol.id).status == "error"


def test_up_hosts_cached_but_refreshed_by_a_new_backend(db):
    conf = fixtures.make_conf()
    now = [0.0]
    up = scheduler_manager.UpHosts(conf, ttl=1.0, clock=lambda: now[0],
                                   background=False)
    register("a@file")
    assert up.get() == {"a@file"}
    register("b@file")
    assert up.get() == {"a@file"}          # cached
    up.notice("a@file")
    assert up.get() == {"a@file"}
    up.notice("b@file")                     # b reported: read again
    assert up.get() == {"a@file", "b@file"}
    services_db.service_set_disabled(fixtures.admin(), "a@file",
                                     "ashlar-volume", True, "x")
    now[0] += 1.5                           # ttl passed
    assert up.get() == {"b@file"}


def test_up_hosts_refresh_in_background_after_the_ttl(db):
    conf = fixtures.make_conf()
    now = [0.0]
    up = scheduler_manager.UpHosts(conf, ttl=1.0, clock=lambda: now[0])
    register("a@file")
    assert up.get() == {"a@file"}
    register("b@file")
    now[0] += 1.5
    assert up.get() == {"a@file"}           # answered at once, stale
    harness_wait(lambda: up.get() == {"a@file", "b@file"})


def harness_wait(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_after_start_asks_backends_to_report(mgr):
    mgr.init_host("uuid")
    mgr.after_start()
    assert mgr.volume_rpcapi.publishes == 1


def test_creates_wait_for_first_reports_after_start(mgr):
    register("node1@file")
    mgr.init_host("uuid")
    vol = creating()
    done = threading.Event()

    def create():
        mgr.create_volume(fixtures.admin(), vol.id)
        done.set()
    worker = threading.Thread(target=create)
    worker.start()
    assert not done.wait(0.3)       # held: node1 runs but has not reported
    mgr.update_service_capabilities(None, "node1@file", report(False),
                                    time.time())
    assert done.wait(5)
    worker.join()
    assert mgr.volume_rpcapi.creates == [(vol.id, "node1@file#file")]


def test_wait_for_first_reports_is_bounded(mgr):
    register("silent@file")
    mgr.init_host("uuid")
    mgr._started_at -= mgr.store.freshness - 0.2
    started = time.monotonic()
    mgr._wait_for_first_reports()
    assert time.monotonic() - started < 2
    assert mgr._started_at is None


def test_get_pools_exports_the_charged_view(mgr):
    register("node1@file")
    mgr.update_service_capabilities(None, "node1@file", report(True),
                                    time.time())
    mgr.create_volume(fixtures.admin(), creating().id)
    exported = mgr.get_pools(None)["node1@file"]
    assert exported["capabilities"]["pools"][0]["free_capacity_gb"] == 99
    assert exported["age"] < 5


def _age(volume_id, seconds):
    """Make a volume look created ``seconds`` ago."""
    then = timestamps.utcnow() - datetime.timedelta(seconds=seconds)
    volumes_db.volume_update(fixtures.admin(), volume_id,
                             {"created_at": then})


def test_a_create_whose_cast_was_lost_is_placed_from_the_database(mgr):
    register("node1@file")
    mgr.update_service_capabilities(fixtures.admin(), "node1@file",
                                    report(True), time.time())
    lost, fresh = creating(), creating()
    _age(lost.id, mgr.conf.rpc_call_timeout + 5)
    mgr._place_lost_creates()
    assert mgr.volume_rpcapi.creates == [(lost.id, "node1@file#file")]
    assert volumes_db.volume_get(fixtures.admin(), fresh.id).host is None
    mgr._place_lost_creates()  # placed already: nothing more is cast
    assert len(mgr.volume_rpcapi.creates) == 1


def _placed_after_a_late_report(mgr, delay):
    """A create while node1 has no fresh report, which comes ``delay``
    seconds later: the create is placed on it."""
    volume = creating()
    late = threading.Timer(delay, lambda: mgr.update_service_capabilities(
        fixtures.admin(), "node1@file", report(True), time.time()))
    late.start()
    mgr.create_volume(fixtures.admin(), volume.id)
    late.join()
    assert mgr.volume_rpcapi.creates == [(volume.id, "node1@file#file")]


def test_a_backend_that_has_not_reported_yet_gets_its_window(mgr):
    """A running service without a report (just started) is waited for
    before a create fails for want of a pool, as the API's rule 4 assumes."""
    register("node1@file")
    _placed_after_a_late_report(mgr, 0.3)


def test_a_backend_cut_off_by_the_broker_keeps_the_create_for_the_sweep(mgr):
    """No fresh report (it went stale while the broker restarted); its
    service still heartbeats: after one freshness window the create stays
    ``creating`` (no error, no message) and the sweep places it once the
    report came; after ``service_down_time`` without one, the sweep fails
    it."""
    register("node1@file")
    kept, late = creating(), creating()
    with mock.patch.object(mgr, "_wait_for_reports") as wait:
        mgr.create_volume(fixtures.admin(), kept.id)
        mgr.create_volume(fixtures.admin(), late.id)
    assert wait.call_count == 2 and mgr.volume_rpcapi.creates == []
    for volume in (kept, late):
        row = volumes_db.volume_get(fixtures.admin(), volume.id)
        assert (row.status, row.host) == ("creating", None)
    _age(kept.id, mgr.conf.rpc_call_timeout + 5)
    _age(late.id, mgr.conf.service_down_time + 5)
    _age_scheduler(mgr, mgr.conf.service_down_time + 5)
    mgr._place_lost_creates()
    assert volumes_db.volume_get(fixtures.admin(), late.id).status == "error"
    assert volumes_db.volume_get(fixtures.admin(), kept.id).status == \
        "creating"
    mgr.update_service_capabilities(fixtures.admin(), "node1@file",
                                    report(True), time.time())
    mgr._place_lost_creates()
    assert mgr.volume_rpcapi.creates == [(kept.id, "node1@file#file")]


def _age_scheduler(mgr, seconds):
    """Make the scheduler look as if it has heard reports for ``seconds``."""
    mgr._hearing_since -= datetime.timedelta(seconds=seconds)


def test_the_sweep_waits_out_a_broker_restart_before_failing_a_create(mgr):
    """Reports stopped coming from every backend (the broker restarted):
    the sweep keeps an old create ``creating`` while nothing is heard, and
    for ``service_down_time`` after reports resume, since services
    reconnect one by one; only then does a silent service stop holding
    it."""
    register("node1@file")
    register("node2@file")
    stale = mgr.store.freshness + 1
    for host in ("node1@file", "node2@file"):
        mgr.store.update(host, report(True), time.time() - stale, age=stale)
    volume = creating(fixtures.make_type(specs={"multiattach": "<is> True"}))
    _age(volume.id, mgr.conf.service_down_time + 5)
    _age_scheduler(mgr, mgr.conf.service_down_time + 5)

    def status():
        return volumes_db.volume_get(fixtures.admin(), volume.id).status

    mgr._place_lost_creates()
    assert status() == "creating", "failed while no backend was heard"
    # node2 reconnected first, but cannot take a multiattach volume.
    mgr.update_service_capabilities(fixtures.admin(), "node2@file",
                                    report(False), time.time())
    mgr._place_lost_creates()
    assert status() == "creating", "failed right after reports resumed"
    _age_scheduler(mgr, mgr.conf.service_down_time + 5)
    mgr.update_service_capabilities(fixtures.admin(), "node2@file",
                                    report(False), time.time())
    mgr._place_lost_creates()
    assert status() == "error"
    assert mgr.volume_rpcapi.creates == []
    assert [m.event_id for m in messages_db.message_list(
        fixtures.admin())] == [messages.NO_BACKEND.event_id]


def _heartbeat_stopped(host, seconds):
    """Make ``host``'s service look dead for ``seconds``."""
    @db_engine.writer
    def age(context):
        row = services_db.service_list(context, host)[0]
        context.session.get(models.Service, row.id).heartbeat_at = (
            timestamps.utcnow() - datetime.timedelta(seconds=seconds))
    age(fixtures.admin())


def test_a_dead_services_old_report_is_no_silence_to_wait_out(mgr):
    """node1 died long ago (its last report stays held); node2 runs and
    never reports: the sweep fails the create after ``service_down_time``
    instead of waiting for a broker that is not the cause."""
    register("node1@file")
    register("node2@file")
    stale = mgr.store.freshness + 1
    mgr.store.update("node1@file", report(True), time.time() - stale,
                     age=stale)
    _heartbeat_stopped("node1@file", mgr.conf.service_down_time + 5)
    volume = creating()
    _age(volume.id, mgr.conf.service_down_time + 5)
    _age_scheduler(mgr, mgr.conf.service_down_time + 5)
    mgr._place_lost_creates()
    assert volumes_db.volume_get(fixtures.admin(), volume.id).status == \
        "error"
    assert mgr.volume_rpcapi.creates == []


def test_without_unheard_backends_no_valid_backend_is_at_once(mgr):
    volume = creating()
    with mock.patch.object(mgr, "_wait_for_reports") as wait:
        mgr.create_volume(fixtures.admin(), volume.id)
    wait.assert_not_called()
    row = volumes_db.volume_get(fixtures.admin(), volume.id)
    assert row.status == "error" and row.error_reason


def test_creates_racing_right_after_start_are_all_placed(mgr):
    """Several creates at once just after start: the first to finish its
    wait clears the start mark; the others must not trip over it."""
    register("node1@file")
    mgr.init_host("svc")
    mgr.update_service_capabilities(fixtures.admin(), "node1@file",
                                    report(True), time.time())
    volumes = [creating() for _ in range(8)]
    threads = [threading.Thread(target=mgr.create_volume,
                                args=(fixtures.admin(), v.id))
               for v in volumes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(v for v, _host in mgr.volume_rpcapi.creates) == sorted(
        v.id for v in volumes)


def test_a_create_is_placed_after_the_database_comes_back(mgr, monkeypatch):
    """The database cannot be reached for a moment (a Galera writer's
    failover): the create is placed then, not left to the lost-create
    sweep."""
    from oslo_db import exception as db_exc
    monkeypatch.setattr(db_engine._RETRY_DISCONNECT, "retry_interval", 0)
    register("node1@file")
    mgr.update_service_capabilities(fixtures.admin(), "node1@file",
                                    report(True), time.time())
    volume = creating()
    real = volumes_db.volume_get
    failures = iter([db_exc.DBConnectionError("2013"),
                     db_exc.DBConnectionError("2013")])

    def flaky(*args, **kwargs):
        for failure in failures:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(volumes_db, "volume_get", flaky)
    mgr.create_volume(fixtures.admin(), volume.id)
    assert mgr.volume_rpcapi.creates == [(volume.id, "node1@file#file")]


def test_a_fresh_report_of_a_service_not_running_ends_no_silence(mgr):
    """The newest report is checked in constant time only when its
    service runs; one that does not (no row) leaves the full check."""
    register("node1@file")
    stale = mgr.store.freshness + 1
    mgr.store.update("node1@file", report(True), time.time() - stale,
                     age=stale)
    mgr.store.update("ghost@file", report(True), time.time())
    assert mgr.store.newest_report()[0] == "ghost@file"
    assert mgr._silent()
    mgr.update_service_capabilities(fixtures.admin(), "node1@file",
                                    report(True), time.time())
    assert not mgr._silent()


def test_reports_are_relayed_and_served_as_sent(mgr):
    """A report heard goes to the api workers at once; ``get_reports``
    answers it as the backend sent it, charges left out, with the
    fingerprint the relay named."""
    ctxt = fixtures.admin()
    mgr.update_service_capabilities(ctxt, "a@file", report(True), 5.0)
    assert mgr.relay.view.sent == [("update", "a@file", 5.0,
                                    capabilities.fingerprint(report(True)))]
    pool = mgr.store.counting()[0]
    mgr.store.consume(pool, 40)
    answer = mgr.get_reports(ctxt)
    assert answer["a@file"]["capabilities"] == report(True)
    assert answer["a@file"]["fingerprint"] == mgr.relay.view.sent[0][3]
    assert mgr.get_reports(ctxt, ["b@file"]) == {}
    mgr.withdraw_service_capabilities(ctxt, "a@file", 6.0)
    assert mgr.relay.view.sent[-1] == ("withdraw", "a@file", 6.0)
    assert mgr.get_reports(ctxt) == {}
