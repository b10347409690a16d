"""/messages and /messages/{id}: Cinder's user messages (3.3+; paging,
sorting and filters 3.5+)."""

import falcon

from common.db import models
from services.api import microversion as mv
from services.api.operations import messages as message_ops
from services.api.resources import base
from services.api.views import messages as views

SORT_MAP = {"created_at": "created_at", "id": "id", "event_id": "event_id",
            "resource_type": "resource_type",
            "resource_uuid": "resource_uuid", "request_id": "request_id",
            "message_level": "message_level", "expires_at": "expires_at",
            "guaranteed_until": "expires_at"}
#: Cinder's message filters (``resource_filters.json``).
FILTER_MAP = {"resource_uuid": "resource_uuid",
              "resource_type": "resource_type", "event_id": "event_id",
              "request_id": "request_id", "message_level": "message_level"}


def _view(req: falcon.Request, row: models.Message) -> dict:
    return views.detail(row, base.base_url(req), base.url_project(req))


class Collection:
    def __init__(self, ops: message_ops.MessageOperations,
                 max_limit: int) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.MESSAGES)
        all_tenants = base.flag(req, "all_tenants")
        if base.version(req) < mv.MESSAGES_PAGINATION:
            # Before 3.5 Cinder reads no list parameter at all.
            rows = self.ops.list(base.ctxt(req), all_tenants=all_tenants,
                                 limit=self.max_limit)
            resp.media = {"messages": [_view(req, row) for row in rows]}
            return
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        limit = kwargs["limit"]
        rows = self.ops.list(
            base.ctxt(req), all_tenants=all_tenants,
            filters=base.filters(req, FILTER_MAP),
            **kwargs) if limit else []
        resp.media = {"messages": [_view(req, row) for row in rows],
                      **base.next_links(req, "messages", rows, limit)}


class Item:
    def __init__(self, ops: message_ops.MessageOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               message_id: str) -> None:
        base.require(req, mv.MESSAGES)
        resp.media = {"message": _view(req, self.ops.get(base.ctxt(req),
                                                         message_id))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  message_id: str) -> None:
        base.require(req, mv.MESSAGES)
        self.ops.delete(base.ctxt(req), message_id)
        resp.status = falcon.HTTP_204
