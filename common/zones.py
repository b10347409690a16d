"""Availability zones: every rule about which zone a pool, a service, a
type, a new volume or a new group is in, as Cinder 29 has them.

- A pool is in the zone its backend reports (``availability_zone`` in its
  capabilities; a volume node reports its ``storage_availability_zone``).
- A type may bound its volumes to some zones (``RESKEY:availability_zones``,
  a comma separated list, 3.52).
- A zone is known while a volume service (in any state) is in it; the
  default zone (``storage_availability_zone``) always is.
- A new volume goes to its source's zone, else its group's, else the zone
  it asks for (which must be known, unless the fallback is on) or the
  default, within its type's zones; with none of these deciding, to any of
  its type's zones (the scheduler picks one, and the volume takes its
  pool's zone).
- The scheduler places a volume in its own zone; in its type's zones while
  it has none yet, or for a retype (Cinder's retype request spec).

The API (early check, create, zone list, os-hosts) and the scheduler
(filters, placement) both read them here.
"""

from collections.abc import Mapping
from typing import Any
from typing import Protocol

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common.context import RequestContext
from common.db.api import services as services_db

LOG = logging.getLogger(__name__)

#: The availability zones a volume may go to (None: any).
Zones = tuple[str, ...] | None
#: The spec that restricts a type to some availability zones (3.52).
TYPE_SPEC = "RESKEY:availability_zones"


class Source(Protocol):
    """What the zone rules read of a snapshot or volume a create copies."""

    @property
    def kind(self) -> str:
        """``snapshot`` or ``volume``."""

    @property
    def availability_zone(self) -> str | None:
        """The source's zone (a volume's; a snapshot's volume's)."""


# -- pools, services and types ------------------------------------------

def of_pool(caps: Mapping[str, Any] | None, default: str) -> str:
    """The zone a pool reports (``default`` when it names none), which a
    volume placed or moved there takes, as Cinder sets a volume's zone to
    its backend's."""
    zone: str = (caps or {}).get("availability_zone", default)
    return zone


def in_zone(pool: Mapping[str, Any], zones: Zones) -> bool:
    """Tell whether a pool's capabilities put it in one of ``zones``: the
    scheduler's AvailabilityZoneFilter, and the API's early check."""
    return not zones or pool.get("availability_zone") in zones


def service_in(service_zone: str | None, zone: str | None) -> bool:
    """Tell whether a service row's zone is ``zone`` (None: any), as
    Cinder's os-hosts filters them."""
    return not zone or service_zone == zone


def of_type(specs: Mapping[str, str | None]) -> Zones:
    """The availability zones a type's volumes may be in, as Cinder 29's
    ``extract_availability_zones_from_volume_type`` reads them (a comma
    separated list); None when the type names none."""
    if TYPE_SPEC not in specs:
        return None
    listed = (specs[TYPE_SPEC] or "").split(",")
    return tuple(zone.strip() for zone in listed if zone != "")


def for_placement(specs: Mapping[str, str | None], zone: str | None,
                  retype: bool = False) -> Zones:
    """The zones a volume in ``zone`` may be placed in with a type of
    ``specs``: its own; its type's ``RESKEY:availability_zones`` while it
    has none yet, or for a retype (Cinder's retype request spec)."""
    allowed = of_type(specs)
    if zone and not (retype and allowed is not None):
        return (zone,)
    return allowed


# -- the zones with volume services --------------------------------------

def known(ctxt: RequestContext, conf: cfg.ConfigOpts) -> dict[str, bool]:
    """``{zone: available}`` for each zone with a volume service.

    A zone is available when one of its enabled volume services is up; the
    default zone (``storage_availability_zone``) is always known.
    """
    default = conf.storage_availability_zone
    zones: dict[str, bool] = {default: False}
    for row in services_db.service_list(ctxt,
                                        binary=constants.VOLUME_BINARY):
        up = (not row.disabled
              and services_db.is_up(row, conf.service_down_time))
        zone = row.availability_zone or default
        zones[zone] = zones.get(zone, False) or up
    return zones


def listed(ctxt: RequestContext,
           conf: cfg.ConfigOpts) -> list[tuple[str, bool]]:
    """``(zone, available)`` for each zone with a volume service
    (:func:`known`), sorted: the zone list."""
    return sorted(known(ctxt, conf).items())


# -- the zones of a new volume or group ----------------------------------

def requested(ctxt: RequestContext, conf: cfg.ConfigOpts, zone: str | None,
              invalid: type[exception.Invalid]) -> str:
    """The zone a new volume or group goes to: none asked for is the
    default zone; ``zone`` if a volume service is in it (in any state);
    else the default zone when ``allow_availability_zone_fallback`` is set.

    :param invalid: raised, with Cinder's text, for an unknown zone:
        ``InvalidAvailabilityZone`` for a volume, ``InvalidInput`` for a
        group.
    """
    default = conf.storage_availability_zone
    if not zone or zone == default or zone in known(ctxt, conf):
        return zone or default
    return _fallback(conf, zone, invalid)


def _fallback(conf: cfg.ConfigOpts, zone: str,
              invalid: type[exception.Invalid]) -> str:
    """The default zone for a create that asked for ``zone``, which it
    cannot have, if ``allow_availability_zone_fallback`` is set."""
    default: str = conf.storage_availability_zone
    if conf.allow_availability_zone_fallback:
        LOG.warning("Availability zone '%(zone)s' not found, falling back "
                    "to '%(default)s'.", {"zone": zone, "default": default})
        return default
    text = "Availability zone '%s' is invalid." % zone
    raise invalid(az=zone, reason=text)


def of_source(zone: str | None, source: Source, default: str) -> str:
    """A volume made from a snapshot or a volume is in its source's zone.

    :param zone: the zone the create asks for.
    :raises InvalidInput: another zone than the source's was asked for.
    """
    if zone and zone != source.availability_zone:
        raise exception.InvalidInput(
            reason="Volume must be in the same availability zone as the "
            "%s" % ("snapshot" if source.kind == "snapshot"
                    else "source volume"))
    return source.availability_zone or default


def for_volume(ctxt: RequestContext, conf: cfg.ConfigOpts, zone: str | None,
               specs: Mapping[str, str | None], source: Source | None = None,
               group_zone: str | None = None) -> tuple[str, ...]:
    """The zones a new volume may go to: its source's (see
    :func:`of_source`), else its group's, else the one it asks for or the
    default; within its type's ``RESKEY:availability_zones``, all of which
    it may go to when nothing else decides (:func:`for_type`).

    :param zone: the zone the create asks for.
    :param group_zone: the zone of the group it joins.
    """
    fixed = (of_source(zone, source, conf.storage_availability_zone)
             if source is not None else group_zone)
    return for_type(ctxt, conf, fixed or zone, specs, sourced=bool(fixed))


def for_type(ctxt: RequestContext, conf: cfg.ConfigOpts, zone: str | None,
             specs: Mapping[str, str | None],
             sourced: bool = False) -> tuple[str, ...]:
    """The zones a new volume may go to: ``zone``'s (see
    :func:`requested`), within those its type's
    ``RESKEY:availability_zones`` names that have a volume service; all of
    these when ``zone`` is None (the scheduler picks one).

    :param sourced: ``zone`` is the one of the volume's source or group,
        not the create's own (no fallback to the default zone then).
    :raises InvalidTypeAvailabilityZones: none of the type's zones has a
        volume service.
    :raises InvalidAvailabilityZone: ``zone`` is not one of them.
    """
    allowed = of_type(specs)
    if allowed is None:
        return (zone if sourced and zone else requested(
            ctxt, conf, zone, exception.InvalidAvailabilityZone),)
    have = known(ctxt, conf)
    safe = tuple(name for name in dict.fromkeys(allowed) if name in have)
    if not safe:
        raise exception.InvalidTypeAvailabilityZones(az=list(allowed))
    if not zone or zone in safe:
        return (zone,) if zone else safe
    if sourced:
        raise exception.InvalidAvailabilityZone(az=zone)
    return (_fallback(conf, zone, exception.InvalidAvailabilityZone),)
