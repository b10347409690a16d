"""``/groups`` (3.13+) and ``/group_snapshots`` (3.14+): lists, one item,
and their actions."""

import falcon

from services.api import microversion as mv
from services.api import validation
from services.api.operations import group_snapshots as gsnap_ops
from services.api.operations import groups as group_ops
from services.api.resources import base
from services.api.schemas import groups as schemas
from services.api.views import groups as views

SORT_MAP = {"created_at": "created_at", "id": "id", "name": "name",
            "status": "status"}
FILTER_MAP = {"name": "name", "status": "status"}


def _list_kwargs(req: falcon.Request, max_limit: int) -> dict:
    return {"all_tenants": base.flag(req, "all_tenants"),
            "filters": base.filters(req, FILTER_MAP),
            **base.list_params(req, max_limit, SORT_MAP)}


class GroupList:
    """``GET /groups`` (``detail``: the full bodies)."""

    def __init__(self, ops: group_ops.GroupOperations, max_limit: int,
                 detail: bool = False) -> None:
        self.ops = ops
        self.max_limit = max_limit
        self.detail = detail

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.GROUP_VOLUME)
        ctxt, kwargs = base.ctxt(req), _list_kwargs(req, self.max_limit)
        rows = self.ops.list(ctxt, **kwargs) if kwargs["limit"] else []
        resp.media = {"groups": [
            views.group(row, ctxt, base.version(req)) if self.detail
            else views.group_summary(row) for row in rows],
            **base.next_links(req, "group", rows, kwargs["limit"])}


class Groups(GroupList):
    """``GET /groups`` and ``POST /groups``."""

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.CREATE)["group"]
        row = self.ops.create(base.ctxt(req), data.get("name"),
                              data.get("description"), data["group_type"],
                              data["volume_types"],
                              data.get("availability_zone"))
        resp.status = falcon.HTTP_202
        resp.media = {"group": views.group_summary(row)}


class FromSource:
    """``POST /groups/action``: ``create-from-src``."""

    def __init__(self, ops: group_ops.GroupOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        _name, data = base.action_body(req, schemas.FROM_SOURCE)
        row = self.ops.create_from_source(
            base.ctxt(req), data.get("name"), data.get("description"),
            data.get("group_snapshot_id"), data.get("source_group_id"))
        resp.status = falcon.HTTP_202
        resp.media = {"group": views.group_summary(row)}


class Group:
    def __init__(self, ops: group_ops.GroupOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               group_id: str) -> None:
        base.require(req, mv.GROUP_VOLUME)
        ctxt = base.ctxt(req)
        row = self.ops.get(ctxt, group_id)
        volume_ids = ([vol.id for vol in self.ops.volumes_of(ctxt, row.id)]
                      if base.flag(req, "list_volume") else None)
        resp.media = {"group": views.group(row, ctxt, base.version(req),
                                           volume_ids)}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               group_id: str) -> None:
        data = base.body(req, schemas.UPDATE)["group"]
        self.ops.update(base.ctxt(req), group_id, data.get("name"),
                        data.get("description"), data.get("add_volumes"),
                        data.get("remove_volumes"))
        base.accepted(resp)


class GroupAction:
    """``POST /groups/{id}/action``: ``delete``, ``reset_status``."""

    def __init__(self, ops: group_ops.GroupOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                group_id: str) -> None:
        name, value = base.action_body(req, schemas.ACTIONS)
        if name == "delete":
            self.ops.delete(base.ctxt(req), group_id,
                            validation.parse_bool_param(
                                "delete-volumes",
                                value.get("delete-volumes", False)))
        else:
            self.ops.reset_status(base.ctxt(req), group_id, value["status"])
        base.accepted(resp)


class GroupSnapshotList:
    """``GET /group_snapshots`` (``detail``: the full bodies)."""

    def __init__(self, ops: gsnap_ops.GroupSnapshotOperations,
                 max_limit: int, detail: bool = False) -> None:
        self.ops = ops
        self.max_limit = max_limit
        self.detail = detail

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.GROUP_SNAPSHOTS)
        ctxt, kwargs = base.ctxt(req), _list_kwargs(req, self.max_limit)
        rows = self.ops.list(ctxt, **kwargs) if kwargs["limit"] else []
        resp.media = {"group_snapshots": [
            views.group_snapshot(row, ctxt, base.version(req)) if self.detail
            else views.group_snapshot_summary(row) for row in rows],
            **base.next_links(req, "group_snapshot", rows, kwargs["limit"])}


class GroupSnapshots(GroupSnapshotList):
    """``GET /group_snapshots`` and ``POST /group_snapshots``."""

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.SNAPSHOT_CREATE)["group_snapshot"]
        row = self.ops.create(base.ctxt(req), data["group_id"],
                              data.get("name"), data.get("description"))
        resp.status = falcon.HTTP_202
        resp.media = {"group_snapshot": views.group_snapshot_summary(row)}


class GroupSnapshot:
    def __init__(self, ops: gsnap_ops.GroupSnapshotOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               group_snapshot_id: str) -> None:
        base.require(req, mv.GROUP_SNAPSHOTS)
        ctxt = base.ctxt(req)
        resp.media = {"group_snapshot": views.group_snapshot(
            self.ops.get(ctxt, group_snapshot_id), ctxt, base.version(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  group_snapshot_id: str) -> None:
        base.require(req, mv.GROUP_SNAPSHOTS)
        self.ops.delete(base.ctxt(req), group_snapshot_id)
        base.accepted(resp)


class GroupSnapshotAction:
    """``POST /group_snapshots/{id}/action``: ``reset_status``."""

    def __init__(self, ops: gsnap_ops.GroupSnapshotOperations) -> None:
        self.ops = ops

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                group_snapshot_id: str) -> None:
        _name, value = base.action_body(req, schemas.SNAPSHOT_ACTIONS)
        self.ops.reset_status(base.ctxt(req), group_snapshot_id,
                              value["status"])
        base.accepted(resp)
