"""Clusters of volume services and the operator's worker cleanup.

``os-clusters`` (3.7) lists, shows, enables and disables clusters; a
disabled cluster's backends are not placed on (the one rule of
``services.service_liveness``).  ``POST /workers/cleanup`` (3.24) asks a
live volume service to resume, now, the work of the services it names
that are down: the same sweep every volume service runs at start and
periodically (``services.volume.resume``), cast to the service itself or
to its cluster, which any live member takes.
"""

from collections.abc import Mapping
from typing import Any

from oslo_config import cfg

from common import constants
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import clusters as clusters_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.volume import rpcapi as volume_rpcapi

#: Values of a cluster's replication fields: Ashlar does not replicate.
REPLICATION = {"replication_status": "disabled", "frozen": False,
               "active_backend_id": None}
#: Cinder's cleanable resource types (``resource_type``, title case).
RESOURCE_TYPES = ("Snapshot", "Volume")


class ClusterOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volume_rpc: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volume_rpc = volume_rpc

    def clusters(self, ctxt: RequestContext, filters: Mapping[str, Any]
                 ) -> list[clusters_db.ClusterState]:
        """The clusters the filters (Cinder's names, values parsed) keep.

        :param filters: ``name``, ``binary``, ``disabled``: read in the
            database; ``is_up``, ``num_hosts``, ``num_down_hosts`` and the
            replication fields: compared with what the members say.
        """
        ctxt.can("clusters:get_all")
        found = clusters_db.cluster_list(
            ctxt, self.conf.service_down_time, name=filters.get("name"),
            binary=constants.ashlar_binary(filters.get("binary")),
            disabled=filters.get("disabled"))
        return [state for state in found if _kept(state, filters)]

    def cluster(self, ctxt: RequestContext, name: str,
                binary: str) -> clusters_db.ClusterState:
        """:raises ClusterNotFound:"""
        ctxt.can("clusters:get")
        return clusters_db.cluster_get(ctxt, name,
                                       constants.ashlar_binary(binary),
                                       self.conf.service_down_time)

    def set_disabled(self, ctxt: RequestContext, name: str, binary: str,
                     disabled: bool, reason: str | None
                     ) -> clusters_db.ClusterState:
        """Disable (or enable) a cluster: its backends are not placed on.

        :raises ClusterNotFound:
        """
        ctxt.can("clusters:update")
        binary = constants.ashlar_binary(binary)
        clusters_db.cluster_set_disabled(ctxt, name, binary, disabled,
                                         reason)
        return clusters_db.cluster_get(ctxt, name, binary,
                                       self.conf.service_down_time)

    def cleanup(self, ctxt: RequestContext, request: dict[str, Any]
                ) -> tuple[list[models.Service], list[models.Service]]:
        """Cast the resume of the named services' work to a live service
        (itself or its cluster), once per server.

        :param request: the body, validated; booleans parsed.
        :returns: ``(cleaning, unavailable)``: the services whose work a
            live service resumes, and those none can.
        :raises InvalidInput: an unknown ``resource_type``, or a
            ``resource_id`` no volume (snapshot) has.
        """
        ctxt.can("workers:cleanup")
        if request.get("binary") == "cinder-scheduler":
            # NOTE(ashlar): schedulers hold no work of their own: every
            # live one sweeps each lost create.
            return [], []
        where = self._where(ctxt, request)
        targets = clusters_db.cleanup_targets(
            ctxt, self.conf.service_down_time, constants.VOLUME_BINARY,
            is_up=bool(request.get("is_up", False)),
            service_id=_int(request.get("service_id")),
            disabled=request.get("disabled"), **where)
        for server in dict.fromkeys(t.server for t in targets if t.server):
            self.volume_rpc.do_cleanup(ctxt, server)
        return ([t.service for t in targets if t.server],
                [t.service for t in targets if not t.server])

    def _where(self, ctxt: RequestContext, request: dict[str, Any]
               ) -> dict[str, str | None]:
        """``cluster_name`` and ``host`` of the request; with only a
        ``resource_id``, the backend that volume (snapshot) is on."""
        kind = request.get("resource_type") or None
        if kind and kind.title() not in RESOURCE_TYPES:
            raise exception.InvalidInput(
                reason="Resource type %s not valid, must be %s" % (
                    kind.title(), " or ".join(RESOURCE_TYPES)))
        where = {"cluster_name": request.get("cluster_name"),
                 "host": request.get("host")}
        resource_id = request.get("resource_id")
        if not resource_id or any(where.values()) or request.get(
                "service_id") not in (None, ""):
            return where
        host = _host_of(ctxt, resource_id, kind)
        if host is None:
            raise exception.InvalidInput(
                reason="There is no resource with UUID %s pending cleanup."
                % resource_id)
        backend = volume_rpcapi.backend_of(host)
        return {"cluster_name": backend, "host": None} if _clustered(
            ctxt, backend) else {"cluster_name": None, "host": backend}


def _kept(state: clusters_db.ClusterState,
          filters: Mapping[str, Any]) -> bool:
    shown = dict(REPLICATION, is_up=state.is_up, num_hosts=state.num_hosts,
                 num_down_hosts=state.num_down_hosts)
    return all(shown[key] == value for key, value in filters.items()
               if key in shown)


def _int(value: object) -> int | None:
    return int(str(value)) if value not in (None, "") else None


def _host_of(ctxt: RequestContext, resource_id: str,
             kind: str | None) -> str | None:
    """The ``host`` of the volume (or the snapshot's volume) with this id;
    None when there is none or it has no host."""
    if kind is None or kind.title() == "Volume":
        try:
            return volumes_db.volume_get(ctxt, resource_id).host
        except exception.VolumeNotFound:
            if kind is not None:
                return None
    try:
        snapshot = snapshots_db.snapshot_get(ctxt, resource_id)
    except exception.NotFound:
        return None
    return snapshot.volume.host


def _clustered(ctxt: RequestContext, backend: str) -> bool:
    return bool(clusters_db.cluster_list(ctxt, 0, name=backend))
