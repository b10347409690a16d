"""Tests for services.scheduler.placement: the indexed filter-and-weigh."""

import random

import pytest

from common import exception
from services.scheduler import filters
from services.scheduler import placement
from services.scheduler import weighers
from services.scheduler.filters import PlacementRequest


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def pool(name="p", free=100, total=100, provisioned=0, multiattach=False,
         thin=False, zone="nova", state="up", **extra):
    caps = {"pool_name": name, "total_capacity_gb": total,
            "free_capacity_gb": free, "allocated_capacity_gb": provisioned,
            "provisioned_capacity_gb": provisioned,
            "thin_provisioning_support": thin,
            "thick_provisioning_support": not thin,
            "max_over_subscription_ratio": 2.0, "reserved_percentage": 0,
            "multiattach": multiattach, "backend_state": state,
            "availability_zone": zone}
    caps.update(extra)
    return caps


def request(size=1, specs=None, zone=None):
    return PlacementRequest(size_gb=size, extra_specs=specs or {},
                            availability_zones=(zone,) if zone else None)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(clock):
    store = placement.new_store(10)
    store._clock = clock
    store._wall_clock = clock
    return store


@pytest.fixture
def placer(store):
    return placement.Placer(store)


def report(store, host, *pools, timestamp=1.0):
    store.update(host, {"volume_backend_name": host.split("@")[1],
                        "pools": list(pools)}, timestamp)


def test_heaviest_passing_pool_wins_and_is_charged(store, placer):
    report(store, "a@b", pool(free=50))
    report(store, "c@b", pool(free=80))
    assert placer.choose(request(size=10)) == "c@b#p"
    assert store.fresh_pools()["c@b#p"]["free_capacity_gb"] == 70


def test_burst_spreads(store, placer):
    report(store, "a@b", pool(free=100))
    report(store, "c@b", pool(free=100))
    chosen = [placer.choose(request(size=10)) for _ in range(10)]
    assert chosen.count("a@b#p") == chosen.count("c@b#p") == 5


def test_capabilities_filter_and_readable_reason(store, placer):
    report(store, "plain@b", pool())
    report(store, "plain2@b", pool(free=1))
    with pytest.raises(exception.NoValidBackend) as err:
        placer.choose(request(specs={"multiattach": "<is> True"}))
    assert err.value.msg == (
        "No valid backend was found. None of 2 pools passed the filters: "
        "CapabilitiesFilter rejected 2 (no multiattach=<is> True).")
    report(store, "ma@b", pool(free=1, multiattach=True))
    assert placer.choose(
        request(specs={"multiattach": "<is> True"})) == "ma@b#p"


def test_a_refusal_asked_again_still_names_the_specs(store, placer):
    """The second ask knows the passing groups without matching; its
    reason matches them then, and says the same."""
    report(store, "plain@b", pool())
    reasons = []
    for _ in range(2):
        with pytest.raises(exception.NoValidBackend) as err:
            placer.choose(request(specs={"multiattach": "<is> True"}))
        reasons.append(err.value.msg)
    assert reasons[0] == reasons[1]
    assert "no multiattach=<is> True" in reasons[1]
    with pytest.raises(exception.NoValidBackend) as err:
        placer.choose(request(size=500, specs={"volume_backend_name": "b"}))
    assert "CapacityFilter rejected 1" in err.value.msg


def test_reason_lists_every_filter(store, placer):
    report(store, "down@b", pool(state="down"))
    report(store, "zone@b", pool(zone="elsewhere"))
    report(store, "full@b", pool(free=0))
    with pytest.raises(exception.NoValidBackend) as err:
        placer.choose(request(size=5, zone="nova"))
    assert err.value.msg == (
        "No valid backend was found. None of 3 pools passed the filters: "
        "AvailabilityZoneFilter rejected 1 (not in availability zone nova); "
        "BackendStateFilter rejected 1 (backend reported down); "
        "CapacityFilter rejected 1 (no room for 5 GiB).")


def test_nothing_reported(placer):
    with pytest.raises(exception.NoValidBackend) as err:
        placer.choose(request())
    assert "No volume backend has reported fresh capabilities" in \
        err.value.msg


def test_stale_and_stopped_backends_do_not_count(store, placer, clock):
    report(store, "old@b", pool(free=1000))
    clock.now += 6
    report(store, "new@b", pool(free=10))
    report(store, "stopped@b", pool(free=500))
    up = {"old@b", "new@b"}
    assert placer.choose(request(), up_hosts=up) == "old@b#p"
    clock.now += 5
    assert placer.choose(request(), up_hosts=up) == "new@b#p"
    with pytest.raises(exception.NoValidBackend):
        placer.choose(request(), up_hosts=set())


def test_new_report_reorders(store, placer):
    report(store, "a@b", pool(free=50))
    report(store, "c@b", pool(free=60))
    assert placer.choose(request()) == "c@b#p"
    report(store, "a@b", pool(free=90), timestamp=2.0)
    assert placer.choose(request()) == "a@b#p"


def test_pool_dropped_from_report_is_never_chosen(store, placer):
    report(store, "a@b", pool("x", free=90), pool("y", free=10))
    assert placer.choose(request()) == "a@b#x"
    report(store, "a@b", pool("y", free=10), timestamp=2.0)
    assert placer.choose(request()) == "a@b#y"


def test_thin_and_thick_requests_weigh_differently(store, placer):
    # thin: (100 * 2) - 0 = 200 virtual; thick pool: 150 free.
    report(store, "thin@b", pool(free=100, total=100, thin=True))
    report(store, "thick@b", pool(free=150, total=150))
    assert placer.choose(request()) == "thin@b#p"
    assert placer.choose(request(
        specs={"provisioning:type": "thick"})) == "thick@b#p"


def test_specs_on_volatile_figures_match_per_pool(store, placer):
    report(store, "a@b", pool(free=10))
    report(store, "c@b", pool(free=20, total=20))
    specs = {"capabilities:free_capacity_gb": "<= 15"}
    assert placer.choose(request(specs=specs)) == "a@b#p"


def _reference(pools, req):
    """Cinder's pipeline, unindexed: every filter on every pool, weigh."""
    passing = [caps for caps in pools.values()
               if filters.passes(caps, req) is None]
    if not passing:
        return None
    return weighers.capacity_weight(
        weighers.weigh(passing, req)[0], req.extra_specs)


@pytest.mark.parametrize("seed, rare", [(seed, seed % 2 == 1)
                                         for seed in range(30)])
def test_same_answer_as_the_unindexed_pipeline(seed, rare, clock):
    """Indexed walk and the candidates of rare capabilities alike."""
    rng = random.Random(seed)
    store = placement.new_store(10)
    store._clock = store._wall_clock = clock
    placer = placement.Placer(store)
    for i in range(rng.randint(1, 40) if not rare else 80):
        total = rng.choice([10, 100, 1000])
        report(store, "h%d@b" % i, pool(
            free=rng.randint(0, total), total=total,
            provisioned=rng.randint(0, total * 2),
            thin=rng.random() < 0.5,
            multiattach=rng.random() < (0.3 if not rare else 0.05),
            zone=rng.choice(["nova", "az2"]),
            state=rng.choice(["up"] * 5 + ["down"]),
            reserved_percentage=rng.choice([0, 10])))
    for _ in range(30):
        specs = rng.choice([{}, {"multiattach": "<is> True"},
                            {"provisioning:type": "thick"},
                            {"capabilities:free_capacity_gb": ">= 50"}])
        req = request(size=rng.randint(1, 60), specs=specs,
                      zone=rng.choice([None, "nova", "az2"]))
        best = _reference(store.fresh_pools(), req)
        if best is None:
            with pytest.raises(exception.NoValidBackend):
                placer.choose(req)
            continue
        before = {name: dict(caps)
                  for name, caps in store.fresh_pools().items()}
        chosen = placer.choose(req)
        assert filters.passes(before[chosen], req) is None
        assert weighers.capacity_weight(before[chosen],
                                        req.extra_specs) == best


@pytest.mark.parametrize("seed", range(10))
def test_index_stays_sorted_as_reports_and_charges_move_pools(seed, clock):
    """Moving only the changed pools keeps the index what a full sort
    gives, whatever mix of reports and charges comes."""
    rng = random.Random(seed)
    store = placement.new_store(10)
    store._clock = store._wall_clock = clock
    index = placement.PoolIndex(store)
    for i in range(200):
        report(store, "h%d@b" % i, pool(free=rng.randint(0, 1000),
                                        total=1000, thin=rng.random() < 0.5))
    stamp = 2.0
    for _ in range(300):
        kind = rng.choice([placement._THIN, placement._THICK])
        order = index.ordered(kind)
        weights = [p.annotation[kind] for p in order]
        assert weights == sorted(weights, reverse=True)
        assert {id(p) for p in order} == {id(p) for p in store.pool_states()}
        if rng.random() < 0.7:
            store.consume(rng.choice(order), rng.randint(0, 50))
        else:
            stamp += 1
            report(store, "h%d@b" % rng.randrange(200),
                   pool(free=rng.randint(0, 1000), total=1000),
                   timestamp=stamp)
