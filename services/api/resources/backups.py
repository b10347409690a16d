"""/backups, /backups/detail, /backups/{id}, its restore, action and
export_record, and /backups/import_record (Cinder's
``cinder/api/contrib/backups.py``, ``cinder/api/v3/backups.py`` and the
backup admin actions)."""

import falcon

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
#: ``PUT`` body key -> column.
_UPDATABLE = (("name", "display_name"), ("description", "display_description"))


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
        row = self.ops.create(
            base.ctxt(req), data["volume_id"], name=data.get("name"),
            description=data.get("description"),
            container=data.get("container"),
            incremental=validation.parse_bool_param(
                "incremental", data.get("incremental", False)),
            force=validation.parse_bool_param("force",
                                              data.get("force", False)),
            snapshot_id=data.get("snapshot_id"),
            metadata=data.get("metadata"))
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

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               backup_id: str) -> None:
        """3.9: name and description; 3.43: metadata (replaced whole)."""
        data = base.body(req, schemas.UPDATE)["backup"] or {}
        values = {column: data[key] for key, column in _UPDATABLE
                  if key in data}
        row = self.ops.update(base.ctxt(req), backup_id, values,
                              data.get("metadata"))
        resp.media = {"backup": views.summary(row, base.base_url(req),
                                              base.url_project(req))}

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



class Action:
    """``os-reset_status`` and ``os-force_delete`` (Cinder's admin
    actions on a backup)."""

    def __init__(self, ops: backup_ops.BackupOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                backup_id: str) -> None:
        name, value = base.action_body(req, schemas.ACTIONS)
        if name == "os-reset_status":
            self.ops.reset_status(base.ctxt(req), backup_id, value["status"])
        else:
            self.ops.delete(base.ctxt(req), backup_id, force=True)
        resp.status = falcon.HTTP_202
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""


class ExportRecord:
    """``GET /backups/{id}/export_record`` (admin)."""

    def __init__(self, ops: backup_ops.BackupOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               backup_id: str) -> None:
        resp.media = {"backup-record": self.ops.export_record(
            base.ctxt(req), backup_id)}


class ImportRecord:
    """``POST /backups/import_record`` (admin): 201, the new backup's
    summary (it is ``creating`` until its service checked the record)."""

    def __init__(self, ops: backup_ops.BackupOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.IMPORT_RECORD)["backup-record"]
        row = self.ops.import_record(base.ctxt(req), data["backup_service"],
                                     data["backup_url"])
        resp.status = falcon.HTTP_201
        resp.media = {"backup": views.summary(row, base.base_url(req),
                                              base.url_project(req))}
