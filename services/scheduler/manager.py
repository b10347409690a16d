"""The scheduler's RPC endpoint: capability store, placement, get_pools."""

import threading
from typing import Any, Callable

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import exception
from common import service
from common.db import api as db_api
from common.db.api import services as services_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.scheduler import placement
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus


def up_volume_hosts(conf: cfg.ConfigOpts) -> set[str]:
    """``host@backend`` of volume services that heartbeat and are enabled."""
    rows = services_db.service_list(ashlar_context.get_admin_context(),
                                    binary=constants.VOLUME_BINARY)
    return {row.host for row in rows
            if not row.disabled and services_db.is_up(row,
                                                      conf.service_down_time)}


def _older_than(when: Any, seconds: float) -> bool:
    return (db_api.utcnow() - when).total_seconds() > seconds


class SchedulerManager(service.Manager):
    """Serves ``ashlar-scheduler`` and listens to ``ashlar-capabilities``."""

    target = messaging.Target(
        version=scheduler_rpcapi.SchedulerAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.store = capabilities.CapabilityStore(
            capabilities.freshness_window(conf))
        self.volume_rpcapi = volume_rpcapi.VolumeAPI(conf)
        # NOTE(ashlar): placements consume capacity in our view at once; the
        # lock keeps two concurrent placements from reading the same figure.
        self._placement_lock = threading.Lock()

    def after_start(self) -> None:
        self.volume_rpcapi.publish_service_capabilities(
            ashlar_context.get_admin_context())

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        return [(max(1.0, self.conf.service_down_time / 2),
                 self.fail_orphaned_creates)]

    def fail_orphaned_creates(self) -> None:
        """Turn ``creating`` volumes whose volume service died into ``error``.

        The cast stays queued for the service; if it comes back it finds the
        volume in ``error`` and leaves it, and the user can delete it.
        """
        ctxt = ashlar_context.get_admin_context()
        up = up_volume_hosts(self.conf)
        for row in volumes_db.volume_list(ctxt,
                                          filters={"status": STATUS.CREATING}):
            backend = (row.host or "").partition("#")[0]
            if not backend or backend in up or not _older_than(
                    row.updated_at or row.created_at,
                    self.conf.service_down_time):
                continue
            reason = ("Volume service %s is down; the volume was not "
                      "created. Delete it and create it again." % backend)
            if volumes_db.volume_cas(ctxt, row.id,
                                     {"status": STATUS.CREATING,
                                      "provider_location": None},
                                     {"status": STATUS.ERROR,
                                      "error_reason": reason}):
                LOG.warning("Volume %(id)s: %(reason)s",
                            {"id": row.id, "reason": reason})

    def update_service_capabilities(self, ctxt: Any, service_host: str,
                                    capabilities: dict,
                                    timestamp: float) -> None:
        self.store.update(service_host, capabilities, timestamp)

    def get_pools(self, ctxt: Any) -> dict:
        """Every backend's last report with its age (API views and warming)."""
        return self.store.export()

    def create_volume(self, ctxt: Any, volume_id: str) -> None:
        """Choose a pool for a ``creating`` volume and cast it there."""
        try:
            volume = volumes_db.volume_get(ctxt, volume_id)
        except exception.VolumeNotFound:
            return
        if volume.status != STATUS.CREATING or volume.host:
            return
        request = placement.request_for(volume,
                                        types_db.specs_of(volume.volume_type))
        try:
            with self._placement_lock:
                pools = self.store.fresh_pools(up_volume_hosts(self.conf))
                host = placement.choose(pools, request)
        except exception.NoValidBackend as exc:
            LOG.warning("No valid backend for volume %(id)s: %(reason)s",
                        {"id": volume_id, "reason": exc.msg})
            volumes_db.volume_cas(ctxt, volume_id,
                                  {"status": STATUS.CREATING},
                                  {"status": STATUS.ERROR,
                                   "error_reason": exc.msg})
            return
        if volumes_db.volume_cas(ctxt, volume_id,
                                 {"status": STATUS.CREATING, "host": None},
                                 {"host": host}):
            self.volume_rpcapi.create_volume(ctxt, volume_id, host)
