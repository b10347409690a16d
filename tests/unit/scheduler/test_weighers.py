"""Tests for services.scheduler.weighers: Cinder's CapacityWeigher."""

import pytest

from services.scheduler.filters import PlacementRequest, passes
from services.scheduler.weighers import (
    UNBOUNDED_WEIGHT,
    capacity_weight,
    consume,
    weigh,
)

THICK = {"provisioning:type": "thick"}


def pool(name, total=1000, free=500, provisioned=None, allocated=500,
         reserved=0, thin=False, ratio=1.0):
    result = {
        "pool_name": name,
        "total_capacity_gb": total,
        "free_capacity_gb": free,
        "allocated_capacity_gb": allocated,
        "reserved_percentage": reserved,
        "thin_provisioning_support": thin,
        "thick_provisioning_support": not thin,
        "max_over_subscription_ratio": ratio,
    }
    if provisioned is not None:
        result["provisioned_capacity_gb"] = provisioned
    return result


def request(specs=None, size=1):
    return PlacementRequest(size_gb=size, extra_specs=specs or {},
                            availability_zones=None)


def test_thick_weight_is_free_space():
    assert capacity_weight(pool("a"), {}) == 500


def test_thick_weight_is_capped_by_unprovisioned_space():
    # total - provisioned = 1000 - 800 = 200 < reported free 500.
    assert capacity_weight(pool("a", provisioned=800), {}) == 200


def test_thick_weight_does_not_take_the_reserve_off_free_space():
    # Cinder: min(free, total - reserved - provisioned) = min(500, 900 - 100).
    assert capacity_weight(pool("a", provisioned=100, reserved=10), {}) == 500
    assert capacity_weight(pool("a", provisioned=500, reserved=10), {}) == 400


def test_thin_weight_is_virtual_free_capacity():
    thin = pool("a", total=100, free=10, provisioned=150, reserved=10,
                thin=True, ratio=2.0)
    # (100 - 10) * 2 - 150.
    assert capacity_weight(thin, {}) == 30


def test_thick_request_on_thin_pool_weighs_real_space():
    thin = pool("a", total=100, free=10, provisioned=50, thin=True, ratio=2.0)
    assert capacity_weight(thin, THICK) == 10


def test_auto_ratio_is_used_for_thin_weight():
    thin = pool("a", total=100, free=100, provisioned=0, thin=True,
                ratio="auto")
    assert capacity_weight(thin, {}) == 2000


def test_weight_is_rounded_to_two_places():
    thin = pool("a", total=10, free=10, provisioned=0, thin=True,
                ratio=1.23456)
    assert capacity_weight(thin, {}) == 12.35


@pytest.mark.parametrize("key", ["free_capacity_gb", "total_capacity_gb"])
@pytest.mark.parametrize("value", ["infinite", "unknown"])
def test_unbounded_capacity_weighs_lowest(key, value):
    unbounded = pool("u")
    unbounded[key] = value
    assert capacity_weight(unbounded, {}) == UNBOUNDED_WEIGHT
    ranked = weigh([unbounded, pool("small", free=1), pool("big")],
                   request())
    assert [p["pool_name"] for p in ranked] == ["big", "small", "u"]


def test_over_provisioned_pool_weighs_below_unbounded_one():
    full = pool("full", total=100, free=10, provisioned=250, thin=True,
                ratio=2.0)
    unbounded = pool("u", free="infinite")
    assert [p["pool_name"] for p in weigh([full, unbounded], request())] == [
        "u", "full"]


def test_weigh_sorts_best_first_and_keeps_ties_in_order():
    pools = [pool("a", free=100), pool("b", free=300), pool("c", free=100),
             pool("d", free=200)]
    ranked = weigh(pools, request())
    assert [p["pool_name"] for p in ranked] == ["b", "d", "a", "c"]
    assert ranked[0] is pools[1]


def test_weigh_uses_the_request_provisioning_type():
    thin = pool("thin", total=100, free=50, provisioned=0, thin=True,
                ratio=20.0)
    thick = pool("thick", free=500)
    assert weigh([thick, thin], request())[0] is thin
    assert weigh([thick, thin], request(THICK))[0] is thick


def test_weigh_empty():
    assert weigh([], request()) == []


def test_consume_updates_capacity_in_place():
    target = pool("a", provisioned=600)
    consume(target, 10)
    assert target["free_capacity_gb"] == 490
    assert target["allocated_capacity_gb"] == 510
    assert target["provisioned_capacity_gb"] == 610


def test_consume_provisioned_defaults_to_allocated():
    target = pool("a")
    consume(target, 10)
    assert target["provisioned_capacity_gb"] == 510


def test_consume_charges_free_space_on_thin_pools_too():
    target = pool("a", thin=True, ratio=20.0, provisioned=0)
    consume(target, 10)
    assert target["free_capacity_gb"] == 490


@pytest.mark.parametrize("free", ["infinite", "unknown"])
def test_consume_leaves_unbounded_free_space(free):
    target = pool("a", free=free)
    consume(target, 10)
    assert target["free_capacity_gb"] == free
    assert target["allocated_capacity_gb"] == 510


def test_consume_on_sparse_pool():
    target = {}
    consume(target, 5)
    assert target == {"free_capacity_gb": -5, "allocated_capacity_gb": 5,
                      "provisioned_capacity_gb": 5}


def test_burst_of_placements_spreads():
    pools = [pool("a", free=100, provisioned=0),
             pool("b", free=100, provisioned=0),
             pool("c", free=95, provisioned=0)]
    req = request(size=10)
    chosen = []
    for _ in range(6):
        candidates = [p for p in pools if passes(p, req) is None]
        best = weigh(candidates, req)[0]
        consume(best, req.size_gb)
        chosen.append(best["pool_name"])
    assert chosen == ["a", "b", "c", "a", "b", "c"]


def test_burst_stops_when_pools_are_full():
    pools = [pool("a", total=20, free=20, provisioned=0)]
    req = request(size=10)
    for _ in range(2):
        consume(weigh(pools, req)[0], req.size_gb)
    assert passes(pools[0], req) == "CapacityFilter"
