"""/os-quota-sets/{project_id}[/defaults], /os-quota-class-sets/{class}."""

import falcon
from oslo_utils import strutils

from services.api.operations import quotas as quota_ops
from services.api.resources import base
from services.api.schemas import quotas as schemas


class QuotaSet:
    def __init__(self, ops: quota_ops.QuotaOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               project_id: str) -> None:
        usage = strutils.bool_from_string(req.params.get("usage", False))
        values = self.ops.show(base.ctxt(req), project_id, usage)
        resp.media = {"quota_set": dict(values, id=project_id)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               project_id: str) -> None:
        values = base.body(req, schemas.UPDATE)["quota_set"]
        resp.media = {"quota_set": self.ops.update(base.ctxt(req),
                                                   project_id, values)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  project_id: str) -> None:
        self.ops.delete(base.ctxt(req), project_id)
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""


class QuotaDefaults:
    def __init__(self, ops: quota_ops.QuotaOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               project_id: str) -> None:
        values = self.ops.defaults(base.ctxt(req), project_id)
        resp.media = {"quota_set": dict(values, id=project_id)}


class QuotaClassSet:
    def __init__(self, ops: quota_ops.QuotaOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               class_name: str) -> None:
        values = self.ops.class_show(base.ctxt(req), class_name)
        resp.media = {"quota_class_set": dict(values, id=class_name)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               class_name: str) -> None:
        values = base.body(req, schemas.CLASS_UPDATE)["quota_class_set"]
        resp.media = {"quota_class_set": self.ops.class_update(
            base.ctxt(req), class_name, values)}
