"""``/os-volume-transfer`` and (3.55+) ``/volume-transfers``: offer a
volume to another project, list, show and cancel offers, accept one."""

import falcon

from common.context import RequestContext
from common.db import models
from services.api import microversion as mv
from services.api import validation
from services.api.operations import transfers as transfer_ops
from services.api.resources import base
from services.api.schemas import transfers as schemas
from services.api.views import transfers as views

SORT_MAP = {"created_at": "created_at", "id": "id",
            "name": "display_name", "volume_id": "volume_id"}


class _Resource:
    """A transfer resource at ``/os-volume-transfer`` (``since`` None) or
    at ``/volume-transfers`` (``since`` 3.55, ``TRANSFER_WITH_SNAPSHOTS``)."""

    def __init__(self, ops: transfer_ops.TransferOperations,
                 max_limit: int = 0,
                 since: mv.APIVersion | None = None) -> None:
        self.ops = ops
        self.since = since
        self.max_limit = max_limit

    def _ctxt(self, req: falcon.Request) -> RequestContext:
        if self.since is not None:
            base.require(req, self.since)
        return base.ctxt(req)

    def _list(self, req: falcon.Request, resp: falcon.Response,
              detailed: bool) -> None:
        ctxt = self._ctxt(req)
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        rows = self.ops.list(ctxt, all_tenants=base.flag(req, "all_tenants"),
                             **kwargs) if kwargs["limit"] else []
        resp.media = {"transfers": [
            _detail(req, row) if detailed else
            views.summary(row, base.base_url(req), base.url_project(req))
            for row in rows],
            **base.next_links(req, "transfers", rows, kwargs["limit"])}


def _detail(req: falcon.Request, row: models.Transfer) -> dict:
    return views.detail(row, base.base_url(req), base.url_project(req),
                        base.version(req))


class Collection(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._list(req, resp, detailed=False)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctxt = self._ctxt(req)
        data = base.body(req, schemas.CREATE if self.since is None
                         else schemas.CREATE_WITH_SNAPSHOTS)["transfer"]
        row, auth_key = self.ops.create(
            ctxt, data["volume_id"], data.get("name"),
            validation.parse_bool_param(
                "no_snapshots", data.get("no_snapshots", False)))
        resp.status = falcon.HTTP_202
        resp.media = {"transfer": dict(_detail(req, row), auth_key=auth_key)}


class Detail(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._list(req, resp, detailed=True)


class Item(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response,
               transfer_id: str) -> None:
        row = self.ops.get(self._ctxt(req), transfer_id)
        resp.media = {"transfer": _detail(req, row)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  transfer_id: str) -> None:
        self.ops.delete(self._ctxt(req), transfer_id)
        resp.status = falcon.HTTP_202
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""


class Accept(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response,
                transfer_id: str) -> None:
        ctxt = self._ctxt(req)
        auth_key = base.body(req, schemas.ACCEPT)["accept"]["auth_key"]
        row = self.ops.accept(ctxt, transfer_id, str(auth_key))
        resp.status = falcon.HTTP_202
        resp.media = {"transfer": views.summary(row, base.base_url(req),
                                                base.url_project(req))}
