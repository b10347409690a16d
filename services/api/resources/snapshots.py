"""/snapshots, /snapshots/detail, /snapshots/{id} and its admin actions;
``missing_key`` for its metadata (``resources.metadata``)."""

import falcon

from common import exception
from services.api import microversion as mv
from services.api import validation
from services.api.operations import manage as manage_ops
from services.api.operations import snapshots as snapshot_ops
from services.api.resources import base
from services.api.schemas import snapshots as schemas
from services.api.views import snapshots as views

SORT_MAP = {"created_at": "created_at", "updated_at": "updated_at",
            "id": "id", "name": "display_name",
            "display_name": "display_name", "status": "status",
            "size": "volume_size", "volume_id": "volume_id"}
FILTER_MAP = {"name": "display_name", "display_name": "display_name",
              "status": "status", "volume_id": "volume_id"}
_NAME_KEYS = (("name", "display_name"), ("display_name", "display_name"),
              ("description", "display_description"),
              ("display_description", "display_description"))


def _names(data: dict) -> dict:
    values: dict = {}
    for key, column in _NAME_KEYS:
        if key in data and column not in values:
            values[column] = data[key]
    return values


class _Lister(base.Lister):
    key = "snapshots"
    sort_map = SORT_MAP
    filter_map = FILTER_MAP


class Collection(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._page(req)
        version = base.version(req)
        resp.media = {"snapshots": [views.summary(row, version)
                                    for row in rows], **extras}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.CREATE)["snapshot"]
        names = _names(data)
        force = validation.parse_bool_param("force", data.get("force", False))
        if base.version(req) >= mv.SNAPSHOT_IN_USE:
            # From 3.66 an in-use volume needs no force, and false is wrong.
            if "force" in data and not force:
                raise exception.InvalidInput(
                    reason="Invalid value 'False' for force.")
            force = True
        row = self.ops.create(
            base.ctxt(req), data["volume_id"], force=force,
            name=names.get("display_name"),
            description=names.get("display_description"),
            metadata=data.get("metadata"))
        resp.status = falcon.HTTP_202
        resp.media = {"snapshot": views.summary(row, base.version(req))}


class Detail(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._page(req)
        ctxt, version = base.ctxt(req), base.version(req)
        resp.media = {"snapshots": [views.detail(row, ctxt, version)
                                    for row in rows], **extras}


class Item:
    def __init__(self, ops: snapshot_ops.SnapshotOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               snapshot_id: str) -> None:
        row = self.ops.get(base.ctxt(req), snapshot_id)
        resp.media = {"snapshot": views.detail(row, base.ctxt(req),
                                               base.version(req))}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               snapshot_id: str) -> None:
        data = base.body(req, schemas.UPDATE)["snapshot"]
        row = self.ops.update(base.ctxt(req), snapshot_id, _names(data))
        resp.media = {"snapshot": views.detail(row, base.ctxt(req),
                                               base.version(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  snapshot_id: str) -> None:
        self.ops.delete(base.ctxt(req), snapshot_id)
        resp.status = falcon.HTTP_202


class Action:
    def __init__(self, ops: snapshot_ops.SnapshotOperations,
                 manage: manage_ops.ManageOperations) -> None:
        self.ops = ops
        self.manage = manage

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                snapshot_id: str) -> None:
        name, value = base.action_body(req, schemas.ACTIONS)
        ctxt = base.ctxt(req)
        if name == "os-unmanage":
            self.manage.unmanage_snapshot(ctxt, snapshot_id)
        elif name == "os-reset_status":
            self.ops.reset_status(ctxt, snapshot_id, value["status"].lower())
        elif name == "os-update_snapshot_status":
            self.ops.update_status(ctxt, snapshot_id, value["status"],
                                   value.get("progress"))
        else:
            self.ops.delete(ctxt, snapshot_id, force=True)
        resp.status = falcon.HTTP_202
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""


def missing_key(snapshot_id: str, key: str) -> exception.AshlarException:
    """The 404 of an unknown key of a snapshot's metadata."""
    return exception.SnapshotMetadataNotFound(snapshot_id=snapshot_id,
                                              metadata_key=key)
