"""Placement: filter the fresh pools, weigh the survivors, consume capacity."""

from typing import Any

from common import exception
from services.scheduler import filters
from services.scheduler import weighers


def request_for(volume: Any, extra_specs: dict) -> filters.PlacementRequest:
    """The placement request of a volume row and its type's extra specs."""
    return filters.PlacementRequest(size_gb=volume.size,
                                    extra_specs=extra_specs,
                                    availability_zone=volume.availability_zone)


def choose(pools: dict[str, dict], request: filters.PlacementRequest) -> str:
    """Return the best pool's name and consume the size from it.

    :raises NoValidBackend: with the count of pools each filter turned away.
    """
    if not pools:
        raise exception.NoValidBackend(
            reason="No volume backend has reported fresh capabilities.")
    rejected: dict[str, int] = {}
    passing = []
    for name, caps in pools.items():
        failed = filters.passes(caps, request)
        if failed is None:
            passing.append((name, caps))
        else:
            rejected[failed] = rejected.get(failed, 0) + 1
    if not passing:
        detail = ", ".join("%s rejected %d" % item
                           for item in sorted(rejected.items()))
        raise exception.NoValidBackend(
            reason="No pool passed the filters (%s)." % detail)
    best = weighers.weigh([caps for _name, caps in passing], request)[0]
    weighers.consume(best, request.size_gb)
    return next(name for name, caps in passing if caps is best)
