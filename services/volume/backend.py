"""One backend of this node as its operations see it.

``Backend`` holds what every operation module (``create``, ``delete``,
``extend``, ``retype``, ``migrate``, ``resume``, ``capability_report``)
needs of the backend it runs on: the driver and options, the
``host@backend`` name, the RPC clients a move sends on, the volumes this
process has in hand, the capabilities of its pools and the driver call
whose failure becomes an ``error`` status.  ``driver_volume`` and
``volume_in`` are the row helpers they share; ``open_copy_source`` is how
the driver reads a moving volume another backend holds (its
``copy_reader``).
"""

import contextlib
import functools
from typing import Any, Callable, Iterator

from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import coordination
from common import exception
from common import messages
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.agent import volume_io
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)


def driver_volume(row: Any) -> driver_base.DriverVolume:
    return driver_base.DriverVolume(id=row.id, size=row.size,
                                    name=row.display_name,
                                    provider_location=row.provider_location,
                                    multiattach=bool(row.multiattach),
                                    attached=_attached(row))


def _attached(row: Any) -> bool:
    detached = constants.AttachStatus.DETACHED
    return (getattr(row, "attach_status", None) or detached) != detached


@contextlib.contextmanager
def open_copy_source(conf: cfg.ConfigOpts, connection: dict[str, Any]
                     ) -> Iterator[volume_io.VolumeHandle]:
    """A moving volume's copy source (``connection``, see
    ``VolumeDriver.copy_connection``) opened read only through the hosts'
    data path, as this node's ``[agent]`` options say (the cephx user and
    keyring folder of an RBD source).

    :raises InvalidVolume: the source is not raw.
    """
    flat = dict(connection, access_mode="ro")
    if flat.get("format", "raw") != "raw":
        raise exception.InvalidVolume(
            reason="volume %s is %s; a copy between backends reads raw "
            "volumes" % (flat.get("volume_id"), flat["format"]))
    with volume_io.open_volume(conf, {
            "id": "move-of-%s" % flat.get("volume_id"),
            "connection_info": flat}) as handle:
        yield handle


def volume_in(ctxt: ashlar_context.RequestContext, volume_id: str,
              status: str) -> Any | None:
    """The volume row if it is (still) in ``status``; else None."""
    try:
        row = volumes_db.volume_get(ctxt, volume_id)
    except exception.VolumeNotFound:
        return None
    if row.status != status:
        LOG.info("Volume %(id)s is %(status)s, not %(wanted)s; leaving it",
                 {"id": volume_id, "status": row.status, "wanted": status})
        return None
    return row


class Backend:
    """One driver as ``host@backend``, shared by its operations; in a
    cluster, one member of ``cluster@backend``."""

    def __init__(self, conf: cfg.ConfigOpts, host: str, backend: str,
                 driver: driver_base.VolumeDriver,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 volumes: volume_rpcapi.VolumeAPI,
                 cluster: str | None = None,
                 locks: coordination.Locks | None = None) -> None:
        self.conf = conf
        #: This member's own ``host@backend`` (its services row).
        self.member_host = "%s@%s" % (host, backend)
        #: ``cluster@backend`` for a member of a cluster, else None.
        self.cluster_host = "%s@%s" % (cluster, backend) if cluster else None
        #: The name the backend's pools are reported and its volumes placed
        #: under: the cluster's, for a member of one.
        self.service_host = self.cluster_host or self.member_host
        self.backend = backend
        self.driver = driver
        driver.copy_reader = functools.partial(open_copy_source, conf)
        self.scheduler_rpcapi = scheduler
        self.volume_rpcapi = volumes
        #: In-process locks; also the cluster's, for a member of one.
        self.locks = locks or coordination.Locks(None, self.member_host)
        #: This service's row (``init_host``), recorded on what it makes.
        self.service_uuid: str | None = None

    @contextlib.contextmanager
    def in_hand(self, volume_id: str) -> Iterator[bool]:
        """Claim a volume (or snapshot); yields False if another thread,
        or another member of the cluster, works on it now (a late cast
        and a resume must not both call the driver)."""
        with self.locks.hold("volume-%s" % volume_id, blocking=False) \
                as taken:
            yield taken

    def stats(self, refresh: bool = False) -> dict:
        """The driver's stats with this backend's name and zone."""
        stats = dict(self.driver.get_volume_stats(refresh=refresh))
        stats.setdefault("volume_backend_name", self.backend)
        stats.setdefault("availability_zone",
                         self.conf.storage_availability_zone)
        if self.cluster_host:
            stats["cluster_name"] = self.cluster_host
        return stats

    def pool(self, host: str | None) -> dict:
        """The capabilities this backend reports for its pool ``host``."""
        return capabilities.flatten(self.service_host, self.stats(),
                                    0).get(host or "", {})

    def missing(self, row: Any, specs: dict) -> list[str]:
        """The type's specs that the row's pool here does not satisfy."""
        return capabilities.misses(self.pool(row.host), specs)

    def driver_call(self, ctxt: ashlar_context.RequestContext, row: Any,
                    action: str, failed_status: str,
                    call: Callable[[], dict] | None = None,
                    event: messages.Event | None = None) -> dict | None:
        """Run ``call`` (default: the driver's ``<action>_volume``); on
        failure set ``failed_status`` with the backend's reason (for
        operators) and record ``event``, if any, for the volume's project.

        :returns: the driver's model update ({} when none), None on failure.
        """
        try:
            if call is None:
                return getattr(self.driver, "%s_volume" % action)(
                    driver_volume(row)) or {}
            return call() or {}
        except Exception as exc:
            LOG.exception("Driver failed to %(action)s volume %(id)s",
                          {"action": action, "id": row.id})
            values = {"status": failed_status,
                      "error_reason": "Backend %s failed to %s the volume: "
                      "%s" % (self.service_host, action, exc)}
            messages.fail_volume(ctxt, self.conf.message_ttl, row,
                                 {"status": row.status}, values, event)
            return None
