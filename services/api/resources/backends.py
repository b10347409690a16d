"""/os-services, /scheduler-stats/get_pools, /capabilities/{host}."""

import falcon

from services.api import views
from services.api.operations import backends as backend_ops
from services.api.resources import base
from services.api.schemas import services as schemas


def _service_view(row: object, up: bool, version: object,
                  backend_state: str | None) -> dict:
    body = {"binary": row.binary, "host": row.host,
            "zone": row.availability_zone,
            "status": "disabled" if row.disabled else "enabled",
            "state": "up" if up else "down",
            "updated_at": views.timestamp(max(
                t for t in (row.heartbeat_at, row.updated_at, row.created_at)
                if t is not None)),
            "disabled_reason": row.disabled_reason}
    if row.binary == "ashlar-volume":
        body.update(replication_status="disabled", active_backend_id=None,
                    frozen=False)
        if version >= (3, 49):
            body["backend_state"] = backend_state
    if version >= (3, 7):
        body["cluster"] = None
    return body


class Services:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctxt = base.ctxt(req)
        rows = self.ops.services(ctxt, req.params.get("host"),
                                 req.params.get("binary"))
        states = {}
        if base.version(req) >= (3, 49):
            states = {name.partition("#")[0]: caps.get("backend_state", "up")
                      for name, caps in self.ops.pools(ctxt).items()}
        resp.media = {"services": [
            _service_view(row, up, base.version(req), states.get(row.host))
            for row, up in rows]}


class ServiceAction:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               action: str) -> None:
        if action not in schemas.ACTIONS:
            raise falcon.HTTPNotFound()
        data = base.body(req, schemas.ACTIONS[action])
        disabled = action != "enable"
        row = self.ops.set_disabled(base.ctxt(req), data["host"],
                                    data["binary"], disabled,
                                    data.get("disabled_reason"))
        body = {"host": row.host, "service": data.get("service", ""),
                "binary": row.binary,
                "status": "disabled" if disabled else "enabled",
                "disabled": disabled}
        if action == "disable-log-reason":
            body["disabled_reason"] = row.disabled_reason
        resp.media = body


class Pools:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        detail = base.flag(req, "detail")
        pools = self.ops.pools(base.ctxt(req))
        name = req.params.get("name")
        resp.media = {"pools": [
            {"name": pool, "capabilities": caps} if detail else {"name": pool}
            for pool, caps in pools.items() if name in (None, pool)]}


class Capabilities:
    def __init__(self, ops: backend_ops.BackendOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               host: str) -> None:
        host, report = self.ops.capabilities(base.ctxt(req), host)
        pools = report.get("pools") or [{}]
        first = pools[0]
        properties = {k: {"title": k, "description": k, "type": type(v).__name__}
                      for k, v in first.items() if k != "pool_name"}
        resp.media = {
            "namespace": "OS::Storage::Capabilities::%s" % host,
            "vendor_name": report.get("vendor_name"),
            "volume_backend_name": report.get("volume_backend_name"),
            "pool_name": first.get("pool_name"),
            "driver_version": report.get("driver_version"),
            "storage_protocol": report.get("storage_protocol"),
            "display_name": None, "description": None,
            "visibility": None, "replication_targets": [],
            "properties": properties}
