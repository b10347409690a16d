"""/attachments (3.27+): create, list, detail, show, update, delete, action."""

from collections.abc import Sequence

import falcon

from common.db.api import rows
from services.api import microversion as mv
from services.api.operations import attachments as attachment_ops
from services.api.operations import fencing as fencing_ops
from services.api.resources import base
from services.api.schemas import attachments as schemas
from services.api.views import attachments as views

SORT_MAP = {"created_at": "created_at", "updated_at": "updated_at",
            "id": "id"}
#: API filter -> column; Cinder's ``status`` matches no column (an empty
#: list), Ashlar maps it to ``attach_status``.
FILTER_MAP = {"volume_id": "volume_id", "status": "attach_status",
              "attach_status": "attach_status", "instance_id": "instance_uuid",
              "instance_uuid": "instance_uuid"}


class _Base:
    def __init__(self, ops: attachment_ops.AttachmentOperations,
                 max_limit: int = 1000) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def _list(self, req: falcon.Request) -> Sequence[rows.AttachmentRow]:
        base.require(req, mv.NEW_ATTACH)
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        # NOTE(ashlar): for attachments the presence of all_tenants is what
        # counts (openstacksdk always sends all_tenants=False).
        return self.ops.list(base.ctxt(req),
                             all_tenants="all_tenants" in req.params,
                             filters=base.filters(req, FILTER_MAP), **kwargs)


class Collection(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"attachments": [views.summary(row)
                                      for row in self._list(req)]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.NEW_ATTACH)
        data = base.body(req, schemas.CREATE)["attachment"]
        row = self.ops.create(base.ctxt(req), data["volume_uuid"],
                              instance_uuid=data.get("instance_uuid"),
                              connector=data.get("connector"),
                              mode=data.get("mode"))
        resp.media = {"attachment": views.detail(row)}


class Detail(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"attachments": [views.detail(row)
                                      for row in self._list(req)]}


class Item(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response,
               attachment_id: str) -> None:
        base.require(req, mv.NEW_ATTACH)
        row, shared = self.ops.get(base.ctxt(req), attachment_id)
        resp.media = {"attachment": views.show(row, shared)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               attachment_id: str) -> None:
        base.require(req, mv.NEW_ATTACH)
        data = base.body(req, schemas.UPDATE)["attachment"]
        row = self.ops.update(base.ctxt(req), attachment_id,
                              data["connector"])
        resp.media = {"attachment": views.detail(row)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  attachment_id: str) -> None:
        base.require(req, mv.NEW_ATTACH)
        result = self.ops.delete(base.ctxt(req), attachment_id)
        resp.media = views.deleted(result)


class Action(_Base):
    def __init__(self, ops: attachment_ops.AttachmentOperations,
                 fencing: fencing_ops.FencingOperations) -> None:
        super().__init__(ops)
        self.fencing = fencing

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                attachment_id: str) -> None:
        base.require(req, mv.NEW_ATTACH)
        name, _value = base.action_body(req, schemas.ACTIONS)
        ctxt = base.ctxt(req)
        if name == "os-complete":
            self.ops.complete(ctxt, attachment_id)
            resp.status = falcon.HTTP_204
        elif name == "ashlar-takeover":
            row, fenced = self.fencing.takeover(ctxt, attachment_id)
            resp.media = {"attachment": views.detail(row),
                          "fenced": [views.detail(other) for other in fenced]}
        else:
            act = (self.fencing.fence if name == "ashlar-fence"
                   else self.fencing.unfence)
            resp.media = {"attachment": views.detail(act(ctxt,
                                                         attachment_id))}


class HostFence:
    """``PUT /ashlar-fencing/{fence|unfence}`` ``{"host": ...}``: every
    attachment of one compute host (the fencing extension; admin)."""

    def __init__(self, fencing: fencing_ops.FencingOperations) -> None:
        self.fencing = fencing

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               action: str) -> None:
        if action not in ("fence", "unfence"):
            raise falcon.HTTPNotFound()
        host = base.body(req, schemas.HOST_FENCE)["host"]
        act = (self.fencing.fence_host if action == "fence"
               else self.fencing.unfence_host)
        rows = act(base.ctxt(req), host)
        resp.media = {"host": host,
                      "attachments": [views.detail(row) for row in rows]}
