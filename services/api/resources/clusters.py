"""/clusters (3.7) and /workers/cleanup (3.24), as Cinder serves them."""

import falcon

from common import exception
from services.api import microversion as mv
from services.api import validation
from services.api.operations import clusters as cluster_ops
from services.api.resources import base
from services.api.schemas import clusters as schemas
from services.api.views import clusters as views

#: Cinder's binary when a request names none.
DEFAULT_BINARY = "cinder-volume"
#: List filters at every version from 3.7 (Cinder's ``allowed_list_keys``).
_FILTERS = ("name", "binary", "is_up", "disabled", "num_hosts",
            "num_down_hosts")
#: List filters from 3.26.
_REPLICATION_FILTERS = ("replication_status", "frozen", "active_backend_id")
_BOOLS = ("is_up", "disabled", "frozen")
_INTS = ("num_hosts", "num_down_hosts")


def list_filters(req: falcon.Request) -> dict[str, object]:
    """The list filters of a request, parsed as Cinder parses them.

    :raises InvalidInput: a filter Cinder does not accept at the request's
        version.
    :raises ValidationError: a boolean or count that is not one.
    """
    allowed = _FILTERS + (_REPLICATION_FILTERS if base.version(req)
                          >= mv.REPLICATION_CLUSTER else ())
    unknown = sorted(set(req.params) - set(allowed))
    if unknown:
        raise exception.InvalidInput(
            reason="Invalid filter keys: %s" % ", ".join(unknown))
    return base.filters(req, {key: key for key in allowed}, bools=_BOOLS,
                        ints=_INTS)


class Collection:
    """``GET /clusters`` and, with ``detail``, ``GET /clusters/detail``."""

    def __init__(self, ops: cluster_ops.ClusterOperations,
                 detail: bool = False) -> None:
        self.ops = ops
        self.detail = detail

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.CLUSTER_SUPPORT)
        found = self.ops.clusters(base.ctxt(req), list_filters(req))
        view = views.detail if self.detail else views.summary
        replication = base.version(req) >= mv.REPLICATION_CLUSTER
        resp.media = {"clusters": [view(state, replication)
                                   for state in found]}


class Item:
    """``GET /clusters/{name}?binary=``; ``PUT /clusters/enable`` and
    ``PUT /clusters/disable``."""

    def __init__(self, ops: cluster_ops.ClusterOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               name: str) -> None:
        base.require(req, mv.CLUSTER_SUPPORT)
        state = self.ops.cluster(
            base.ctxt(req), name,
            req.get_param("binary") or DEFAULT_BINARY)
        resp.media = {"cluster": views.detail(
            state, base.version(req) >= mv.REPLICATION_CLUSTER)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               name: str) -> None:
        base.require(req, mv.CLUSTER_SUPPORT)
        if name not in ("enable", "disable"):
            raise falcon.HTTPNotFound()
        disabled = name == "disable"
        data = base.body(req, schemas.DISABLE if disabled
                         else schemas.ENABLE)
        reason = (data.get("disabled_reason") or "").strip() or None \
            if disabled else None
        state = self.ops.set_disabled(
            base.ctxt(req), data["name"],
            data.get("binary") or DEFAULT_BINARY, disabled, reason)
        resp.media = {"cluster": views.updated(
            state, base.version(req) >= mv.REPLICATION_CLUSTER)}


class Cleanup:
    """``POST /workers/cleanup``: the services whose work a live volume
    service now resumes, and those none can (202)."""

    def __init__(self, ops: cluster_ops.ClusterOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.WORKERS_CLEANUP)
        data = base.body(req, schemas.CLEANUP) if req.content_length \
            else {}
        for key in ("disabled", "is_up"):
            if data.get(key) is not None:
                data[key] = validation.parse_bool_param(key, data[key])
        cleaning, unavailable = self.ops.cleanup(base.ctxt(req), data)
        resp.status = falcon.HTTP_202
        resp.media = {"cleaning": views.services(cleaning),
                      "unavailable": views.services(unavailable)}
