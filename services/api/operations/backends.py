"""Services, pools and capabilities: what operators look at."""

from collections.abc import Mapping
from typing import Any, NoReturn

from oslo_config import cfg
from oslo_utils import strutils

from common import capabilities
from common import constants
from common import exception
from common import extra_specs
from common import zones
from common.context import RequestContext
from common.db import models
from common.db.api import services as services_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.scheduler import rpcapi as scheduler_rpcapi

#: A service row and whether it is up (heartbeating).
ServiceState = tuple[models.Service, bool]


def equal_after_convert(capability: object, value: str) -> bool:
    """Compare a capability with a query value, as Cinder's get_pools does.

    Same types compare as they are, a boolean capability reads the value
    as a boolean, anything else compares as text.
    """
    if capability is None or isinstance(value, type(capability)):
        return value == capability
    if isinstance(capability, bool):
        return capability == strutils.bool_from_string(value)
    return str(value) == str(capability)


class BackendOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI) -> None:
        self.conf = conf
        self.scheduler = scheduler

    def services(self, ctxt: RequestContext, host: str | None,
                 binary: str | None) -> list[ServiceState]:
        """(row, is up) for each service."""
        ctxt.can("volume_extension:services:index")
        rows: list[models.Service] = services_db.service_list(ctxt, host,
                                                              binary)
        return [(row, services_db.is_up(row, self.conf.service_down_time))
                for row in rows]

    def set_disabled(self, ctxt: RequestContext, host: str, binary: str,
                     disabled: bool,
                     reason: str | None) -> models.Service:
        ctxt.can("volume_extension:services:update")
        try:
            row: models.Service = services_db.service_set_disabled(
                ctxt, host, binary, disabled, reason)
        except exception.ServiceNotFound:
            raise exception.NotFound(
                "Could not find binary %s on host %s." % (
                    constants.cinder_binary(binary), host))
        return row

    def freeze(self, ctxt: RequestContext, host: str | None,
               action: str) -> NoReturn:
        """Cinder's ``freeze``/``thaw`` of a volume host: part of
        replication failover, which Ashlar does not offer.

        :raises InvalidInput: always: no such volume host, or it cannot be
            frozen (400, Cinder's answer to a host it cannot act on).
        """
        ctxt.can("volume:%s_host" % action)
        rows = services_db.service_list(ctxt, host,
                                        constants.VOLUME_BINARY) if host \
            else []
        if not rows:
            raise exception.InvalidInput(
                reason="No service found with host=%s" % host)
        raise exception.InvalidInput(
            reason="%s of host %s: freeze and thaw belong to replication "
                   "failover, which Ashlar does not offer; disable the "
                   "service to stop new volumes on it." % (
                       action.capitalize(), host))

    def hosts(self, ctxt: RequestContext,
              zone: str | None) -> list[ServiceState]:
        """(row, is up) of each enabled service (of ``zone``), as Cinder's
        os-hosts lists them."""
        ctxt.can("volume_extension:hosts")
        rows: list[models.Service] = services_db.service_list(ctxt)
        return [(row, services_db.is_up(row, self.conf.service_down_time))
                for row in rows
                if not row.disabled
                and zones.service_in(row.availability_zone, zone)]

    def host_usage(self, ctxt: RequestContext,
                   host: str) -> dict[str, list[int]]:
        """Per project, the volumes and snapshots (count, GB) of an
        enabled volume host (``host@backend``).

        :raises HostNotFound: no enabled volume service of that name.
        """
        ctxt.can("volume_extension:hosts")
        if not any(row.host == host and not row.disabled for row in
                   services_db.service_list(
                       ctxt, binary=constants.VOLUME_BINARY)):
            raise exception.HostNotFound(host=host)
        usage: dict[str, list[int]] = volumes_db.usage_on_host(ctxt, host)
        return usage

    def reports(self, ctxt: RequestContext
                ) -> dict[str, scheduler_rpcapi.BackendReport]:
        """Each backend's last report, from a scheduler."""
        return self.scheduler.get_pools(ctxt)

    def _running_backends(self, ctxt: RequestContext) -> set[str]:
        return services_db.running_backends(ctxt,
                                            self.conf.service_down_time)

    def pools(self, ctxt: RequestContext, name: str | None = None,
              capability_filters: Mapping[str, str] | None = None,
              volume_type: str | None = None) -> dict[str, dict[str, Any]]:
        """``{host@backend#pool: capabilities}`` of the pools a scheduler
        would consider: fresh reports of enabled, heartbeating services.

        Pools of a backend reported ``down`` are listed (their
        ``backend_state`` says so), as in Cinder.

        :param name: only the pool of this name.
        :param capability_filters: capability -> value, compared as Cinder's
            get_pools compares them.
        :param volume_type: only pools whose backend is up and that satisfy
            the type's capability specs.
        :raises VolumeTypeNotFound: no such type.
        """
        ctxt.can("scheduler_extension:scheduler_stats:get_pools")
        wanted = None
        if volume_type is not None:
            wanted = extra_specs.capability_specs(
                types_db.type_resolve(ctxt, volume_type)[1])
        view = capabilities.CapabilityStore(
            capabilities.freshness_window(self.conf))
        view.warm(self.reports(ctxt))
        running = self._running_backends(ctxt)
        result = {}
        for host in sorted(view.fresh_backends() & running):
            for pool, caps in sorted((view.backend(host) or {}).items()):
                if name is not None and pool != name:
                    continue
                if not all(equal_after_convert(caps.get(key), value)
                           for key, value in (capability_filters or {}).items()):
                    continue
                if wanted is not None and (
                        caps.get("backend_state") == "down"
                        or extra_specs.unsatisfied_specs(caps, wanted)):
                    continue
                result[pool] = caps
        return result

    def backend_states(self, ctxt: RequestContext) -> dict[str, str]:
        """``host@backend`` -> ``backend_state`` of the pools listed."""
        return {pool.partition("#")[0]: caps.get("backend_state", "up")
                for pool, caps in self.pools(ctxt).items()}

    def capabilities(self, ctxt: RequestContext,
                     host: str) -> tuple[str, dict[str, Any]]:
        """The last report of ``host@backend`` (or the first backend of a
        bare ``host``; a ``#pool`` suffix is ignored).

        :raises HostNotFound: no volume backend of that name reported.
        """
        ctxt.can("volume_extension:capabilities")
        host = host.partition("#")[0]
        reports = self.reports(ctxt)
        matches = [h for h in sorted(reports)
                   if h == host or h.startswith(host + "@")]
        if not matches:
            raise exception.HostNotFound(host=host)
        return matches[0], reports[matches[0]]["capabilities"]
