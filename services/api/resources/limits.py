"""/limits and /volumes/summary: what a project uses."""

import falcon

from services.api import microversion as mv
from services.api.operations import usage as usage_ops
from services.api.resources import base


class Limits:
    def __init__(self, ops: usage_ops.UsageOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        project_id = None
        if base.version(req) >= mv.LIMITS_ADMIN_FILTER:
            # An administrator may ask for another project's limits.
            project_id = req.get_param("project_id")
            # NOTE(ashlar): openstacksdk sends the literal "None" when no
            # project is given; Cinder would then report a project named
            # "None".  Read it as "my own project".
            if project_id in ("", "None"):
                project_id = None
        resp.media = {"limits": {
            "rate": [],
            "absolute": self.ops.absolute(base.ctxt(req), project_id)}}


class VolumeSummary:
    def __init__(self, ops: usage_ops.UsageOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base.require(req, mv.VOLUME_SUMMARY)
        count, size, metadata = self.ops.volume_summary(
            base.ctxt(req), all_tenants=base.flag(req, "all_tenants"))
        summary: dict = {"total_count": count, "total_size": size}
        if base.version(req) >= mv.VOLUME_SUMMARY_METADATA:
            summary["metadata"] = metadata
        resp.media = {"volume-summary": summary}
