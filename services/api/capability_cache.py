"""The API worker's capability view, and the early rejection built on it.

Each worker hears the ``ashlar-capabilities`` fanout and warms itself from a
scheduler at start.  It says "no" to a create only when it can trust its view:

* it has warmed from a scheduler (a cold cache never rejects);
* it heard a report from some backend within the freshness window (a view
  that stopped hearing the bus never rejects);
* no fresh pool satisfies the type's capability specs, by the same matcher
  the scheduler uses (``common.extra_specs``).

Capacity and service heartbeats are left to the scheduler: ignoring them can
only make the API accept more, never reject what a backend could serve.
"""

import os
import threading
import uuid
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import exception
from common import extra_specs
from common import rpc
from services.scheduler import rpcapi as scheduler_rpcapi

LOG = logging.getLogger(__name__)


class CapabilityCache:
    """Fanout listener plus per-pool store for one API worker."""

    target = messaging.Target(
        version=scheduler_rpcapi.CapabilitiesAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI) -> None:
        self.conf = conf
        self.scheduler = scheduler
        self.store = capabilities.CapabilityStore(
            capabilities.freshness_window(conf))
        self.warmed = threading.Event()
        self._server: Any = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Listen to the fanout, then warm from a scheduler in background."""
        target = messaging.Target(
            topic=constants.CAPABILITIES_TOPIC,
            server="api-%s-%d-%s" % (self.conf.host, os.getpid(),
                                     uuid.uuid4().hex[:8]))
        self._server = rpc.get_server(target, [self])
        self._server.start()
        threading.Thread(target=self._warm, daemon=True,
                         name="capability-warm").start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server.wait()

    def _warm(self) -> None:
        ctxt = ashlar_context.get_admin_context()
        try:
            self.store.warm(self.scheduler.get_pools(ctxt))
        except Exception as exc:
            LOG.warning("Capability cache not warmed (%s); creates go to the "
                        "scheduler unchecked until it is", exc)
            return
        self.warmed.set()
        LOG.info("Capability cache warm with %d pools",
                 len(self.store.all_pools()))

    # -- RPC endpoint ----------------------------------------------------
    def update_service_capabilities(self, ctxt: Any, service_host: str,
                                    capabilities: dict,
                                    timestamp: float) -> None:
        self.store.update(service_host, capabilities, timestamp)

    # -- the check -------------------------------------------------------
    def trusted(self) -> bool:
        """Whether the view may be used to say "no"."""
        age = self.store.newest_report_age()
        return (self.warmed.is_set() and age is not None
                and age <= self.store.freshness)

    def check_type(self, ctxt: Any, vtype: Any, specs: dict) -> None:
        """Reject a type no fresh pool can satisfy, if the view is trusted.

        :raises UnsatisfiableVolumeType: naming the unsatisfied specs.
        """
        wanted = extra_specs.capability_specs(specs)
        if not wanted or not self.trusted():
            return
        pools = self.store.fresh_pools()
        failures = []
        for caps in pools.values():
            missing = extra_specs.unsatisfied_specs(caps, wanted)
            if not missing:
                return
            failures.append(set(missing))
        raise exception.UnsatisfiableVolumeType(
            type=vtype.name, unsatisfied=_describe(wanted, failures))


def _describe(wanted: dict, failures: list[set]) -> str:
    """Name the specs no pool satisfies (or all of them, if only together)."""
    common = set.intersection(*failures) if failures else set(wanted)
    keys = [k for k in wanted if k in common] or list(wanted)
    text = ", ".join("%s=%s" % (k, wanted[k]) for k in keys)
    if not failures:
        return "no backend has reported fresh capabilities (%s)" % text
    if common:
        return "no fresh pool offers %s" % text
    return "no single fresh pool offers all of %s" % text
