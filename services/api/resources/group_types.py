"""``/group_types`` (3.11+), one type, and its ``group_specs``."""

import falcon

from common import exception
from common.db import models
from services.api import microversion as mv
from services.api import validation
from services.api.operations import group_types as gtype_ops
from services.api.resources import base
from services.api.resources import types
from services.api.schemas import groups as schemas
from services.api.views import groups as views

SORT_MAP = {"created_at": "created_at", "id": "id", "name": "name",
            "description": "description", "is_public": "is_public"}


def _type(req: falcon.Request, row: models.GroupType) -> dict:
    return {"group_type": views.group_type(row, base.ctxt(req))}


class Collection:
    def __init__(self, ops: gtype_ops.GroupTypeOperations,
                 max_limit: int) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.GROUP_TYPE)
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        rows = self.ops.list(base.ctxt(req), types.is_public_filter(req),
                             **kwargs) if kwargs["limit"] else []
        resp.media = {"group_types": [views.group_type(row, base.ctxt(req))
                                      for row in rows],
                      **base.next_links(req, "group_types", rows,
                                        kwargs["limit"])}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.TYPE_CREATE)["group_type"]
        row = self.ops.create(
            base.ctxt(req), data["name"], data.get("description"),
            validation.parse_bool_param("is_public",
                                        data.get("is_public", True)),
            data.get("group_specs"))
        resp.status = falcon.HTTP_202
        resp.media = _type(req, row)


class Item:
    def __init__(self, ops: gtype_ops.GroupTypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               group_type_id: str) -> None:
        base.require(req, mv.GROUP_TYPE)
        if group_type_id == "default":
            # NOTE(ashlar): no default group type is configured, as in a
            # Cinder without ``default_group_type``.
            raise exception.GroupTypeNotFound(group_type_id="default")
        resp.media = _type(req, self.ops.get(base.ctxt(req), group_type_id))

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               group_type_id: str) -> None:
        data = base.body(req, schemas.TYPE_UPDATE)["group_type"]
        values = {key: value for key, value in data.items()
                  if value is not None or key == "description"}
        if "is_public" in values:
            values["is_public"] = validation.parse_bool_param(
                "is_public", values["is_public"])
        if not any(data.get(key) is not None for key in data):
            raise exception.InvalidInput(
                reason="Specify group type name, description or a "
                       "combination thereof.")
        resp.media = _type(req, self.ops.update(base.ctxt(req), group_type_id,
                                                values))

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  group_type_id: str) -> None:
        base.require(req, mv.GROUP_TYPE)
        self.ops.delete(base.ctxt(req), group_type_id)
        resp.status = falcon.HTTP_202


class Specs:
    def __init__(self, ops: gtype_ops.GroupTypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               group_type_id: str) -> None:
        base.require(req, mv.GROUP_TYPE)
        resp.media = {"group_specs": self.ops.get_specs(
            base.ctxt(req), group_type_id, "group:group_types_specs:get_all")}

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                group_type_id: str) -> None:
        specs = base.body(req, schemas.SPECS_CREATE)["group_specs"]
        resp.status = falcon.HTTP_202
        resp.media = {"group_specs": self.ops.set_specs(
            base.ctxt(req), group_type_id, specs,
            "group:group_types_specs:create")}


class Spec:
    def __init__(self, ops: gtype_ops.GroupTypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               group_type_id: str, key: str) -> None:
        base.require(req, mv.GROUP_TYPE)
        specs = self.ops.get_specs(base.ctxt(req), group_type_id,
                                   "group:group_types_specs:get")
        if key not in specs:
            raise exception.GroupTypeSpecsNotFound(
                group_type_id=group_type_id, group_specs_key=key)
        resp.media = {key: specs[key]}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               group_type_id: str, key: str) -> None:
        data = base.body(req, schemas.SPEC_UPDATE)
        if key not in data:
            raise exception.Invalid("Request body and URI mismatch")
        resp.media = self.ops.set_specs(base.ctxt(req), group_type_id, data,
                                        "group:group_types_specs:update")

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  group_type_id: str, key: str) -> None:
        base.require(req, mv.GROUP_TYPE)
        self.ops.delete_spec(base.ctxt(req), group_type_id, key)
        resp.status = falcon.HTTP_202
