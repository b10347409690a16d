"""Scheduler filters: pure predicates over one pool and one placement request.

A pool is the capability dict a volume service reports for it, with the keys
of Cinder's ``get_pools`` detail (``total_capacity_gb`` and
``free_capacity_gb`` may be the strings ``infinite``/``unknown``) plus
``availability_zone`` and ``backend_state``.  Missing keys take the defaults
of Cinder's ``PoolState``.  The capacity rules are :mod:`common.capacity`,
the capability rules :mod:`common.extra_specs` and the zone rules
:mod:`common.zones`, all shared with the API.
"""

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from common import capacity
from common import zones
from common.extra_specs import unsatisfied_specs

Pool = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class PlacementRequest:
    """What a create asks of a pool."""

    size_gb: int
    extra_specs: Mapping[str, str | None]
    #: The zones the volume may go to (its own, or its type's).
    availability_zones: zones.Zones


def backend_up(pool: Pool) -> bool:
    """Tell whether the pool's backend is not reported ``down``."""
    return pool.get("backend_state") != "down"


def capabilities_ok(pool: Pool, extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether the pool satisfies every capability spec of the type."""
    return not unsatisfied_specs(pool, extra_specs)


_FILTERS: tuple[tuple[str, Callable[[Pool, PlacementRequest], bool]], ...] = (
    ("BackendStateFilter", lambda pool, req: backend_up(pool)),
    ("AvailabilityZoneFilter",
     lambda pool, req: zones.in_zone(pool, req.availability_zones)),
    ("CapacityFilter",
     lambda pool, req: capacity.capacity_ok(pool, req.size_gb,
                                            req.extra_specs)),
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
