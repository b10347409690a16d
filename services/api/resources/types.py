"""/types, /types/{id}, /types/{id}/extra_specs[/{key}], and the access to
private types (/types/{id}/os-volume-type-access, /types/{id}/action)."""

import falcon
from oslo_config import cfg

from common import exception
from services.api import validation
from services.api.operations import types as type_ops
from services.api.resources import base
from services.api.schemas import types as schemas
from services.api.views import types as views


def is_public_filter(req: falcon.Request) -> bool | None:
    """Cinder's ``is_public``: absent -> public, None -> all, else a bool."""
    raw = req.get_param("is_public")
    if raw is None:
        return True
    if raw.lower() == "none":
        return None
    try:
        return validation.parse_bool_param("is_public", raw)
    except exception.ValidationError:
        raise exception.Invalid("Invalid is_public filter [%s]" % raw)


class Collection:
    def __init__(self, ops: type_ops.TypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctxt = base.ctxt(req)
        rows = self.ops.list(ctxt, is_public_filter(req),
                             base.filters(req, {"name": "name",
                                                "description": "description"}))
        resp.media = {"volume_types": [views.show(r, ctxt) for r in rows]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.CREATE)["volume_type"]
        is_public = validation.parse_bool_param(
            "os-volume-type-access:is_public",
            data.get("os-volume-type-access:is_public", True))
        row = self.ops.create(base.ctxt(req), data["name"],
                              data.get("description"), is_public,
                              data.get("extra_specs"))
        resp.media = {"volume_type": views.written(row, base.ctxt(req), True)}


class Item:
    def __init__(self, ops: type_ops.TypeOperations,
                 conf: cfg.ConfigOpts) -> None:
        self.ops = ops
        self.conf = conf

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str) -> None:
        ctxt = base.ctxt(req)
        if type_id == "default":
            row = self.ops.default(ctxt, self.conf.default_volume_type)
            resp.media = {"volume_type": views.show(row, ctxt, False)}
            return
        resp.media = {"volume_type": views.show(self.ops.get(ctxt, type_id),
                                                ctxt)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               type_id: str) -> None:
        data = base.body(req, schemas.UPDATE)["volume_type"]
        values = {k: v for k, v in data.items() if v is not None
                  or k == "description"}
        if "is_public" in values:
            values["is_public"] = validation.parse_bool_param(
                "is_public", values["is_public"])
        if not any(data.get(k) is not None for k in data):
            raise exception.InvalidInput(
                reason="Specify volume type name, description, is_public or "
                       "a combination thereof.")
        row = self.ops.update(base.ctxt(req), type_id, values)
        resp.media = {"volume_type": views.written(row, base.ctxt(req),
                                                   False)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  type_id: str) -> None:
        self.ops.delete(base.ctxt(req), type_id, self.conf.default_volume_type)
        resp.status = falcon.HTTP_202


class ExtraSpecs:
    def __init__(self, ops: type_ops.TypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str) -> None:
        resp.media = {"extra_specs": self.ops.get_specs(base.ctxt(req),
                                                        type_id)}

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                type_id: str) -> None:
        specs = base.body(req, schemas.EXTRA_SPECS_CREATE)["extra_specs"]
        resp.media = {"extra_specs": self.ops.set_specs(base.ctxt(req),
                                                        type_id, specs)}


class ExtraSpec:
    def __init__(self, ops: type_ops.TypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str, key: str) -> None:
        specs = self.ops.get_specs(base.ctxt(req), type_id,
                                   "volume_extension:types_extra_specs:show")
        if key not in specs:
            raise exception.VolumeTypeExtraSpecsNotFound(
                volume_type_id=type_id, extra_specs_key=key)
        resp.media = {key: specs[key]}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               type_id: str, key: str) -> None:
        data = base.body(req, schemas.EXTRA_SPEC_UPDATE)
        if key not in data:
            raise exception.Invalid("Request body and URI mismatch")
        resp.media = self.ops.set_specs(
            base.ctxt(req), type_id, data,
            "volume_extension:types_extra_specs:update")

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  type_id: str, key: str) -> None:
        self.ops.delete_spec(base.ctxt(req), type_id, key)
        resp.status = falcon.HTTP_202


class Access:
    """``GET /types/{id}/os-volume-type-access``."""

    def __init__(self, ops: type_ops.TypeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str) -> None:
        projects = self.ops.access_list(base.ctxt(req), type_id)
        resp.media = views.access(type_id, projects)


class Action:
    """``POST /types/{id}/action``: addProjectAccess, removeProjectAccess."""

    def __init__(self, ops: type_ops.TypeOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                type_id: str) -> None:
        name, value = base.action_body(req, schemas.ACTIONS)
        change = (self.ops.add_access if name == "addProjectAccess"
                  else self.ops.remove_access)
        change(base.ctxt(req), type_id, value["project"])
        resp.status = falcon.HTTP_202
        resp.content_type = falcon.MEDIA_HTML
        resp.data = b""
