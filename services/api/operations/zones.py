"""Availability zones: the zones of the volume services, as the zone list
shows them and as a create checks the zone it asks for and the zones its
type allows (Cinder's rules)."""

from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common import extra_specs
from common.db.api import services as services_db

LOG = logging.getLogger(__name__)


def known(ctxt: Any, conf: cfg.ConfigOpts) -> dict[str, bool]:
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


def requested(ctxt: Any, conf: cfg.ConfigOpts, zone: str | None,
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
    default = conf.storage_availability_zone
    if conf.allow_availability_zone_fallback:
        LOG.warning("Availability zone '%(zone)s' not found, falling back "
                    "to '%(default)s'.", {"zone": zone, "default": default})
        return default
    text = "Availability zone '%s' is invalid." % zone
    raise invalid(az=zone, reason=text)


def for_type(ctxt: Any, conf: cfg.ConfigOpts, zone: str | None,
             specs: dict, sourced: bool = False) -> tuple[str, ...]:
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
    allowed = extra_specs.availability_zones(specs)
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
