"""/os-availability-zone: the zones volume services run in."""

import falcon

from services.api.operations import usage as usage_ops
from services.api.resources import base


class AvailabilityZones:
    def __init__(self, ops: usage_ops.UsageOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"availabilityZoneInfo": [
            {"zoneName": zone, "zoneState": {"available": available}}
            for zone, available in self.ops.availability_zones(base.ctxt(req))]}
