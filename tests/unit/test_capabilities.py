"""Tests for common.capabilities: flattening, expiry, charges, matching."""

import pytest

from common import capabilities
from common.capabilities import CapabilityStore


class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def report(multiattach=False, free=100, state="up", pools=None, **backend):
    body = {"volume_backend_name": "b", "vendor_name": "Ashlar",
            "driver_version": "1.0", "storage_protocol": "local",
            "availability_zone": "nova"}
    body.update(backend)
    body["pools"] = pools if pools is not None else [{
        "pool_name": "p", "total_capacity_gb": 1000,
        "free_capacity_gb": free, "allocated_capacity_gb": 0,
        "provisioned_capacity_gb": 0, "thin_provisioning_support": True,
        "multiattach": multiattach, "backend_state": state}]
    return body


def charge(caps, size):
    caps["free_capacity_gb"] -= size


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(clock):
    return CapabilityStore(10, clock=clock, wall_clock=clock, charge=charge)


def test_flatten_backend_keys_apply_unless_overridden():
    flat = capabilities.flatten("h@b", report(pools=[
        {"pool_name": "p1"},
        {"pool_name": "p2", "storage_protocol": "iSCSI"}]), 5.0)
    assert set(flat) == {"h@b#p1", "h@b#p2"}
    assert flat["h@b#p1"]["storage_protocol"] == "local"
    assert flat["h@b#p2"]["storage_protocol"] == "iSCSI"
    assert flat["h@b#p1"]["vendor_name"] == "Ashlar"
    assert flat["h@b#p1"]["timestamp"] == 5.0
    assert "pools" not in flat["h@b#p1"]


def test_flatten_without_pools_makes_one_named_after_the_backend():
    flat = capabilities.flatten("h@b1", {"volume_backend_name": "x"}, 1.0)
    assert list(flat) == ["h@b1#b1"]


def test_report_fresh_until_window_then_expires(store, clock):
    store.update("h@b", report(), timestamp=1.0)
    assert list(store.fresh_pools()) == ["h@b#p"]
    clock.now += 10
    assert list(store.fresh_pools()) == ["h@b#p"]
    clock.now += 0.01
    assert store.fresh_pools() == {}
    assert list(store.all_pools()) == ["h@b#p"]
    assert store.fresh_backends() == set()


def test_new_report_renews_freshness(store, clock):
    store.update("h@b", report(), timestamp=1.0)
    clock.now += 9
    store.update("h@b", report(), timestamp=2.0)
    clock.now += 9
    assert list(store.fresh_pools()) == ["h@b#p"]


def test_older_report_is_ignored(store):
    assert store.update("h@b", report(free=50), timestamp=2.0)
    assert not store.update("h@b", report(free=99), timestamp=1.0)
    assert store.fresh_pools()["h@b#p"]["free_capacity_gb"] == 50


def test_same_report_again_keeps_latest_receipt(store, clock):
    store.update("h@b", report(), timestamp=2.0)
    clock.now += 8
    assert store.update("h@b", report(), timestamp=2.0, age=5.0)
    clock.now += 5
    # the warm copy was received 3 s after the direct one: still fresh
    assert store.fresh_backends() == {"h@b"}


def test_down_backend_state_does_not_count(store):
    store.update("h@b", report(state="down"), timestamp=1.0)
    assert store.fresh_pools() == {}
    assert store.fresh_backends() == {"h@b"}
    assert not store.counting()


def test_counting_fit_answers_at_the_first_counting_pool_that_fits(
        store, clock):
    """True at a counting pool that fits; False when pools count but none
    fits; None when none counts (expired, down or in another zone)."""
    asked = []

    def fits(caps):
        asked.append(caps["free_capacity_gb"])
        return caps["free_capacity_gb"] >= 50
    assert store.counting_fit(fits) is None
    store.update("down@b", report(free=90, state="down"), timestamp=1.0)
    store.update("small@b", report(free=10), timestamp=1.0)
    store.update("east@b", report(free=80, availability_zone="east"),
                 timestamp=1.0)
    assert store.counting_fit(fits, zones=("nova",)) is False
    assert asked == [10]
    assert store.counting_fit(fits) is True
    clock.now += 11
    store.update("big@b", report(free=60), timestamp=2.0)
    asked.clear()
    assert store.counting_fit(fits, zones=("nova",)) is True
    assert asked == [60]
    clock.now += 11
    assert store.counting_fit(fits) is None


def test_up_hosts_restrict_counting(store):
    store.update("h1@b", report(), timestamp=1.0)
    store.update("h2@b", report(), timestamp=1.0)
    assert set(store.fresh_pools(up_hosts={"h2@b"})) == {"h2@b#p"}
    assert set(store.fresh_pools(up_hosts=[])) == set()
    assert set(store.fresh_pools()) == {"h1@b#p", "h2@b#p"}


def test_warm_keeps_ages(clock):
    source = CapabilityStore(10, clock=clock)
    source.update("old@b", report(), timestamp=1.0)
    clock.now += 8
    source.update("new@b", report(), timestamp=2.0)
    target = CapabilityStore(10, clock=clock)
    assert target.warm(source.export()) == 2
    clock.now += 3
    assert target.fresh_backends() == {"new@b"}
    assert target.newest_report_age() == pytest.approx(3)


def test_export_round_trip_keeps_pools_and_backend_keys(store):
    store.update("h@b", report(multiattach=True), timestamp=3.0)
    other = CapabilityStore(10)
    other.warm(store.export())
    caps = other.fresh_pools()["h@b#p"]
    assert caps["multiattach"] is True
    assert caps["vendor_name"] == "Ashlar"
    assert caps["timestamp"] == 3.0


def test_newest_report_age(store, clock):
    assert store.newest_report_age() is None
    store.update("h@b", report(), timestamp=1.0)
    clock.now += 4
    assert store.newest_report_age() == pytest.approx(4)
    store.update("h@c", report(), timestamp=2.0)
    clock.now += 1
    assert store.newest_report_age() == pytest.approx(1)
    assert store.newest_report_age(among={"h@b"}) == pytest.approx(5)
    assert store.newest_report_age(among={"x@y"}) is None


def test_pool_gone_from_report_is_dropped(store):
    store.update("h@b", report(pools=[{"pool_name": "a"},
                                      {"pool_name": "b"}]), timestamp=1.0)
    states = {p.name: p for p in store.pool_states()}
    membership = store.membership
    store.update("h@b", report(pools=[{"pool_name": "a"}]), timestamp=2.0)
    assert set(store.all_pools()) == {"h@b#a"}
    assert states["h@b#b"].present is False
    assert states["h@b#a"].present is True
    assert store.membership > membership


def test_pool_state_is_stable_across_reports(store):
    store.update("h@b", report(free=10), timestamp=1.0)
    [first] = store.pool_states()
    store.update("h@b", report(free=20), timestamp=2.0)
    [second] = store.pool_states()
    assert first is second and second.caps["free_capacity_gb"] == 20


def test_forget(store):
    store.update("h@b", report(), timestamp=1.0)
    store.forget("h@b")
    assert store.all_pools() == {}
    store.forget("h@b")


@pytest.mark.parametrize("specs, roots", [
    ({"multiattach": "<is> True"}, ("multiattach",)),
    ({"capabilities:multiattach": "<is> True", "volume_backend_name": "b"},
     ("multiattach", "volume_backend_name")),
    ({"capabilities:nested:free": "= 1"}, ("nested",)),
    ({"capabilities": "x"}, None),
])
def test_spec_roots(specs, roots):
    assert capabilities.spec_roots(specs) == roots


def test_projection_groups_pools_by_the_values_read(store):
    for i in range(6):
        store.update("h%d@b" % i, report(multiattach=i % 3 == 0,
                                         free=i), timestamp=1.0)
    projection = store.projection(("multiattach",))
    assert {key: len(pools) for key, pools in projection.groups.items()} \
        == {(("bool", True),): 2, (("bool", False),): 4}
    store.update("h1@b", report(multiattach=True), timestamp=2.0)
    assert len(projection.groups[(("bool", True),)]) == 3
    store.forget("h0@b")
    assert len(projection.groups[(("bool", True),)]) == 2


def test_projection_of_unhashable_and_missing_values(store):
    store.update("a@b", report(pools=[{"pool_name": "p", "tags": ["x", "y"]}]),
                 timestamp=1.0)
    store.update("c@b", report(pools=[{"pool_name": "p"}]), timestamp=1.0)
    assert store.find_satisfying({"tags": "<in> y"})[0] == "a@b#p"
    assert store.find_satisfying({"tags": "z"}) == (None, [("tags",)])


# -- charges ----------------------------------------------------------------
def test_consume_charges_at_once(store):
    store.update("h@b", report(free=100), timestamp=1.0)
    [pool] = store.pool_states()
    generation = store.generation
    store.consume(pool, 30)
    assert store.fresh_pools()["h@b#p"]["free_capacity_gb"] == 70
    assert store.generation > generation


def test_withdrawn_backend_ignores_reports_sent_before_it(store):
    store.update("h@b", report(multiattach=True), timestamp=5.0)
    store.forget("h@b", timestamp=7.0)
    assert store.fresh_pools() == {}
    assert not store.update("h@b", report(multiattach=True), timestamp=6.0)
    assert not store.update("h@b", report(multiattach=True), timestamp=7.0)
    assert store.fresh_pools() == {}
    # Started again: its first report is newer than the withdrawal.
    assert store.update("h@b", report(multiattach=True), timestamp=8.0)
    assert list(store.fresh_pools()) == ["h@b#p"]
    store.forget("h@b")                     # a forget without a time
    assert store.update("h@b", report(), timestamp=1.0)


def test_changed_since_names_the_pools_each_change_touched(store):
    store.update("h@b", report(pools=[
        {"pool_name": "p1", "free_capacity_gb": 5},
        {"pool_name": "p2", "free_capacity_gb": 5}]), timestamp=1.0)
    store.update("g@b", report(), timestamp=1.0)
    p1, p2, g = store.pool_states()
    start = store.generation
    assert store.changed_since(start) == []
    store.consume(p2, 1)
    assert store.changed_since(start) == [p2]
    store.update("h@b", report(pools=[
        {"pool_name": "p1", "free_capacity_gb": 4},
        {"pool_name": "p2", "free_capacity_gb": 4}]), timestamp=2.0)
    assert sorted(store.changed_since(start), key=id) == sorted(
        [p1, p2, p2], key=id)
    assert g not in store.changed_since(start)


def test_changed_since_is_unknown_after_a_forget_or_a_long_gap(store):
    store.update("h@b", report(), timestamp=1.0)
    [pool] = store.pool_states()
    start = store.generation
    store.forget("g@b")            # unknown backend: nothing changes
    assert store.changed_since(start) == []
    store.update("g@b", report(), timestamp=1.0)
    store.forget("g@b")
    assert store.changed_since(start) is None
    start = store.generation
    for _ in range(capabilities.CHANGE_LOG + 1):
        store.consume(pool, 0)
    assert store.changed_since(start) is None
    assert store.changed_since(store.generation - 1) == [pool]


def test_charge_survives_a_report_sent_before_it(store, clock):
    clock.now = 100.0
    store.update("h@b", report(free=100), timestamp=99.0)
    [pool] = store.pool_states()
    store.consume(pool, 30)                     # charged at wall time 100
    store.update("h@b", report(free=100), timestamp=99.5)
    assert pool.caps["free_capacity_gb"] == 70
    store.update("h@b", report(free=70), timestamp=100.5)
    assert pool.caps["free_capacity_gb"] == 70  # reflected: not charged twice


def test_charge_expires_after_the_window(store, clock):
    clock.now = 100.0
    store.update("h@b", report(free=100), timestamp=99.0)
    [pool] = store.pool_states()
    store.consume(pool, 30)
    store.update("h@b", report(free=100), timestamp=99.5)
    assert pool.caps["free_capacity_gb"] == 70
    clock.now += 11          # a sender whose clock lags ours by 11 s
    store.update("h@b", report(free=100), timestamp=99.8)
    assert pool.caps["free_capacity_gb"] == 100


def test_consume_needs_a_charge_function():
    plain = CapabilityStore(10)
    plain.update("h@b", report(), timestamp=1.0)
    with pytest.raises(RuntimeError):
        plain.consume(plain.pool_states()[0], 1)


def test_annotate_hook_sees_every_change(clock):
    seen = []
    store = CapabilityStore(10, clock=clock, charge=charge,
                            annotate=lambda pool: seen.append(
                                pool.caps["free_capacity_gb"]))
    store.update("h@b", report(free=10), timestamp=1.0)
    store.consume(store.pool_states()[0], 4)
    assert seen == [10, 6]


# -- matching -----------------------------------------------------------------
def test_find_satisfying_again_matches_no_group_until_the_groups_change(
        store, clock, monkeypatch):
    """Once matched, the groups that satisfy some specs are known until a
    group appears or goes; a pool leaving a passing group or a report
    repeating keeps them."""
    wanted = {"volume_backend_name": "b7"}
    for i in range(8):
        store.update("h%d@b" % i, report(volume_backend_name="b%d" % i),
                     timestamp=1.0)
    assert store.find_satisfying(wanted)[0] == "h7@b#p"
    matched = []
    real = capabilities.specs_matcher.unsatisfied_specs
    monkeypatch.setattr(capabilities.specs_matcher, "unsatisfied_specs",
                        lambda caps, specs: matched.append(1) or real(
                            caps, specs))
    store.update("h7@b", report(volume_backend_name="b7"), timestamp=2.0)
    assert store.find_satisfying(wanted)[0] == "h7@b#p"
    assert matched == []
    assert store.find_satisfying(wanted, zones=("east",))[0] is None
    store.update("y@b", report(volume_backend_name="b7",
                               availability_zone="east"), timestamp=2.0)
    assert store.find_satisfying(wanted, zones=("east",))[0] == "y@b#p"
    assert matched == [1], "only the new group is matched"
    assert store.find_satisfying(wanted, zones=("east",))[0] == "y@b#p"
    assert matched == [1]
    clock.now += 11
    assert store.find_satisfying(wanted) == (None, [])


def _counted_pools(store, monkeypatch) -> list[str]:
    """The names of the pools the store asks whether they count, in order,
    from now on."""
    visited: list[str] = []
    real = store._counts
    monkeypatch.setattr(store, "_counts", lambda pool, *args: visited.append(
        pool.name) or real(pool, *args))
    return visited


def test_a_refusal_once_matched_visits_one_pool_per_answer(store,
                                                            monkeypatch):
    """A type pinned to a backend no pool has is refused, once its groups
    were matched, after one counting pool per distinct answer, not after
    every group; the answer is the one the full match gave."""
    for i in range(8):
        store.update("h%d@b" % i, report(volume_backend_name="b%d" % i,
                                         multiattach=i == 3), timestamp=1.0)
    wanted = {"volume_backend_name": "nowhere", "multiattach": "<is> True"}
    first = store.find_satisfying(wanted)
    assert first[0] is None and sorted(first[1]) == [
        ("volume_backend_name",), ("volume_backend_name", "multiattach")]
    visited = _counted_pools(store, monkeypatch)
    assert store.find_satisfying(wanted) == first
    assert sorted(visited) == ["h0@b#p", "h3@b#p"]


def test_a_refusal_skips_an_answer_no_counting_pool_gives(store, clock):
    """Known answers still count only the pools that count now: once the
    one multiattach backend expires, its answer is no longer given."""
    store.update("ma@b", report(volume_backend_name="ma", multiattach=True),
                 timestamp=1.0)
    clock.now += 6
    store.update("plain@b", report(volume_backend_name="plain"),
                 timestamp=1.0)
    wanted = {"volume_backend_name": "nowhere", "multiattach": "<is> True"}
    assert len(store.find_satisfying(wanted)[1]) == 2
    clock.now += 5
    assert store.find_satisfying(wanted) == (
        None, [("volume_backend_name", "multiattach")])


def test_a_refusal_walks_no_pool_of_an_expired_backend(store, clock,
                                                       monkeypatch):
    """Backends whose report expired leave the groups a refusal walks,
    also those of a projection built later, and are back at their next
    report."""
    for i in range(8):
        store.update("h%d@b" % i, report(volume_backend_name="b%d" % i),
                     timestamp=1.0)
    clock.now += 6
    store.update("live@b", report(volume_backend_name="live"), timestamp=1.0)
    wanted = {"volume_backend_name": "nowhere"}
    assert store.find_satisfying(wanted) == (None, [("volume_backend_name",)])
    clock.now += 5
    visited = _counted_pools(store, monkeypatch)
    assert store.find_satisfying(wanted) == (None, [("volume_backend_name",)])
    assert store.find_satisfying({"vendor_name": "nobody"}) == (
        None, [("vendor_name",)])
    assert visited == ["live@b#p", "live@b#p"]
    store.update("h3@b", report(volume_backend_name="b3"), timestamp=2.0)
    assert store.find_satisfying({"volume_backend_name": "b3"}) == (
        "h3@b#p", [])
    assert store.find_satisfying({"vendor_name": "Ashlar"})[0] in (
        "h3@b#p", "live@b#p")
    clock.now += 11
    store.update("h5@b", report(volume_backend_name="b5"), timestamp=1.0)
    assert store.find_satisfying({"volume_backend_name": "b5"}) == (
        "h5@b#p", [])
    assert store.find_satisfying({"volume_backend_name": "b3"}) == (None, [
        ("volume_backend_name",)])


def test_unheard(store, clock):
    store.update("old@b", report(), timestamp=1.0)
    clock.now += 6
    store.update("new@b", report(), timestamp=1.0)
    assert store.unheard(["old@b", "new@b", "never@b"]) == {"never@b"}
    clock.now += 5
    assert store.unheard(["old@b", "new@b"]) == {"old@b"}
    store.forget("new@b")
    assert store.unheard(["new@b"]) == {"new@b"}


def test_find_satisfying(store):
    store.update("plain@b", report(), timestamp=1.0)
    store.update("ma@b", report(multiattach=True), timestamp=1.0)
    assert store.find_satisfying({"multiattach": "<is> True"}) == (
        "ma@b#p", [])
    name, failures = store.find_satisfying(
        {"multiattach": "<is> True", "volume_backend_name": "nope"})
    assert name is None
    assert sorted(failures) == [("multiattach", "volume_backend_name"),
                                ("volume_backend_name",)]


def test_find_satisfying_ignores_stale_and_down_pools(store, clock):
    store.update("ma@b", report(multiattach=True), timestamp=1.0)
    store.update("down@b", report(multiattach=True, state="down"),
                 timestamp=1.0)
    clock.now += 5
    store.update("plain@b", report(), timestamp=2.0)
    assert store.find_satisfying({"multiattach": "<is> True"})[0] == "ma@b#p"
    clock.now += 6
    name, failures = store.find_satisfying({"multiattach": "<is> True"})
    assert name is None and failures == [("multiattach",)]


def test_find_satisfying_in_a_zone(store):
    """Only the zone's pools count; failures are theirs alone."""
    wanted = {"multiattach": "<is> True"}
    store.update("plain@b", report(), timestamp=1.0)
    store.update("ma@b", report(multiattach=True, availability_zone="east"),
                 timestamp=1.0)
    assert store.find_satisfying(wanted, zones=("east",))[0] == "ma@b#p"
    assert store.find_satisfying(wanted)[0] == "ma@b#p"
    assert store.find_satisfying(wanted, zones=("nova",)) == (
        None, [("multiattach",)])
    assert store.find_satisfying(wanted, zones=("west",)) == (None, [])


def test_find_satisfying_pool_by_pool_in_a_zone(store):
    store.update("a@b", report(availability_zone="east"), timestamp=1.0)
    wanted = {"capabilities": "x"}          # reads the whole dict
    assert store.find_satisfying(wanted, zones=("east",)) == (
        None, [("capabilities",)])
    assert store.find_satisfying(wanted, zones=("nova",)) == (None, [])


def test_find_satisfying_with_nothing_counting(store):
    assert store.find_satisfying({"multiattach": "<is> True"}) == (None, [])


def test_find_satisfying_volatile_specs_per_pool(store):
    store.update("a@b", report(free=5), timestamp=1.0)
    store.update("c@b", report(free=50), timestamp=1.0)
    name, _ = store.find_satisfying({"free_capacity_gb": "= 40"})
    assert name == "c@b#p"
    name, failures = store.find_satisfying({"free_capacity_gb": "= 60"})
    assert name is None and failures == [("free_capacity_gb",)]
    store.update("a@b", report(free=70), timestamp=2.0)
    assert store.find_satisfying({"free_capacity_gb": "= 60"})[0] == "a@b#p"


def test_find_satisfying_reading_the_whole_dict(store):
    store.update("a@b", report(), timestamp=1.0)
    assert store.find_satisfying({"capabilities": "x"}) == (
        None, [("capabilities",)])


def test_matching_memo_follows_new_capabilities(store):
    store.update("h@b", report(), timestamp=1.0)
    assert store.find_satisfying({"multiattach": "<is> True"})[0] is None
    store.update("h@b", report(multiattach=True), timestamp=2.0)
    assert store.find_satisfying({"multiattach": "<is> True"})[0] == "h@b#p"


def test_freshness_window_option():
    class Conf:
        backend_stats_polling_interval = 7

        class scheduler:
            capability_freshness = 0
    assert capabilities.freshness_window(Conf) == 14
    Conf.scheduler.capability_freshness = 3
    assert capabilities.freshness_window(Conf) == 3


def test_one_pool_s_last_report_fresh_or_not(store, clock):
    store.update("h@b", report(pools=[{"pool_name": "p"},
                                      {"pool_name": "q"}]), timestamp=1.0)
    assert store.pool("h@b#q")["pool_name"] == "q"
    assert store.pool("h@b#q")["availability_zone"] == "nova"
    assert store.pool("h@b#r") is None
    assert store.pool("h2@b#q") is None
    clock.now += 11
    assert store.fresh_pools() == {}
    assert store.pool("h@b#q")["pool_name"] == "q"


def test_first_report_is_taken_whatever_its_timestamp(store):
    assert store.update("h@b", report(), timestamp=0.0)
    assert list(store.fresh_pools()) == ["h@b#p"]


def test_a_pool_outside_a_type_s_zones_misses_it():
    pool = {"availability_zone": "nova", "multiattach": True}
    assert capabilities.misses(pool, {"multiattach": "<is> True"}) == []
    assert capabilities.misses(pool, {
        "multiattach": "<is> False",
        "RESKEY:availability_zones": "east"}) == [
        "multiattach", "RESKEY:availability_zones"]
    assert capabilities.misses(pool, {
        "RESKEY:availability_zones": "east,nova"}) == []


def test_unchanged_report_refreshes_without_a_change(store, clock):
    store.update("h@b", report(), timestamp=1.0)
    [pool] = store.pool_states()
    generation = store.generation
    clock.now += 9
    assert store.update("h@b", report(), timestamp=2.0)
    assert store.generation == generation
    assert store.changed_since(generation) == []
    assert pool.caps["timestamp"] == 2.0 and pool.received_at == clock.now
    clock.now += 9
    assert list(store.fresh_pools()) == ["h@b#p"]


def test_changed_report_bumps_the_generation(store):
    store.update("h@b", report(free=100), timestamp=1.0)
    [pool] = store.pool_states()
    generation = store.generation
    store.update("h@b", report(free=90), timestamp=2.0)
    assert store.changed_since(generation) == [pool]
    assert pool.caps["free_capacity_gb"] == 90


def test_unchanged_report_after_expiry_is_a_change(store, clock):
    """A pool counting again is news to a verdict made without it."""
    store.update("h@b", report(), timestamp=1.0)
    [pool] = store.pool_states()
    generation = store.generation
    clock.now += 11
    store.update("h@b", report(), timestamp=2.0)
    assert store.changed_since(generation) == [pool]
    assert store.fresh_backends() == {"h@b"}


def test_report_changed_in_place_by_its_sender_is_a_change(store):
    """An in-process sender (the embedded mode) may change and send again
    the dict it sent before: it is compared with a copy."""
    body = report(free=100)
    store.update("h@b", body, timestamp=1.0)
    body["pools"][0]["free_capacity_gb"] = 40
    store.update("h@b", body, timestamp=2.0)
    assert store.pool("h@b#p")["free_capacity_gb"] == 40


def test_unchanged_report_with_a_charge_reflects_it(store, clock):
    clock.now = 100.0
    store.update("h@b", report(free=100), timestamp=99.0)
    [pool] = store.pool_states()
    store.consume(pool, 30)
    store.update("h@b", report(free=100), timestamp=100.5)
    assert pool.caps["free_capacity_gb"] == 100  # reflected, as sent


def test_projection_reading_the_timestamp_follows_it(store):
    store.update("h@b", report(), timestamp=1.0)
    projection = store.projection(("timestamp",))
    store.update("h@b", report(), timestamp=2.0)
    assert list(projection.key_of.values()) == [(("float", 2.0),)]


def test_newest_report(store, clock):
    assert store.newest_report() is None
    store.update("h@b", report(), timestamp=1.0)
    clock.now += 1
    store.update("g@b", report(), timestamp=1.0)
    store.update("h@b", report(), timestamp=1.0, age=5.0)
    clock.now += 2
    assert store.newest_report() == ("g@b", 2.0)
    store.update("h@b", report(), timestamp=2.0)
    assert store.newest_report() == ("h@b", 0.0)
    store.forget("g@b")
    assert store.newest_report() == ("h@b", 0.0)
    store.forget("h@b")
    assert store.newest_report() is None


def test_renew_moves_receipt_and_timestamp_of_the_report_held(clock):
    store = CapabilityStore(10, clock=clock)
    assert not store.renew("a@b", 2.0)          # nothing held
    store.update("a@b", report(), 1.0)
    clock.now += 8
    generation = store.generation
    assert store.renew("a@b", 2.0, age=1.0)
    assert store.generation == generation       # no pool changed
    assert not store.renew("a@b", 2.0)          # not newer
    clock.now += 2.5                            # 1.5 s past the first
    assert store.fresh_backends() == {"a@b"}
    assert store.pool("a@b#p")["timestamp"] == 2.0
    clock.now += 8
    assert store.fresh_backends() == set()


def test_renew_after_a_withdrawal_takes_nothing(clock):
    store = CapabilityStore(10, clock=clock)
    store.update("a@b", report(), 1.0)
    store.forget("a@b", 1.5)
    assert not store.renew("a@b", 2.0)
    assert store.backend("a@b") is None


def test_renew_keeps_local_charges(store, clock):
    store.update("a@b", report(free=100), 1.0)
    store.consume(store.counting()[0], 30)
    clock.now += 1
    assert store.renew("a@b", 2.0)
    assert store.pool("a@b#p")["free_capacity_gb"] == 70


def test_reports_are_as_sent_with_their_ages(store, clock):
    store.update("a@b", report(free=100), 1.0)
    store.update("c@b", report(free=5), 1.0)
    store.consume(store.counting()[0], 30)
    clock.now += 3
    reports = store.reports()
    assert reports["a@b"] == {"age": 3.0, "timestamp": 1.0,
                              "capabilities": report(free=100)}
    assert list(store.reports(["c@b", "x@b"])) == ["c@b"]
