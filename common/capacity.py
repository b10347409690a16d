"""Capacity rules: whether a pool has room for a volume, as Cinder's
``CapacityFilter`` and ``calculate_max_over_subscription_ratio`` decide.

A pool is the capability dict a volume service reports for it
(``total_capacity_gb`` and ``free_capacity_gb`` may be the strings
``infinite``/``unknown``).  The scheduler filters pools with
``capacity_ok``; the API refuses at once a size that no pool could hold
even empty (``could_ever_hold``): one rule for both.
"""

import math
from collections.abc import Mapping
from typing import Any

Pool = Mapping[str, Any]

#: Capacity values a backend reports when it cannot give a number.
UNBOUNDED = ("infinite", "unknown")
#: Cinder's default ``max_over_subscription_ratio`` when a thin pool
#: reports none.
DEFAULT_MAX_OVER_SUBSCRIPTION_RATIO = 20.0
#: Cinder's ratio for ``auto`` while nothing is provisioned yet.
INITIAL_AUTO_RATIO = 20.0



def wants_thin(extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether capacity is counted thin for this type.

    As in Cinder, only ``provisioning:type`` set to exactly ``thick`` turns
    thin accounting off; ``thin_provisioning_support`` specs only select
    pools (through the capabilities filter).
    """
    return extra_specs.get("provisioning:type") != "thick"


def provisioned_capacity_gb(pool: Pool) -> float:
    """Return the provisioned capacity, defaulting to the allocated one."""
    return pool.get("provisioned_capacity_gb",
                    pool.get("allocated_capacity_gb", 0))


def reserved_capacity_gb(pool: Pool, total: float) -> int:
    """Return the GiB of ``total`` the pool's reserved percentage holds back."""
    return math.floor(total * (float(pool.get("reserved_percentage", 0)) / 100))


def over_subscription_ratio(pool: Pool) -> float:
    """Return the pool's effective maximum over-subscription ratio.

    1.0 for pools without thin provisioning or with unbounded capacity;
    otherwise the reported ratio (or Cinder's default 20), where ``auto``
    becomes ``1 + provisioned / (used + 1)``, or 20 while nothing is
    provisioned.
    """
    total = pool.get("total_capacity_gb", 0)
    free = pool.get("free_capacity_gb", 0)
    if (not pool.get("thin_provisioning_support", False)
            or total in UNBOUNDED or free in UNBOUNDED):
        return 1.0
    ratio = (pool.get("max_over_subscription_ratio")
             or DEFAULT_MAX_OVER_SUBSCRIPTION_RATIO)
    if ratio != "auto":
        return float(ratio)
    provisioned = provisioned_capacity_gb(pool)
    if provisioned == 0:
        return INITIAL_AUTO_RATIO
    return 1 + float(provisioned) / (total - free + 1)


def counts_thin(pool: Pool, extra_specs: Mapping[str, str | None]) -> bool:
    """Whether a request of this type is over-subscribed on this pool: a
    thin request (:func:`wants_thin`) on a pool with thin provisioning."""
    return wants_thin(extra_specs) and bool(
        pool.get("thin_provisioning_support", False))


def virtual_free_capacity_gb(pool: Pool,
                             extra_specs: Mapping[str, str | None]) -> float:
    """The GiB a pool with bounded capacity can still provision, as Cinder
    29's ``calculate_capacity_factors`` counts them.

    Thin requests on thin pools: ``(total - reserved) * ratio -
    provisioned``; the reported free space plays no part.  Otherwise
    ``min(free, total - reserved - provisioned)`` (the reserve is not taken
    off the reported free space here).  Rounded to 2 decimals, as Cinder
    rounds it before the filter compares and the weigher weighs.
    """
    total = float(pool.get("total_capacity_gb", 0))
    available = total - reserved_capacity_gb(pool, total)
    provisioned = provisioned_capacity_gb(pool)
    if counts_thin(pool, extra_specs):
        virtual_free = available * over_subscription_ratio(pool) - provisioned
    else:
        virtual_free = min(float(pool.get("free_capacity_gb", 0)),
                           available - provisioned)
    return round(virtual_free, 2)


def capacity_ok(pool: Pool, size_gb: int,
                extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether the pool has room for a volume, as Cinder 29's
    CapacityFilter.

    Unbounded free capacity always fits; unbounded total capacity fits only
    without a reserved percentage.  Otherwise the pool's virtual free
    capacity (:func:`virtual_free_capacity_gb`) must hold the volume, and a
    thin request on a thin pool needs a ratio of at least 1.  A thin pool's
    reported free space does not count: over-subscription is bounded by
    what is provisioned, so local charges of placements (which take free
    space too) cannot refuse a burst that provisioning allows.

    :param pool: the pool's capabilities.
    :param size_gb: requested size; 0 (a manage request) always fits.
    :param extra_specs: the type's extra specs (``provisioning:type``).
    """
    free_space = pool.get("free_capacity_gb", 0)
    total_space = pool.get("total_capacity_gb", 0)
    if size_gb == 0:
        return True
    if free_space is None:
        return False
    if free_space in UNBOUNDED:
        return True
    if total_space in UNBOUNDED:
        return float(pool.get("reserved_percentage", 0)) == 0
    if float(total_space) <= 0:
        return False
    if counts_thin(pool, extra_specs) and over_subscription_ratio(pool) < 1:
        return False
    return virtual_free_capacity_gb(pool, extra_specs) >= size_gb


def could_ever_hold(pool: Pool, size_gb: int,
                    extra_specs: Mapping[str, str | None]) -> bool:
    """Whether the pool, empty, would have room for the volume
    (``capacity_ok`` with all its space free and nothing provisioned)."""
    total = pool.get("total_capacity_gb", 0)
    empty = dict(pool, free_capacity_gb=total, provisioned_capacity_gb=0,
                 allocated_capacity_gb=0)
    return capacity_ok(empty, size_gb, extra_specs)
