"""Client side of the scheduler's RPC API, and the capability fanout."""

from typing import Any, TypedDict

import oslo_messaging as messaging
from oslo_config import cfg

from common import constants
from common import rpc
from common.context import RequestContext


class BackendReport(TypedDict):
    """A backend's last report as ``get_pools`` answers it."""

    age: float                  # seconds since the scheduler received it
    timestamp: float            # when the backend made it
    capabilities: dict[str, Any]    # the report, its ``pools`` included


class RelayedReport(BackendReport):
    """A backend's last report as it sent it, for an api worker's view."""

    fingerprint: str            # ``common.capabilities.fingerprint``


class SchedulerAPI(rpc.RPCAPI):
    """Client of ``ashlar-scheduler``.

    API version history::

        1.0 - Initial version: create_volume, get_pools.
        1.1 - (the capability fanout's, served by the same endpoint).
        1.2 - migrate_volume (cast).
        1.3 - get_reports (call).
    """

    TOPIC = constants.SCHEDULER_TOPIC
    BINARY = constants.SCHEDULER_BINARY
    RPC_API_VERSION = "1.3"
    #: The version a move of a volume needs.
    MIGRATION_VERSION = "1.2"

    def create_volume(self, ctxt: RequestContext, volume_id: str) -> None:
        """Place the volume and hand it to a backend (cast)."""
        self._prepare(version="1.0").cast(ctxt, "create_volume",
                                          volume_id=volume_id)

    @rpc.assert_min_rpc_version("1.2")
    def migrate_volume(self, ctxt: RequestContext, volume_id: str,
                       new_type_id: str, source: dict[str, Any],
                       host: str | None = None) -> None:
        """Choose a pool of the (new) type for a migrating volume whose
        data its node offers as ``source``, or check pool ``host``, and
        hand it there (cast)."""
        self._prepare(version="1.2").cast(
            ctxt, "migrate_volume", volume_id=volume_id,
            new_type_id=new_type_id, source=source, host=host)

    def get_pools(self, ctxt: RequestContext) -> dict[str, BackendReport]:
        """Return each backend's last report: {host: {age, timestamp,
        capabilities}}."""
        reports: dict[str, BackendReport] = self._prepare(
            version="1.0").call(ctxt, "get_pools")
        return reports


    @rpc.assert_min_rpc_version("1.3")
    def get_reports(self, ctxt: RequestContext,
                    hosts: list[str] | None = None
                    ) -> dict[str, RelayedReport]:
        """Return the last report of each backend (of ``hosts`` only, if
        given) as its backend sent it, with its fingerprint: what an api
        worker's view starts from, and resyncs from."""
        reports: dict[str, RelayedReport] = self._prepare(
            version="1.3").call(ctxt, "get_reports", hosts=hosts)
        return reports


class _ReportsAPI(rpc.RPCAPI):
    """Casts at a report's rate, whose receivers read nothing of the
    caller: the lean context (``rpc.LeanContextSerializer``)."""

    def __init__(self, conf: cfg.ConfigOpts | None = None,
                 serializer: messaging.Serializer | None = None) -> None:
        super().__init__(conf, serializer or rpc.LeanContextSerializer())


class CapabilitiesAPI(_ReportsAPI):
    """Fanout of capability reports from volume services to every
    scheduler.

    API version history::

        1.0 - Initial version: update_service_capabilities.
        1.1 - withdraw_service_capabilities.
    """

    TOPIC = constants.CAPABILITIES_TOPIC
    BINARY = constants.SCHEDULER_BINARY
    RPC_API_VERSION = "1.1"

    def update_service_capabilities(self, ctxt: RequestContext,
                                    service_host: str,
                                    capabilities: dict[str, Any],
                                    timestamp: float) -> None:
        """Broadcast one backend's report (fanout cast)."""
        self._prepare(fanout=True, version="1.0").cast(
            ctxt, "update_service_capabilities", service_host=service_host,
            capabilities=capabilities, timestamp=timestamp)

    def withdraw_service_capabilities(self, ctxt: RequestContext,
                                      service_host: str,
                                      timestamp: float) -> bool:
        """Broadcast that a backend stopped (fanout cast): its pools go at
        once instead of when its last report expires.

        :returns: False when ``[upgrade_levels] scheduler`` pins the API
            below 1.1 (nothing sent; the report expires as before).
        """
        if not self.client.can_send_version("1.1"):
            return False
        self._prepare(fanout=True, version="1.1").cast(
            ctxt, "withdraw_service_capabilities", service_host=service_host,
            timestamp=timestamp)
        return True


class CapabilityViewAPI(_ReportsAPI):
    """Fanout from schedulers to every api worker: what changed in the
    reports they hear (``services/scheduler/relay.py``).

    API version history::

        1.0 - Initial version: update_service_capabilities,
              renew_service_capabilities, withdraw_service_capabilities.
    """

    TOPIC = constants.CAPABILITY_VIEW_TOPIC
    BINARY = constants.API_BINARY
    RPC_API_VERSION = "1.0"

    def _cast(self, ctxt: RequestContext, method: str,
              **kwargs: Any) -> None:
        self._prepare(fanout=True, version="1.0").cast(ctxt, method,
                                                       **kwargs)

    def update_service_capabilities(self, ctxt: RequestContext,
                                    service_host: str,
                                    capabilities: dict[str, Any],
                                    timestamp: float,
                                    fingerprint: str) -> None:
        """A backend's report whose content changed (or first heard)."""
        self._cast(ctxt, "update_service_capabilities",
                   service_host=service_host, capabilities=capabilities,
                   timestamp=timestamp, fingerprint=fingerprint)

    def renew_service_capabilities(
            self, ctxt: RequestContext,
            renewals: dict[str, tuple[str, float, float]]) -> None:
        """Reports that repeated the one relayed before:
        ``{host@backend: (fingerprint, timestamp, age)}``."""
        self._cast(ctxt, "renew_service_capabilities", renewals=renewals)

    def withdraw_service_capabilities(self, ctxt: RequestContext,
                                      service_host: str,
                                      timestamp: float) -> None:
        """A backend withdrew its pools."""
        self._cast(ctxt, "withdraw_service_capabilities",
                   service_host=service_host, timestamp=timestamp)
