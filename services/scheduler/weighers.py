"""Scheduler weighers: rank the pools that passed the filters.

One weigher, Cinder's default ``CapacityWeigher`` with multiplier 1.0: the
most virtual free capacity wins, so volumes spread.  :func:`consume` charges
a placement to the chosen pool at once, as Cinder's
``consume_from_volume`` does, so a burst of creates does not pile onto the
pool that looked emptiest before the first of them.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from common.capacity import (
    UNBOUNDED,
    Pool,
    provisioned_capacity_gb,
    virtual_free_capacity_gb,
)
from services.scheduler.filters import PlacementRequest

#: Weight of pools reporting ``infinite``/``unknown`` capacity: below every
#: bounded pool with room left (Cinder bug 1350638).
UNBOUNDED_WEIGHT = -1.0


def capacity_weight(pool: Pool, extra_specs: Mapping[str, str | None]) -> float:
    """Return the pool's virtual free capacity in GiB, rounded to 2 places
    (``common.capacity.virtual_free_capacity_gb``, the CapacityFilter's
    measure too).

    :param pool: the pool's capabilities.
    :param extra_specs: the type's extra specs (``provisioning:type``).
    """
    free = pool.get("free_capacity_gb", 0)
    total_space = pool.get("total_capacity_gb", 0)
    if free in UNBOUNDED or total_space in UNBOUNDED:
        return UNBOUNDED_WEIGHT
    return round(virtual_free_capacity_gb(pool, extra_specs), 2)


def weigh(pools: Iterable[Pool], request: PlacementRequest) -> list[Pool]:
    """Sort pools best first; equal weights keep their given order.

    :param pools: pools that passed the filters.
    :param request: the placement request (its extra specs matter).
    :returns: a new list of the same pool objects.
    """
    return sorted(pools, key=lambda pool: capacity_weight(
        pool, request.extra_specs), reverse=True)


def consume(pool: dict[str, Any], size_gb: int) -> None:
    """Charge a new volume to a pool, in place.

    Allocated and provisioned capacity grow by ``size_gb``; free capacity
    shrinks by it (thin pools too, as in Cinder) unless it is unbounded.
    Cinder also stamps the pool so that older reports cannot undo this;
    that belongs to whoever keeps the reports.
    """
    provisioned = provisioned_capacity_gb(pool)
    pool["allocated_capacity_gb"] = pool.get("allocated_capacity_gb", 0) + size_gb
    pool["provisioned_capacity_gb"] = provisioned + size_gb
    free = pool.get("free_capacity_gb", 0)
    if free not in UNBOUNDED:
        pool["free_capacity_gb"] = free - size_gb
