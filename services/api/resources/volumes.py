"""/volumes, /volumes/detail, /volumes/{id}."""

import falcon

from common import exception
from services.api import microversion as mv
from services.api import validation
from services.api.operations import sources
from services.api.operations import volumes as volume_ops
from services.api.resources import base
from services.api.schemas import volumes as schemas
from services.api.views import volumes as views

SORT_MAP = {"created_at": "created_at", "updated_at": "updated_at",
            "id": "id", "name": "display_name",
            "display_name": "display_name", "size": "size",
            "status": "status", "availability_zone": "availability_zone"}
FILTER_MAP = {"name": "display_name", "status": "status", "size": "size",
              "availability_zone": "availability_zone",
              "bootable": "bootable", "migration_status": "migration_status",
              "group_id": "group_id"}


#: Create keys whose sources Ashlar cannot copy from yet: a clear 400
#: rather than a blank volume.
_NOT_SUPPORTED = (("imageRef", "Creating a volume from an image (imageRef)"),
                  ("image_id", "Creating a volume from an image (image_id)"),
                  ("backup_id", "Creating a volume from a backup (backup_id)"),
                  ("consistencygroup_id",
                   "Creating a volume in a consistency group"))

#: Filters on what no Ashlar volume has (image metadata), from the
#: version Cinder reads them: any value matches nothing.
_NEVER_MATCH = (("glance_metadata", mv.VOLUME_LIST_GLANCE_METADATA),)


def _matches_nothing(req: falcon.Request) -> bool:
    version = base.version(req)
    if (version >= mv.USE_QUOTA
            and not base.flag(req, "consumes_quota", True)):
        return True  # every Ashlar volume consumes quota
    return any(name in req.params and version >= first
               for name, first in _NEVER_MATCH)


class _Lister:
    def __init__(self, ops: volume_ops.VolumeOperations, max_limit: int) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def _list(self, req: falcon.Request) -> tuple[list, dict]:
        """Return a page of rows and the extra keys of the list body.

        The extras are ``volumes_links`` (when the page is full)
        and, from 3.45 with ``with_count=true``, ``count``: the total
        matching volumes, not the page size.
        """
        kwargs = base.list_params(req, self.max_limit, SORT_MAP)
        all_tenants = base.flag(req, "all_tenants")
        tenant = req.get_param("project_id")
        filters = base.filters(req, FILTER_MAP, bools=("bootable",),
                               ints=("size",))
        with_count = (base.version(req) >= mv.SUPPORT_COUNT_INFO
                      and base.flag(req, "with_count"))
        if _matches_nothing(req):
            return [], ({"count": 0} if with_count else {})
        limit = kwargs["limit"]
        rows = self.ops.list(base.ctxt(req), all_tenants, tenant,
                             filters=filters, **kwargs) if limit else []
        extras = base.next_links(req, "volumes", rows, limit)
        if with_count:
            extras["count"] = self.ops.count(base.ctxt(req), all_tenants,
                                             tenant, filters=filters)
        return rows, extras


class Collection(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._list(req)
        resp.media = {"volumes": [
            views.summary(row, base.base_url(req), base.url_project(req))
            for row in rows], **extras}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = base.body(req, schemas.CREATE)["volume"]
        for key, what in _NOT_SUPPORTED:
            if data.get(key):
                raise exception.NotSupported(what=what)
        sources.require_size(data.get("size"), sourced=bool(
            data.get("snapshot_id") or data.get("source_volid")))
        multiattach = ("multiattach" in data and validation.parse_bool_param(
            "multiattach", data["multiattach"]))
        row = self.ops.create(
            base.ctxt(req),
            size=None if data.get("size") is None else int(data["size"]),
            name=data.get("name", data.get("display_name")),
            description=data.get("description",
                                 data.get("display_description")),
            volume_type=data.get("volume_type"),
            availability_zone=data.get("availability_zone"),
            metadata=data.get("metadata"),
            multiattach=multiattach,
            snapshot_id=data.get("snapshot_id"),
            source_volid=data.get("source_volid"),
            group=data.get("group_id"))
        resp.status = falcon.HTTP_202
        resp.media = {"volume": views.detail(
            row, base.ctxt(req), base.version(req), base.base_url(req),
            base.url_project(req), with_os_attrs=False)}


class Detail(_Lister):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        rows, extras = self._list(req)
        show = views.Detail(base.ctxt(req), base.version(req),
                            base.base_url(req), base.url_project(req)).body
        resp.media = {"volumes": [show(row) for row in rows], **extras}


class Item:
    def __init__(self, ops: volume_ops.VolumeOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               volume_id: str) -> None:
        row = self.ops.get(base.ctxt(req), volume_id, shown=True)
        resp.media = {"volume": views.detail(
            row, base.ctxt(req), base.version(req), base.base_url(req),
            base.url_project(req))}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               volume_id: str) -> None:
        data = base.body(req, schemas.UPDATE)["volume"]
        values = {}
        for key, column in (("name", "display_name"),
                            ("display_name", "display_name"),
                            ("description", "display_description"),
                            ("display_description", "display_description")):
            if key in data and column not in values:
                values[column] = data[key]
        row = self.ops.update(base.ctxt(req), volume_id, values,
                              data.get("metadata"))
        resp.media = {"volume": views.detail(
            row, base.ctxt(req), base.version(req), base.base_url(req),
            base.url_project(req), with_os_attrs=False)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  volume_id: str) -> None:
        force = (base.version(req) >= mv.VOLUME_DELETE_FORCE
                 and base.flag(req, "force"))
        self.ops.delete(base.ctxt(req), volume_id, force=force,
                        cascade=base.flag(req, "cascade"))
        resp.status = falcon.HTTP_202


def missing_key(volume_id: str, key: str) -> exception.AshlarException:
    """The 404 of an unknown key of a volume's metadata."""
    return exception.VolumeMetadataNotFound(volume_id=volume_id,
                                            metadata_key=key)
