"""Manage existing storage: ``/os-volume-manage`` and (3.8+)
``/manageable_volumes`` (POST: adopt; GET, ``/detail``: what a backend
could adopt), and the same for snapshots at ``/os-snapshot-manage`` and
(3.8+) ``/manageable_snapshots``.  ``os-unmanage`` is an action of
``volume_actions`` and ``snapshots``.

The listings need ``host`` (or, from 3.17, exactly one of ``host`` and
``cluster``), and sort by ``reference`` or ``size`` (default
``reference``, descending), with ``marker`` (a JSON ``reference``),
``limit`` and ``offset`` as Cinder's.
"""

from typing import Any

import falcon

from common import exception
from services.api import microversion as mv
from services.api import validation
from services.api.operations import manage as manage_ops
from services.api.resources import base
from services.api.schemas import manage as schemas
from services.api.views import snapshots as snapshot_views
from services.api.views import volumes as volume_views

#: The listing's views: the summary's keys, and the detail's.
_SUMMARY = ("reference", "size", "safe_to_manage")
_DETAIL = _SUMMARY + ("reason_not_safe", "cinder_id", "extra_info")


class _Resource:
    """At ``/os-*-manage`` (``since`` None) or ``/manageable_*`` (3.8)."""

    #: Volumes (False) or snapshots (True).
    SNAPSHOT = False

    def __init__(self, ops: manage_ops.ManageOperations, max_limit: int,
                 detail: bool = False,
                 since: mv.APIVersion | None = None) -> None:
        self.ops = ops
        self.max_limit = max_limit
        self.detail = detail
        self.since = since

    def _require(self, req: falcon.Request) -> None:
        if self.since is not None:
            base.require(req, self.since)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._require(req)
        host, cluster = _host_or_cluster(req, req.params,
                                         mv.MANAGE_EXISTING_CLUSTER)
        entries = self.ops.manageable(
            base.ctxt(req), host, cluster, self.SNAPSHOT,
            marker=validation.parse_marker(req.params),
            limit=validation.parse_limit(req.params, self.max_limit),
            offset=validation.parse_offset(req.params),
            sort=_sort(req))
        keys: tuple[str, ...] = _DETAIL if self.detail else _SUMMARY
        if self.SNAPSHOT:
            keys += ("source_reference",)
        key = "manageable-snapshots" if self.SNAPSHOT else "manageable-volumes"
        resp.media = {key: [{name: entry.get(name) for name in keys}
                            for entry in entries]}


class VolumeList(_Resource):
    """``GET`` only (``/detail``)."""


class Volumes(VolumeList):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._require(req)
        data = base.body(req, schemas.MANAGE_VOLUME)["volume"]
        host, cluster = _host_or_cluster(req, data, mv.VOLUME_MIGRATE_CLUSTER)
        ctxt = base.ctxt(req)
        row = self.ops.manage_volume(
            ctxt, host, cluster, data["ref"],
            name=_stripped(data.get("name")),
            description=_stripped(data.get("description")),
            volume_type=data.get("volume_type"),
            availability_zone=data.get("availability_zone"),
            bootable=validation.parse_bool_param(
                "bootable", data.get("bootable") or False),
            metadata=data.get("metadata"))
        resp.status = falcon.HTTP_202
        resp.media = {"volume": volume_views.detail(
            row, ctxt, base.version(req), base.base_url(req),
            base.url_project(req), with_os_attrs=False)}


class SnapshotList(_Resource):
    """``GET`` only (``/detail``)."""

    SNAPSHOT = True


class Snapshots(SnapshotList):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._require(req)
        data = base.body(req, schemas.MANAGE_SNAPSHOT)["snapshot"]
        ctxt = base.ctxt(req)
        row = self.ops.manage_snapshot(
            ctxt, data["volume_id"], data["ref"], name=data.get("name"),
            description=data.get("description"),
            metadata=data.get("metadata"))
        resp.status = falcon.HTTP_202
        resp.media = {"snapshot": snapshot_views.detail(
            row, ctxt, base.version(req))}


def _host_or_cluster(req: falcon.Request, params: Any,
                     cluster_since: mv.APIVersion
                     ) -> tuple[str | None, str | None]:
    """Cinder's ``get_cluster_host``: ``host``, or from ``cluster_since``
    exactly one of ``host`` and ``cluster``.

    :raises InvalidInput: neither, or (from ``cluster_since``) both.
    """
    host = params.get("host")
    cluster = None
    message = "Host field is missing."
    if base.version(req) >= cluster_since:
        cluster = params.get("cluster")
        message = "One and only one of cluster and host must be set."
    if bool(host) == bool(cluster):
        raise exception.InvalidInput(reason=message)
    return host, cluster


def _sort(req: falcon.Request) -> list[tuple[str, str]]:
    """The listing's sort: ``reference`` or ``size``, Cinder's words for
    anything else."""
    try:
        return validation.parse_sort(req.params, manage_ops.SORT_KEYS,
                                     default_keys=("reference",))
    except exception.InvalidInput:
        raise exception.InvalidInput(
            reason="Invalid sort keys or dirs passed: %s" % (
                req.params.get("sort") or req.params.get("sort_key")
                or req.params.get("sort_dir")))


def _stripped(text: str | None) -> str | None:
    return text.strip() if text else None
