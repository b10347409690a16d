"""Scheduler filters: pure predicates over one pool and one placement request.

A pool is the capability dict a volume service reports for it, with the keys
of Cinder's ``get_pools`` detail (``total_capacity_gb`` and
``free_capacity_gb`` may be the strings ``infinite``/``unknown``) plus
``availability_zone`` and ``backend_state``.  Missing keys take the defaults
of Cinder's ``PoolState``.  The capacity rules follow Cinder's
``CapacityFilter`` and ``calculate_max_over_subscription_ratio``; the
capability rules are :mod:`common.extra_specs`, shared with the API.
"""

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from common.extra_specs import unsatisfied_specs

#: Capacity values a backend reports when it cannot give a number.
UNBOUNDED = ("infinite", "unknown")
#: Cinder's default ``max_over_subscription_ratio`` when a thin pool
#: reports none.
DEFAULT_MAX_OVER_SUBSCRIPTION_RATIO = 20.0
#: Cinder's ratio for ``auto`` while nothing is provisioned yet.
INITIAL_AUTO_RATIO = 20.0

Pool = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class PlacementRequest:
    """What a create asks of a pool."""

    size_gb: int
    extra_specs: Mapping[str, str | None]
    availability_zone: str | None


def backend_up(pool: Pool) -> bool:
    """Tell whether the pool's backend is not reported ``down``."""
    return pool.get("backend_state") != "down"


def availability_zone_ok(pool: Pool, availability_zone: str | None) -> bool:
    """Tell whether the pool is in the requested zone (any, if None)."""
    return (not availability_zone
            or pool.get("availability_zone") == availability_zone)


def capabilities_ok(pool: Pool, extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether the pool satisfies every capability spec of the type."""
    return not unsatisfied_specs(pool, extra_specs)


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


def capacity_ok(pool: Pool, size_gb: int,
                extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether the pool has room for a volume, as Cinder's CapacityFilter.

    Unbounded free capacity always fits; unbounded total capacity fits only
    without a reserved percentage.  Otherwise the free space less
    ``floor(total * reserved%)`` must hold the volume, and for thin
    requests on thin pools that space is over-subscribed (see
    :func:`_thin_fits`).

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
    total = float(total_space)
    if total <= 0:
        return False
    free = free_space - reserved_capacity_gb(pool, total)
    if wants_thin(extra_specs) and pool.get("thin_provisioning_support", False):
        return _thin_fits(pool, size_gb, total, free)
    return free >= size_gb


def _thin_fits(pool: Pool, size_gb: int, total: float, free: float) -> bool:
    """Apply Cinder's thin checks.

    The ratio must be at least 1, ``(provisioned + size) / total`` must not
    exceed it, and ``free * ratio`` must hold the volume.
    """
    ratio = over_subscription_ratio(pool)
    if ratio < 1:
        return False
    if (provisioned_capacity_gb(pool) + size_gb) / total > ratio:
        return False
    return free * ratio >= size_gb


_FILTERS: tuple[tuple[str, Callable[[Pool, PlacementRequest], bool]], ...] = (
    ("BackendStateFilter", lambda pool, req: backend_up(pool)),
    ("AvailabilityZoneFilter",
     lambda pool, req: availability_zone_ok(pool, req.availability_zone)),
    ("CapacityFilter",
     lambda pool, req: capacity_ok(pool, req.size_gb, req.extra_specs)),
    ("CapabilitiesFilter",
     lambda pool, req: capabilities_ok(pool, req.extra_specs)),
)


def passes(pool: Pool, request: PlacementRequest) -> str | None:
    """Run every filter on one pool, in Cinder's default order.

    :param pool: the pool's capabilities.
    :param request: what the create asks for.
    :returns: None when the pool passes, else the name of the first failing
        filter: ``BackendStateFilter``, ``AvailabilityZoneFilter``,
        ``CapacityFilter`` or ``CapabilitiesFilter``.
    """
    return next((name for name, check in _FILTERS
                 if not check(pool, request)), None)
