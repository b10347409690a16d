"""/backups, /backups/detail, /backups/{id} and /backups/{id}/restore
(Cinder's ``cinder/api/contrib/backups.py``)."""

import falcon

from common import exception
from services.api import validation
from services.api.operations import backups as backup_ops
from services.api.resources import base
from services.api.schemas import backups as schemas
from services.api.views import backups as views

SORT_MAP = {"created_at": "created_at", "updated_at": "updated_at",
            "id": "id", "name": "display_name", "status": "status",
            "size": "size", "volume_id": "volume_id"}
FILTER_MAP = {"name": "display_name", "status": "status",
              "volume_id": "volume_id"}


class _Lister(base.Lister):
    key = "backups"
    sort_map = SORT_MAP
    filter_map = FILTER_MAP


class Collection(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._page(req)
        resp.media = {"backups": [
            views.summary(row, base.base_url(req), base.url_project(req))
            for row in rows], **extras}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.CREATE)["backup"]
        if data.get("snapshot_id") is not None:
            raise exception.InvalidInput(
                reason="Backups of a snapshot are not supported yet.")
        row = self.ops.create(
            base.ctxt(req), data["volume_id"], name=data.get("name"),
            description=data.get("description"),
            container=data.get("container"),
            incremental=validation.parse_bool_param(
                "incremental", data.get("incremental", False)),
            force=validation.parse_bool_param("force",
                                              data.get("force", False)))
        resp.status = falcon.HTTP_202
        resp.media = {"backup": views.summary(row, base.base_url(req),
                                              base.url_project(req))}


class Detail(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._page(req)
        ctxt, version = base.ctxt(req), base.version(req)
        resp.media = {"backups": [
            views.detail(row, ctxt, version, base.base_url(req),
                         base.url_project(req)) for row in rows], **extras}


class Item:
    def __init__(self, ops: backup_ops.BackupOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               backup_id: str) -> None:
        ctxt = base.ctxt(req)
        resp.media = {"backup": views.detail(
            self.ops.get(ctxt, backup_id), ctxt, base.version(req),
            base.base_url(req), base.url_project(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  backup_id: str) -> None:
        self.ops.delete(base.ctxt(req), backup_id)
        resp.status = falcon.HTTP_202


class Restore:
    def __init__(self, ops: backup_ops.BackupOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                backup_id: str) -> None:
        data = base.body(req, schemas.RESTORE)["restore"] or {}
        row, volume = self.ops.restore(base.ctxt(req), backup_id,
                                       volume_id=data.get("volume_id"),
                                       name=data.get("name"))
        resp.status = falcon.HTTP_202
        resp.media = {"restore": views.restore(row, volume)}

