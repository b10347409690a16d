"""Tests for services.scheduler.filters and common.capacity: Cinder's
default filters and its capacity rules."""

import dataclasses

import pytest

from common import capacity
from common.capacity import capacity_ok, could_ever_hold, \
    over_subscription_ratio
from services.scheduler.filters import (
    PlacementRequest,
    backend_up,
    capabilities_ok,
    passes,
)
from services.scheduler import weighers

THICK = {"provisioning:type": "thick"}


def thick_pool(**overrides):
    pool = {
        "pool_name": "thick",
        "total_capacity_gb": 1000,
        "free_capacity_gb": 100,
        "allocated_capacity_gb": 900,
        "provisioned_capacity_gb": 900,
        "reserved_percentage": 0,
        "max_over_subscription_ratio": 1.0,
        "thin_provisioning_support": False,
        "thick_provisioning_support": True,
        "multiattach": False,
        "backend_state": "up",
        "availability_zone": "nova",
    }
    pool.update(overrides)
    return pool


def thin_pool(**overrides):
    pool = thick_pool(pool_name="thin", total_capacity_gb=100,
                      free_capacity_gb=10, provisioned_capacity_gb=150,
                      allocated_capacity_gb=150,
                      max_over_subscription_ratio=2.0,
                      thin_provisioning_support=True,
                      thick_provisioning_support=False)
    pool.update(overrides)
    return pool


@pytest.mark.parametrize("state, expected", [
    ("up", True), (None, True), ("down", False)])
def test_backend_up(state, expected):
    assert backend_up({"backend_state": state}) is expected


def test_backend_up_without_state():
    assert backend_up({}) is True


@pytest.mark.parametrize("size, expected", [(50, True), (100, True),
                                            (101, False)])
def test_thick_capacity(size, expected):
    assert capacity_ok(thick_pool(), size, {}) is expected


@pytest.mark.parametrize("size, expected", [(50, True), (51, False)])
def test_reserved_percentage_is_taken_from_total(size, expected):
    # 5% of 1000 is 50, leaving 50 of the 100 free.
    pool = thick_pool(reserved_percentage=5)
    assert capacity_ok(pool, size, {}) is expected


def test_reserved_space_is_floored():
    # 5% of 999 is 49.95, floored to 49: 999 - 49 - 900 provisioned = 50
    # (unfloored, 49.05 would refuse 50).
    pool = thick_pool(total_capacity_gb=999, reserved_percentage=5)
    assert capacity_ok(pool, 50, {}) is True
    assert capacity_ok(pool, 51, {}) is False


@pytest.mark.parametrize("free", ["infinite", "unknown"])
def test_unbounded_free_always_fits(free):
    pool = thick_pool(free_capacity_gb=free, total_capacity_gb=0,
                      reserved_percentage=50)
    assert capacity_ok(pool, 10 ** 6, {}) is True


@pytest.mark.parametrize("total", ["infinite", "unknown"])
def test_unbounded_total_fits_only_without_reserve(total):
    assert capacity_ok(thick_pool(total_capacity_gb=total), 10 ** 6, {})
    assert not capacity_ok(
        thick_pool(total_capacity_gb=total, reserved_percentage=10), 1, {})


@pytest.mark.parametrize("total", [0, -1])
def test_no_total_capacity_fails(total):
    assert capacity_ok(thick_pool(total_capacity_gb=total), 1, {}) is False


def test_unreported_free_capacity_fails():
    assert capacity_ok(thick_pool(free_capacity_gb=None), 1, {}) is False


def test_missing_capacity_keys_read_as_zero():
    assert capacity_ok({}, 1, {}) is False


def test_zero_size_is_a_manage_request_and_fits():
    assert capacity_ok(thick_pool(free_capacity_gb=0), 0, {}) is True


def test_thin_pool_over_subscribes_its_total():
    # Cinder 29: 100 * 2 - 150 provisioned = 50; the 10 GiB free play no
    # part.
    assert capacity_ok(thin_pool(), 50, {}) is True
    assert capacity_ok(thin_pool(), 51, {}) is False


def test_a_burst_of_charges_on_a_thin_pool_is_bounded_by_provisioning():
    """Placements charged before the next report take free space below
    zero; a thin pool still takes volumes while provisioning allows (the
    RBD side by side: a 9.22 GiB pool refused a burst of 1 GiB creates
    that Cinder 29 took)."""
    pool = thin_pool(total_capacity_gb=9.22, free_capacity_gb=9.22,
                     provisioned_capacity_gb=0, max_over_subscription_ratio=20)
    for _ in range(30):
        assert capacity_ok(pool, 1, {}) is True
        weighers.consume(pool, 1)
    assert pool["free_capacity_gb"] < 0
    assert capacity_ok(pool, 1, THICK) is False
    pool["provisioned_capacity_gb"] = 184
    assert capacity_ok(pool, 1, {}) is False


def test_virtual_free_capacity_is_rounded_to_2_decimals_as_cinders():
    # (100 - 0) * 1.01 - 100.006 = 0.994 -> 0.99: no room for 1 GiB;
    # min(free, 101.996 - 100.997) = 0.999 -> 1.0: room, where unrounded
    # it has none.
    pool = thin_pool(provisioned_capacity_gb=100.006,
                     max_over_subscription_ratio=1.01)
    assert capacity.virtual_free_capacity_gb(pool, {}) == 0.99
    assert capacity_ok(pool, 1, {}) is False
    pool = thick_pool(total_capacity_gb=101.996, free_capacity_gb=101.996,
                      provisioned_capacity_gb=100.997)
    assert capacity.virtual_free_capacity_gb(pool, THICK) == 1.0
    assert capacity_ok(pool, 1, THICK) is True


def test_thin_pool_provisioned_ratio_limit():
    pool = thin_pool(free_capacity_gb=50, provisioned_capacity_gb=180)
    # (180 + 20) / 100 = 2.0 is not above the ratio.
    assert capacity_ok(pool, 20, {}) is True
    # (180 + 21) / 100 > 2 although 50 * 2 >= 21.
    assert capacity_ok(pool, 21, {}) is False


def test_thin_pool_reserve_applies_before_over_subscription():
    pool = thin_pool(free_capacity_gb=20, reserved_percentage=10)
    # (100 - 10) * 2 - 150 = 30.
    assert capacity_ok(pool, 30, {}) is True
    assert capacity_ok(pool, 31, {}) is False


def test_thick_request_on_thin_pool_counts_free_and_provisioned_space():
    # min(10 free, 100 - 50 provisioned): no over-subscription.
    pool = thin_pool(provisioned_capacity_gb=50)
    assert capacity_ok(pool, 10, THICK) is True
    assert capacity_ok(pool, 11, THICK) is False
    # Over-provisioned already: min(10, 100 - 150) refuses any.
    assert capacity_ok(thin_pool(), 1, THICK) is False


def test_thin_spec_does_not_change_capacity_accounting():
    specs = {"capabilities:thick_provisioning_support": "<is> True",
             "provisioning:type": "thin"}
    assert capacity_ok(thin_pool(), 20, specs) is True


def test_thin_pool_with_ratio_below_one_is_filtered_out():
    pool = thin_pool(max_over_subscription_ratio=0.5,
                     provisioned_capacity_gb=0)
    assert capacity_ok(pool, 1, {}) is False
    assert capacity_ok(pool, 1, THICK) is True


def test_ratio_is_ignored_without_thin_support():
    pool = thick_pool(max_over_subscription_ratio=0.5)
    assert capacity_ok(pool, 100, {}) is True


def test_provisioned_defaults_to_allocated():
    pool = thin_pool(free_capacity_gb=50, allocated_capacity_gb=190)
    del pool["provisioned_capacity_gb"]
    # (190 + 11) / 100 > 2.
    assert capacity_ok(pool, 11, {}) is False
    assert capacity_ok(pool, 10, {}) is True


@pytest.mark.parametrize("overrides, expected", [
    ({}, 2.0),
    ({"max_over_subscription_ratio": "1.5"}, 1.5),
    ({"max_over_subscription_ratio": None}, 20.0),
    ({"max_over_subscription_ratio": 0}, 20.0),
    ({"thin_provisioning_support": False}, 1.0),
    ({"total_capacity_gb": "infinite"}, 1.0),
    ({"free_capacity_gb": "unknown"}, 1.0),
    ({"max_over_subscription_ratio": "auto",
      "provisioned_capacity_gb": 0}, 20.0),
    # 1 + 150 / (100 - 10 + 1)
    ({"max_over_subscription_ratio": "auto"}, 1 + 150 / 91),
])
def test_over_subscription_ratio(overrides, expected):
    assert over_subscription_ratio(thin_pool(**overrides)) == pytest.approx(
        expected)


def test_over_subscription_ratio_default_when_unreported():
    pool = thin_pool()
    del pool["max_over_subscription_ratio"]
    assert over_subscription_ratio(pool) == (
        capacity.DEFAULT_MAX_OVER_SUBSCRIPTION_RATIO)


def test_capabilities_ok():
    pool = thick_pool(multiattach=True)
    assert capabilities_ok(pool, {"multiattach": "<is> True"}) is True
    assert capabilities_ok(thick_pool(), {"multiattach": "<is> True"}) is False
    assert capabilities_ok(thick_pool(), {}) is True


def request(size=10, specs=None, az=None):
    return PlacementRequest(size_gb=size, extra_specs=specs or {},
                            availability_zones=(az,) if az else None)


def test_passes():
    assert passes(thick_pool(), request()) is None
    assert passes(thick_pool(multiattach=True),
                  request(100, {"multiattach": "<is> True"}, "nova")) is None


@pytest.mark.parametrize("pool, req, failed", [
    (thick_pool(backend_state="down"), request(10 ** 6, {"x": "y"}, "az9"),
     "BackendStateFilter"),
    (thick_pool(), request(10 ** 6, {"x": "y"}, "az9"),
     "AvailabilityZoneFilter"),
    (thick_pool(), request(10 ** 6, {"x": "y"}, "nova"), "CapacityFilter"),
    (thick_pool(), request(10, {"x": "y"}, "nova"), "CapabilitiesFilter"),
])
def test_passes_names_the_first_failing_filter(pool, req, failed):
    assert passes(pool, req) == failed


def test_placement_request_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        request().size_gb = 1


@pytest.mark.parametrize(("pool", "size", "expected"), [
    (thick_pool(free_capacity_gb=0), 1000, True),
    (thick_pool(free_capacity_gb=0), 1001, False),
    (thick_pool(reserved_percentage=10), 901, False),
    (thin_pool(free_capacity_gb=0, provisioned_capacity_gb=10 ** 6), 200,
     True),
    (thin_pool(free_capacity_gb=0), 201, False),
    (thick_pool(total_capacity_gb="infinite", free_capacity_gb="infinite"),
     10 ** 9, True),
])
def test_could_ever_hold_judges_the_pool_empty(pool, size, expected):
    assert could_ever_hold(pool, size, {}) is expected
