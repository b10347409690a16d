"""Tests for the API worker's capability cache: when it may say "no"."""

import datetime
import threading
import types

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from common import capabilities
from common import conf as ashlar_conf
from common import constants
from common import exception
from services.api import capability_cache
from tests.unit.db import fixtures as db_fixtures

MA = {"multiattach": "<is> True"}
VTYPE = types.SimpleNamespace(name="ma")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Scheduler:
    """Answers get_reports from another store, or fails like a dead one."""

    def __init__(self, source=None, error=None):
        self.source = source
        self.error = error
        self.calls = 0
        self.asked = []

    def get_reports(self, ctxt, hosts=None):
        self.calls += 1
        self.asked.append(hosts)
        if self.error:
            raise self.error
        if self.source is None:
            return {}
        reports = self.source.reports(hosts)
        for held in reports.values():
            held["fingerprint"] = capabilities.fingerprint(
                held["capabilities"])
        return reports


def report(multiattach, name="b", state="up", zone="nova", free=10):
    return {"volume_backend_name": name, "storage_protocol": "local",
            "availability_zone": zone,
            "pools": [{"pool_name": name, "multiattach": multiattach,
                       "free_capacity_gb": free, "total_capacity_gb": 10,
                       "backend_state": state}]}


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("backend_stats_polling_interval", 5)   # window 10 s
    return conf


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def running():
    return {"plain@b"}


def make_cache(conf, clock, running, scheduler=None, warm=True):
    """A cache on a fresh store; ``running`` is the set of running backends
    or a function that returns it (called when the check reads them)."""
    store = capabilities.CapabilityStore(
        capabilities.freshness_window(conf), clock=clock)
    cache = capability_cache.CapabilityCache(
        conf, scheduler or Scheduler(), store=store,
        running_backends=running if callable(running)
        else lambda: set(running))
    if warm:
        assert cache.warm()
    return cache


def hear(cache, host, multiattach, timestamp=1.0, **kw):
    cache.update_service_capabilities(None, host, report(multiattach, **kw),
                                      timestamp)


@pytest.fixture
def cache(conf, clock, running):
    cache = make_cache(conf, clock, running)
    hear(cache, "plain@b", False)
    return cache


def test_rejects_when_trusted_and_nothing_fits(cache):
    with pytest.raises(exception.UnsatisfiableVolumeType) as err:
        cache.check_type(None, VTYPE, MA)
    assert err.value.code == 400
    assert "multiattach=<is> True" in err.value.msg
    assert "ma" in err.value.msg


def test_accepts_when_a_fresh_pool_fits(cache, running):
    running.add("ma@b")
    hear(cache, "ma@b", True)
    cache.check_type(None, VTYPE, MA)


def test_types_without_capability_specs_are_not_checked(cache, running):
    running.add("unheard@b")
    cache.check_type(None, VTYPE, {})
    cache.check_type(None, VTYPE, {"qos:iops": "100", "RESKEY:x": "y"})


def test_cold_cache_never_rejects(conf, clock, running):
    cache = make_cache(conf, clock, running, warm=False)
    hear(cache, "plain@b", False)
    assert not cache.trusted()
    cache.check_type(None, VTYPE, MA)


def test_unreachable_scheduler_leaves_it_cold(conf, clock, running):
    scheduler = Scheduler(error=exception.AshlarException("timeout"))
    cache = make_cache(conf, clock, running, scheduler=scheduler, warm=False)
    assert cache.warm() is False
    hear(cache, "plain@b", False)
    cache.check_type(None, VTYPE, MA)
    scheduler.error = None
    assert cache.warm() is True
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)


def test_warm_up_retries_until_a_scheduler_answers(conf, clock, running,
                                                   monkeypatch):
    scheduler = Scheduler(error=exception.AshlarException("timeout"))
    cache = make_cache(conf, clock, running, scheduler=scheduler, warm=False)
    waits = []

    def wait(delay):
        waits.append(delay)
        if len(waits) == 3:
            scheduler.error = None
        return False
    monkeypatch.setattr(cache._stopped, "wait", wait)
    cache._warm_until_done()
    assert cache.warmed.is_set()
    assert waits == [1.0, 2.0, 4.0]
    assert scheduler.calls == 4


def test_a_starting_worker_waits_for_its_warm_up_within_a_bound(
        conf, clock, running):
    """build_operations waits so that a worker's first request is judged
    warm; without a scheduler it serves cold after the bound."""
    cache = make_cache(conf, clock, running, warm=False)
    threading.Timer(0.05, cache.warm).start()
    assert cache.wait_warm(timeout=10) is True
    cold = make_cache(conf, clock, running, scheduler=Scheduler(
        error=exception.AshlarException("timeout")), warm=False)
    assert cold.wait_warm(timeout=0.01) is False


class VolumeServices:
    """Stands for VolumeAPI's fanout: each ask makes every backend report
    into the cache at once (or the cast fails)."""

    def __init__(self, error=None):
        self.error = error
        self.cache = None

    def publish_service_capabilities(self, ctxt):
        if self.error:
            raise self.error
        hear(self.cache, "plain@b", False)


@pytest.mark.parametrize("error", [None, exception.AshlarException("down")])
def test_start_asks_the_volume_services_to_report(conf, clock, running,
                                                  error):
    """A scheduler that had not heard a backend's start report yet gives an
    empty view; the cache asks the backends itself rather than wait an
    interval (and warms all the same if the ask fails)."""
    volume = VolumeServices(error)
    cache = capability_cache.CapabilityCache(
        conf, Scheduler(), volume=volume, running_backends=lambda: running,
        store=capabilities.CapabilityStore(
            capabilities.freshness_window(conf), clock=clock))
    volume.cache = cache
    cache._warm_until_done()
    assert cache.warmed.is_set()
    if error is None:
        with pytest.raises(exception.UnsatisfiableVolumeType):
            cache.check_type(None, VTYPE, MA)
    else:
        cache.check_type(None, VTYPE, MA)    # nothing heard: not trusted


def test_warm_takes_the_scheduler_view_with_its_ages(conf, clock, running):
    source = capabilities.CapabilityStore(10, clock=clock)
    source.update("plain@b", report(False), 1.0)
    clock.now += 4
    cache = make_cache(conf, clock, running, Scheduler(source))
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    clock.now += 7          # 11 s after the scheduler received it
    assert not cache.trusted()
    cache.check_type(None, VTYPE, MA)


def test_view_that_stopped_hearing_the_bus_is_not_trusted(cache, clock):
    clock.now += 10.5
    assert not cache.trusted()
    cache.check_type(None, VTYPE, MA)


def test_trust_outlives_the_withdrawal_of_the_newest_report(cache, clock):
    """The report received last is known in constant time until its
    backend withdraws; then every backend's receipt is read again."""
    clock.now += 6
    hear(cache, "other@b", False, timestamp=2.0)
    cache.store.forget("other@b", 3.0)
    assert cache.store.newest_report() is None
    assert cache.trusted()
    clock.now += 4.5        # 10.5 s after the fixture's report
    assert not cache.trusted()


def test_trusted_pools_are_the_fresh_ones_while_the_view_is_trusted(
        conf, clock, running):
    cold = make_cache(conf, clock, running, warm=False)
    hear(cold, "plain@b", False)
    assert cold.trusted_pools() is None
    cache = make_cache(conf, clock, running)
    hear(cache, "plain@b", False)
    assert list(cache.trusted_pools()) == ["plain@b#b"]
    clock.now += 10.5
    assert cache.trusted_pools() is None


def test_running_service_not_heard_means_accept(cache, running):
    running.add("new@b")
    cache.check_type(None, VTYPE, MA)
    hear(cache, "new@b", False)
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)


def test_unreadable_services_table_means_accept(conf, clock):
    def broken():
        raise RuntimeError("database down")
    store = capabilities.CapabilityStore(10, clock=clock)
    cache = capability_cache.CapabilityCache(conf, Scheduler(), store=store,
                                             running_backends=broken)
    cache.warm()
    hear(cache, "plain@b", False)
    cache.check_type(None, VTYPE, MA)


def test_multiattach_pool_counts_until_its_report_expires(cache, clock,
                                                          running):
    hear(cache, "ma@b", True, timestamp=1.0)
    running.add("ma@b")
    clock.now += 6
    hear(cache, "plain@b", False, timestamp=2.0)
    cache.check_type(None, VTYPE, MA)        # ma's report is 6 s old
    running.discard("ma@b")                  # its heartbeat stopped too
    clock.now += 4.5
    hear(cache, "plain@b", False, timestamp=3.0)
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)


def test_expired_report_of_a_running_service_means_accept(cache, clock,
                                                          running):
    """A service heartbeating without reporting: we cannot know; accept."""
    hear(cache, "ma@b", True, timestamp=1.0)
    running.add("ma@b")
    clock.now += 10.5
    hear(cache, "plain@b", False, timestamp=2.0)
    cache.check_type(None, VTYPE, MA)


def test_down_backend_does_not_fit(cache, running):
    running.add("ma@b")
    hear(cache, "ma@b", True, state="down")
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)


def test_capacity_is_left_to_the_scheduler(cache, running):
    running.add("ma@b")
    cache.update_service_capabilities(None, "ma@b", {
        "pools": [{"pool_name": "p", "multiattach": True,
                   "free_capacity_gb": 0, "total_capacity_gb": 0}]}, 1.0)
    cache.check_type(None, VTYPE, dict(MA, **{"provisioning:type": "thick"}))


def test_size_no_pool_could_ever_hold_is_rejected(cache):
    cache.check_type(None, VTYPE, {}, size=10)
    with pytest.raises(exception.UnsatisfiableVolumeSize) as err:
        cache.check_type(None, VTYPE, {}, size=11)
    assert err.value.code == 400
    assert "11 GiB" in err.value.msg


def test_size_judges_pools_empty_not_their_free_space(cache, running):
    running.add("full@b")
    cache.update_service_capabilities(None, "full@b", {
        "pools": [{"pool_name": "p", "free_capacity_gb": 0,
                   "total_capacity_gb": 500,
                   "provisioning:type": "thick"}]}, 1.0)
    cache.check_type(None, VTYPE, {}, size=500)


def test_size_with_an_unheard_running_backend_is_left_to_the_scheduler(
        cache, running):
    running.add("unheard@b")
    cache.check_type(None, VTYPE, {}, size=10 ** 6)


def test_size_is_not_judged_by_a_cold_cache(conf, clock, running):
    cache = make_cache(conf, clock, running, warm=False)
    cache.check_type(None, VTYPE, {}, size=10 ** 6)


def test_message_names_only_the_specs_no_pool_offers(cache, running):
    running.add("ma@b")
    hear(cache, "ma@b", True, name="ma")
    specs = {"multiattach": "<is> True", "volume_backend_name": "b",
             "capabilities:storage_protocol": "local", "vendor:x": "y"}
    with pytest.raises(exception.UnsatisfiableVolumeType) as err:
        cache.check_type(None, VTYPE, specs)
    assert "no single fresh pool offers all of multiattach=<is> True, " \
           "volume_backend_name=b" in err.value.msg
    assert "storage_protocol" not in err.value.msg
    specs["volume_backend_name"] = "nope"
    with pytest.raises(exception.UnsatisfiableVolumeType) as err:
        cache.check_type(None, VTYPE, specs)
    assert "no fresh pool offers volume_backend_name=nope" in err.value.msg


def test_only_the_pools_of_the_zone_asked_for_are_judged(cache, running):
    """A pool that fits in another zone does not save a create: the
    scheduler's zone filter would refuse it there."""
    running.add("ma@b")
    hear(cache, "ma@b", True, zone="east")
    cache.check_type(None, VTYPE, MA, zones=("east",))
    cache.check_type(None, VTYPE, MA)
    with pytest.raises(exception.UnsatisfiableVolumeType) as err:
        cache.check_type(None, VTYPE, MA, zones=("nova",))
    assert ("no fresh pool in availability zone nova offers "
            "multiattach=<is> True") in err.value.msg


def test_a_zone_without_a_pool_that_counts_is_named(cache, running):
    running.add("ma@b")
    hear(cache, "ma@b", True, zone="east", state="down")
    with pytest.raises(exception.UnsatisfiableVolumeType) as err:
        cache.check_type(None, VTYPE, MA, zones=("east",))
    assert ("no backend that is up in availability zone east has reported "
            "fresh pools") in err.value.msg


def test_size_is_judged_on_the_pools_of_the_zone(cache, running):
    """A size only another zone's pool could hold is refused; a zone with
    no pool that counts is left to the scheduler."""
    running.add("big@b")
    cache.update_service_capabilities(None, "big@b", dict(
        report(False, zone="east"), pools=[{
            "pool_name": "big", "free_capacity_gb": 1000,
            "total_capacity_gb": 1000}]), 1.0)
    cache.check_type(None, VTYPE, {}, size=500, zones=("east",))
    with pytest.raises(exception.UnsatisfiableVolumeSize):
        cache.check_type(None, VTYPE, {}, size=500, zones=("nova",))
    cache.check_type(None, VTYPE, {}, size=500, zones=("west",))


def test_describe_without_pools():
    assert "no backend that is up has reported fresh pools (multiattach=" \
        "<is> True)" == capability_cache.describe(MA, [])


def test_services_table_is_the_default_source(conf, clock):
    """Rule 4 against real rows: disabled and silent services are not
    waited for."""
    db_fixtures.setup()
    db_fixtures.clean()
    from common.db.api import services as services_db
    ctxt = db_fixtures.admin()
    for host in ("plain@b", "silent@b", "disabled@b"):
        services_db.service_register(ctxt, host, "ashlar-volume",
                                     "ashlar-volume", "nova")
    services_db.service_set_disabled(ctxt, "disabled@b", "ashlar-volume",
                                     True, "maintenance")
    row = [r for r in services_db.service_list(ctxt, "silent@b")][0]
    from common.db import models
    from common.db.api.engine import writer

    @writer
    def age(context):
        context.session.get(models.Service, row.id).heartbeat_at = (
            datetime.datetime.utcnow() - datetime.timedelta(hours=1))
    age(ctxt)
    store = capabilities.CapabilityStore(10, clock=clock)
    cache = capability_cache.CapabilityCache(conf, Scheduler(), store=store)
    cache.warm()
    hear(cache, "plain@b", False)
    assert cache.running_backends() == {"plain@b"}
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    services_db.service_register(ctxt, "silent@b", "ashlar-volume",
                                 "ashlar-volume", "nova")
    assert cache.running_backends() == {"plain@b", "silent@b"}
    cache.check_type(None, VTYPE, MA)
    db_fixtures.clean()


def test_services_read_joins_the_callers_reader_transaction(conf, clock):
    """Rule 4 read with the request's context inside an open reader
    transaction uses that transaction (one connection per early 400), and
    still sees only enabled, heartbeating services."""
    db_fixtures.setup()
    db_fixtures.clean()
    from common.db.api.engine import reader
    from common.db.api import services as services_db
    ctxt = db_fixtures.admin()
    for host in ("plain@b", "other@b"):
        services_db.service_register(ctxt, host, "ashlar-volume",
                                     "ashlar-volume", "nova")
    services_db.service_set_disabled(ctxt, "other@b", "ashlar-volume",
                                     True, "maintenance")
    store = capabilities.CapabilityStore(10, clock=clock)
    cache = capability_cache.CapabilityCache(conf, Scheduler(), store=store)
    cache.warm()
    hear(cache, "plain@b", False)
    request = db_fixtures.admin()
    with reader.using(request):
        outer = request.session
        seen = []
        real = (services_db._running_rows, services_db._unchanged)

        def spy(read):
            def spied(context, *args):
                seen.append(context.session)
                return read(context, *args)
            return spied
        services_db._running_rows, services_db._unchanged = map(spy, real)
        try:
            assert cache.running_backends(request) == {"plain@b"}
            with pytest.raises(exception.UnsatisfiableVolumeType):
                cache.check_type(request, VTYPE, MA)
        finally:
            services_db._running_rows, services_db._unchanged = real
    assert seen == [outer, outer]
    db_fixtures.clean()


def test_report_arriving_during_the_services_read_is_not_rejected(conf,
                                                                  clock):
    """A backend whose first report lands while the services table is read
    was not judged: no 400 (it would have been a false rejection)."""

    def running_and_a_report_arrives():
        hear(cache, "ma@b", True, name="ma")
        return {"plain@b", "ma@b"}
    cache = make_cache(conf, clock, running_and_a_report_arrives)
    hear(cache, "plain@b", False)
    cache.check_type(None, VTYPE, MA)        # accepted, not rejected
    # Judged again with the report held, the type fits.
    cache.check_type(None, VTYPE, MA)


def test_pools_changing_during_the_services_read_void_the_verdict(conf,
                                                                   clock):
    """A report that changes a heard backend while the table is read (here
    to multiattach) means the judged pools are outdated: no 400."""
    changes = []

    def running_and_plain_changes():
        if not changes:
            changes.append(1)
            hear(cache, "plain@b", True, timestamp=2.0)
        return {"plain@b"}
    cache = make_cache(conf, clock, running_and_plain_changes)
    hear(cache, "plain@b", False)
    cache.check_type(None, VTYPE, MA)        # accepted, not rejected
    hear(cache, "plain@b", False, timestamp=3.0)
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)    # a steady view still rejects


def test_periodic_report_during_the_services_read_keeps_the_400(conf,
                                                                 clock):
    """A heard backend reporting changed pools while the table is read
    moves the store's generation; judged again, nothing fits: 400."""
    reports = []

    def running_and_plain_reports_again():
        reports.append(len(reports) + 2.0)
        hear(cache, "plain@b", False, timestamp=reports[-1], free=5)
        return {"plain@b"}
    cache = make_cache(conf, clock, running_and_plain_reports_again)
    hear(cache, "plain@b", False)
    generation = cache.store.generation
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    assert cache.store.generation > generation and reports == [2.0]


def test_same_report_during_the_services_read_keeps_the_400(conf, clock):
    """The same pools reported again while the table is read leave the
    generation where it was: the verdict stands at once, 400."""
    reports = []

    def running_and_plain_reports_again():
        reports.append(len(reports) + 2.0)
        hear(cache, "plain@b", False, timestamp=reports[-1])
        return {"plain@b"}
    cache = make_cache(conf, clock, running_and_plain_reports_again)
    hear(cache, "plain@b", False)
    generation = cache.store.generation
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    assert cache.store.generation == generation and reports == [2.0]


def _reports_while_judging(cache, monkeypatch, multiattach):
    """Every judgement of the store hears plain@b report again first."""
    store = cache.store
    real = store.find_satisfying
    stamps = iter(range(2, 100))

    def find_while_reports_arrive(wanted, zones=None):
        hear(cache, "plain@b", multiattach, timestamp=float(next(stamps)))
        return real(wanted, zones=zones)
    monkeypatch.setattr(store, "find_satisfying", find_while_reports_arrive)


def test_reports_that_keep_arriving_but_fit_nothing_keep_the_400(
        conf, clock, monkeypatch):
    """A thousand backends reporting move the generation all the time: a
    verdict stands when none of the pools they changed fits."""
    cache = make_cache(conf, clock, {"plain@b"})
    hear(cache, "plain@b", False)
    _reports_while_judging(cache, monkeypatch, multiattach=False)
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)


def test_reports_that_keep_arriving_keep_a_size_refused(
        conf, clock, monkeypatch):
    cache = make_cache(conf, clock, {"plain@b"})
    hear(cache, "plain@b", False)
    real = cache.store.counting
    stamps = iter(range(2, 100))

    def counting_while_reports_arrive(*args, **kwargs):
        hear(cache, "plain@b", False, timestamp=float(next(stamps)))
        return real(*args, **kwargs)
    monkeypatch.setattr(cache.store, "counting",
                        counting_while_reports_arrive)
    with pytest.raises(exception.UnsatisfiableVolumeSize):
        cache.check_type(None, VTYPE, {}, size=11)


def test_a_report_that_makes_a_pool_fit_while_judging_means_accept(
        conf, clock, monkeypatch):
    cache = make_cache(conf, clock, {"plain@b"})
    hear(cache, "plain@b", False)
    real = cache.store.find_satisfying
    calls = []

    def judged_then_changed(wanted, zones=None):
        found = real(wanted, zones=zones)
        calls.append(found)
        if len(calls) == 1:     # a report lands right after the verdict
            hear(cache, "plain@b", True, timestamp=2.0)
        return found
    monkeypatch.setattr(cache.store, "find_satisfying", judged_then_changed)
    cache.check_type(None, VTYPE, MA)        # accepted, not rejected
    assert calls[0][0] is None              # the first verdict was "no"


def test_a_source_pool_that_cannot_take_the_type_is_rejected(cache):
    """A clone is made where its source is: that pool's fresh report
    decides, whatever other pools offer."""
    with pytest.raises(exception.UnsatisfiableSource) as err:
        cache.check_pool("plain@b#b", "snapshot s1", VTYPE, MA, 1)
    assert err.value.code == 400
    assert "snapshot s1" in err.value.msg and "multiattach" in err.value.msg
    cache.check_pool("plain@b#b", "snapshot s1", VTYPE, {}, 10)
    with pytest.raises(exception.UnsatisfiableSource, match="11 GiB"):
        cache.check_pool("plain@b#b", "volume v1", VTYPE, {}, 11)


def test_a_source_pool_without_a_fresh_report_is_left_to_its_node(
        cache, clock):
    cache.check_pool("gone@b#b", "volume v1", VTYPE, MA, 1)
    clock.now += 60
    cache.check_pool("plain@b#b", "volume v1", VTYPE, MA, 1)


def resyncs_done():
    """Wait for the background fetches of reports the cache started."""
    for thread in threading.enumerate():
        if thread.name == "capability-resync":
            thread.join(timeout=10)


def test_a_renewal_of_the_content_held_keeps_it_fresh(cache, clock):
    digest = capabilities.fingerprint(report(False))
    clock.now += 8
    cache.renew_service_capabilities(None, {"plain@b": [digest, 9.0, 0.5]})
    clock.now += 7                          # 15 s after the report held
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    clock.now += 3                          # 10.5 s after the renewal
    assert not cache.trusted()


def test_a_renewal_of_content_not_held_renews_nothing_and_fetches_it(
        conf, clock, running):
    """A change the worker missed: the renewal names other content, so
    the old content does not count on; the reports are fetched."""
    source = capabilities.CapabilityStore(10, clock=clock)
    scheduler = Scheduler(source)
    cache = make_cache(conf, clock, running, scheduler)
    hear(cache, "plain@b", False, timestamp=1.0)
    source.update("plain@b", report(True), 2.0)   # missed by the worker
    clock.now += 8
    cache.renew_service_capabilities(None, {"plain@b": [
        capabilities.fingerprint(report(True)), 3.0, 0.0]})
    resyncs_done()
    assert scheduler.asked[-1] == ["plain@b"]
    cache.check_type(None, VTYPE, MA)       # the fetched report fits


def test_a_failed_fetch_leaves_the_report_to_expire(conf, clock, running):
    scheduler = Scheduler()
    cache = make_cache(conf, clock, running, scheduler)
    hear(cache, "plain@b", False, timestamp=1.0)
    scheduler.error = exception.AshlarException("timeout")
    clock.now += 8
    cache.renew_service_capabilities(None, {"plain@b": ["other", 3.0, 0.0]})
    resyncs_done()
    assert scheduler.asked[-1] == ["plain@b"]
    clock.now += 3
    assert not cache.trusted()
    cache.check_type(None, VTYPE, MA)


def test_a_withdrawal_forgets_the_content_renewals_name(cache, clock):
    digest = capabilities.fingerprint(report(False))
    cache.withdraw_service_capabilities(None, "plain@b", 2.0)
    cache.renew_service_capabilities(None, {"plain@b": [digest, 3.0, 0.0]})
    resyncs_done()
    assert cache.store.backend("plain@b") is None
    assert cache.scheduler.asked[-1] == ["plain@b"]


def test_warm_holds_the_fingerprints_renewals_name(conf, clock, running):
    source = capabilities.CapabilityStore(10, clock=clock)
    source.update("plain@b", report(False), 1.0)
    cache = make_cache(conf, clock, running, Scheduler(source))
    clock.now += 9
    cache.renew_service_capabilities(None, {"plain@b": [
        capabilities.fingerprint(report(False)), 10.0, 0.0]})
    clock.now += 5
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    assert cache.scheduler.asked == [None]


class Server:
    """Stands for an RPC server the cache starts (``_listen``)."""

    def __init__(self, topic, endpoint):
        self.topic = topic
        self.stopped = threading.Event()

    def stop(self):
        self.stopped.set()

    def wait(self):
        pass


class OldScheduler(Scheduler):
    """A scheduler of an earlier release: no ``get_reports``."""

    def get_reports(self, ctxt, hosts=None):
        raise messaging.RemoteError(
            "UnsupportedVersion", "Endpoint does not support RPC version "
            "1.3", "Traceback (most recent call last): ...")

    def get_pools(self, ctxt):
        return self.source.export()


def test_an_older_scheduler_is_warmed_from_and_reports_heard_directly(
        conf, clock, running, caplog):
    """An api upgraded before the schedulers: it warms from the old
    ``get_pools`` and hears the reports' fanout itself until a scheduler
    relays; nothing it logs carries the remote traceback."""
    source = capabilities.CapabilityStore(10, clock=clock)
    source.update("plain@b", report(False), 1.0)
    cache = make_cache(conf, clock, running, OldScheduler(source),
                       warm=False)
    cache._listen = Server
    assert cache.warm()
    assert cache._direct.topic == constants.CAPABILITIES_TOPIC
    with pytest.raises(exception.UnsatisfiableVolumeType):
        cache.check_type(None, VTYPE, MA)
    assert "Traceback" not in caplog.text
    direct = cache._direct
    cache.relayed()
    for thread in threading.enumerate():
        if thread.name == "capability-direct":
            thread.join(timeout=10)
    assert direct.stopped.is_set() and cache._direct is None


def test_a_failing_warm_logs_the_remote_error_in_one_line(conf, clock,
                                                           running, caplog):
    cache = make_cache(conf, clock, running, Scheduler(
        error=messaging.RemoteError("DBError", "gone", "Traceback ...")),
        warm=False)
    assert not cache.warm()
    assert "DBError: gone" in caplog.text
    assert "Traceback" not in caplog.text


def test_a_renewal_older_than_the_report_held_fetches_nothing(cache):
    """A scheduler that had not heard the newest report yet renews the
    content before it: nothing to fetch, the newer report stands."""
    cache.update_service_capabilities(None, "plain@b", report(False), 5.0)
    cache.renew_service_capabilities(None, {"plain@b": ["older", 4.0, 0.0]})
    resyncs_done()
    assert cache.scheduler.asked == [None]
    assert cache.store.timestamp("plain@b") == 5.0
