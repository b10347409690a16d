"""``/qos-specs`` and its sub-resources (keys, associations)."""

import falcon

from common.db import models
from services.api import validation
from services.api.operations import qos as qos_ops
from services.api.resources import base
from services.api.schemas import qos as schemas
from services.api.views import qos as views

SORT_MAP = {"created_at": "created_at", "id": "id", "name": "name",
            "consumer": "consumer"}


def _show(req: falcon.Request, row: models.QoSSpecs) -> dict:
    return views.show(row, base.base_url(req), base.url_project(req))


class Collection:
    def __init__(self, ops: qos_ops.QoSOperations, max_limit: int) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        rows = self.ops.list(base.ctxt(req), **kwargs) \
            if kwargs["limit"] else []
        resp.media = {"qos_specs": [views.specs(row) for row in rows],
                      **base.next_links(req, "qos_specs", rows,
                                        kwargs["limit"])}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        specs = dict(base.body(req, schemas.CREATE)["qos_specs"])
        name = specs.pop("name")
        resp.media = _show(req, self.ops.create(base.ctxt(req), name, specs))


class Item:
    def __init__(self, ops: qos_ops.QoSOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               qos_id: str) -> None:
        resp.media = _show(req, self.ops.get(base.ctxt(req), qos_id))

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               qos_id: str) -> None:
        specs = base.body(req, schemas.SET)["qos_specs"]
        resp.media = {"qos_specs": self.ops.set_keys(base.ctxt(req), qos_id,
                                                     specs)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  qos_id: str) -> None:
        force = validation.parse_bool_param(
            "force", req.params.get("force", "False"))
        self.ops.delete(base.ctxt(req), qos_id, force)
        base.accepted(resp)


class DeleteKeys:
    def __init__(self, ops: qos_ops.QoSOperations) -> None:
        self.ops = ops

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               qos_id: str) -> None:
        keys = base.body(req, schemas.UNSET)["keys"]
        self.ops.unset_keys(base.ctxt(req), qos_id, keys)
        base.accepted(resp)


class Associations:
    def __init__(self, ops: qos_ops.QoSOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               qos_id: str) -> None:
        resp.media = views.associations(self.ops.associations(
            base.ctxt(req), qos_id))


class Association:
    """``GET .../associate``, ``.../disassociate`` (``?vol_type_id=``) and
    ``.../disassociate_all``: Cinder changes associations with GETs."""

    def __init__(self, ops: qos_ops.QoSOperations, action: str) -> None:
        self.ops = ops
        self.action = action

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               qos_id: str) -> None:
        ctxt, type_id = base.ctxt(req), req.get_param("vol_type_id")
        if self.action == "associate":
            self.ops.associate(ctxt, qos_id, type_id)
        else:
            self.ops.disassociate(ctxt, qos_id, type_id,
                                  every=self.action == "disassociate_all")
        base.accepted(resp)
