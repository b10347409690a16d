"""/os-services, /os-hosts, /scheduler-stats/get_pools,
/capabilities/{host}."""

import datetime
from typing import Literal, TypedDict

import falcon

from common import constants
from common import exception
from common.db import models
from services.api import microversion as mv
from services.api import views
from services.api.operations import backends as backend_ops
from services.api.resources import base
from services.api.schemas import services as schemas


def _last_seen(row: models.Service) -> str | None:
    """The latest of a service's heartbeat and changes (Cinder's
    ``updated_at`` of a service)."""
    return views.timestamp(max(
        t for t in (row.heartbeat_at, row.updated_at, row.created_at)
        if t is not None))


def _service_view(row: models.Service, up: bool, version: mv.APIVersion,
                  backend_state: str | None) -> dict:
    body: dict[str, object] = {
        "binary": constants.cinder_binary(row.binary), "host": row.host,
        "zone": row.availability_zone,
        "status": "disabled" if row.disabled else "enabled",
        "state": "up" if up else "down",
        "updated_at": _last_seen(row),
        "disabled_reason": row.disabled_reason}
    if row.binary == constants.VOLUME_BINARY:
        body.update(replication_status="disabled", active_backend_id=None,
                    frozen=False)
        if version >= mv.BACKEND_STATE_REPORT:
            body["backend_state"] = backend_state
    if version >= mv.CLUSTER_SUPPORT:
        body["cluster"] = row.cluster_name
    return body


class Services:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctxt = base.ctxt(req)
        rows = self.ops.services(
            ctxt, req.get_param("host"),
            constants.ashlar_binary(req.get_param("binary")))
        states = {}
        if base.version(req) >= mv.BACKEND_STATE_REPORT:
            states = self.ops.backend_states(ctxt)
        resp.media = {"services": [
            _service_view(row, up, base.version(req), states.get(row.host))
            for row, up in rows]}


class ServiceAction:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               action: str) -> None:
        if action in ("freeze", "thaw"):
            self.ops.freeze(base.ctxt(req), base.body(
                req, schemas.FREEZE_THAW).get("host"), action)
        if action not in schemas.ACTIONS:
            raise falcon.HTTPNotFound()
        data = base.body(req, schemas.ACTIONS[action])
        if not data.get("host"):
            raise exception.Invalid(
                "Missing required element 'host' in request body.")
        disabled = action != "enable"
        row = self.ops.set_disabled(
            base.ctxt(req), data["host"],
            constants.ashlar_binary(data.get("binary") or data["service"]),
            disabled, data.get("disabled_reason"))
        body = {"host": row.host, "service": data.get("service", ""),
                "binary": constants.cinder_binary(row.binary),
                "status": "disabled" if disabled else "enabled",
                "disabled": disabled}
        if action == "disable-log-reason":
            body["disabled_reason"] = row.disabled_reason
        resp.media = body


class Hosts:
    """``GET /os-hosts``: each enabled service, as Cinder lists hosts."""

    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows = self.ops.hosts(base.ctxt(req), req.get_param("zone"))
        resp.media = {"hosts": [{
            "host_name": row.host,
            "service": constants.cinder_binary(row.binary),
            "zone": row.availability_zone,
            "service-status": "available" if up else "unavailable",
            "service-state": "enabled",
            "last-update": _last_seen(row)} for row, up in rows]}


class Host:
    """``GET /os-hosts/{host_name}``: the volumes and snapshots of a volume
    host, in total and per project (Cinder's counts, as strings)."""

    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               host_name: str) -> None:
        usage = self.ops.host_usage(base.ctxt(req), host_name)
        total = [sum(column) for column in zip([0, 0, 0, 0],
                                               *usage.values(), strict=True)]
        resp.media = {"host": [
            _host_resource(host_name, project, counts) for project, counts
            in [("(total)", total), *sorted(usage.items())]]}


def _host_resource(host: str, project: str, counts: list[int]) -> dict:
    volumes, volume_gb, snapshots, snapshot_gb = counts
    return {"resource": {
        "host": host, "project": project, "volume_count": str(volumes),
        "total_volume_gb": str(volume_gb), "snapshot_count": str(snapshots),
        "total_snapshot_gb": str(snapshot_gb)}}


#: get_pools query parameters that are not capability filters.
_POOL_FILTERS: tuple[Literal["name", "volume_type"], ...] = (
    "name", "volume_type")
#: Cinder's message for unknown filters (3.33+, resource_filters.json).
_INVALID_FILTERS = "Invalid filters %s are found in query options."


class _PoolQuery(TypedDict, total=False):
    """The filters of ``BackendOperations.pools``."""

    name: str
    volume_type: str
    capability_filters: dict[str, str]


def _pool_query(req: falcon.Request) -> _PoolQuery:
    """The get_pools filters of the request's version, as Cinder reads them.

    Before 3.28 every filter is ignored; from 3.28 ``name`` and any
    capability ``key=value`` filter; ``volume_type`` from 3.35; from 3.33
    only ``name`` and ``volume_type`` are accepted (400 otherwise).  A
    parameter given more than once counts with its last value.
    """
    params = {k: v[-1] if isinstance(v, list) else v
              for k, v in req.params.items() if k != "detail"}
    version = base.version(req)
    if version < mv.POOL_FILTER:
        return {}
    if version < mv.POOL_TYPE_FILTER:
        params.pop("volume_type", None)
    if version >= mv.RESOURCE_FILTER_CONFIG:
        unknown = sorted(k for k in params if k not in _POOL_FILTERS)
        if unknown:
            raise exception.InvalidInput(
                reason=_INVALID_FILTERS % ", ".join(unknown))
    query = _PoolQuery()
    for key in _POOL_FILTERS:
        if key in params:
            query[key] = params.pop(key)
    query["capability_filters"] = params
    return query


class Pools:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        detail = base.flag(req, "detail")
        pools = self.ops.pools(base.ctxt(req), **_pool_query(req))
        resp.media = {"pools": [
            {"name": pool, "capabilities": _shown(caps)} if detail
            else {"name": pool} for pool, caps in pools.items()]}


def _shown(caps: dict) -> dict:
    """A pool's capabilities as Cinder shows them: the report's
    ``timestamp`` (epoch seconds) in naive-UTC ISO 8601."""
    stamp = caps.get("timestamp")
    if not isinstance(stamp, (int, float)):
        return caps
    return dict(caps, timestamp=views.timestamp(
        datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)))


#: Pool capabilities a volume type can ask for, shown as Cinder's
#: "standard capabilities" (title, description, JSON type).
_PROPERTIES = {
    "thin_provisioning_support": ("Thin Provisioning",
                                  "Sets thin provisioning."),
    "thick_provisioning_support": ("Thick Provisioning",
                                   "Sets thick provisioning."),
    "multiattach": ("Multiattach",
                    "Volumes may be attached to several hosts at once."),
    "online_extend_support": ("Online Extend",
                              "In-use volumes can be extended."),
    "QoS_support": ("QoS", "Enables QoS."),
    "compression": ("Compression", "Enables compression."),
    "replication_enabled": ("Replication", "Enables replication."),
}


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


class Capabilities:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               host: str) -> None:
        host, report = self.ops.capabilities(base.ctxt(req), host)
        first = dict(report, **(report.get("pools") or [{}])[0])
        first.pop("pools", None)
        properties = {
            key: {"title": title, "description": description,
                  "type": _json_type(first[key])}
            for key, (title, description) in _PROPERTIES.items()
            if key in first}
        resp.media = {
            "namespace": "OS::Storage::Capabilities::%s" % host,
            "vendor_name": first.get("vendor_name"),
            "volume_backend_name": first.get("volume_backend_name"),
            "pool_name": first.get("pool_name"),
            "driver_version": first.get("driver_version"),
            "storage_protocol": first.get("storage_protocol"),
            "display_name": first.get("display_name"),
            "description": first.get("description"),
            "visibility": first.get("visibility"),
            "replication_targets": first.get("replication_targets", []),
            "properties": properties}
