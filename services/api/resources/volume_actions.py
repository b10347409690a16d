"""POST /volumes/{id}/action: the volume actions Ashlar serves.

os-extend, os-retype, os-set_bootable, os-update_readonly_flag,
os-reset_status, os-force_delete, os-migrate_volume (an available
volume to a named pool, ``common.migration``), revert (3.40: to the
latest snapshot), the legacy os-reserve / os-unreserve (a status only,
as in Cinder), and the legacy os-detach / os-force_detach, which
delete one attachment and refuse to guess which one when several exist,
and os-unmanage (``operations.manage``).
os-reimage (3.68) is refused: Ashlar has no images;
os-extend_volume_completion (3.71) too: no extend waits for a compute host
(an attached volume is extended by its node, and the host sees the new
size).
"""

from typing import Any

import falcon

from common import exception
from services.api import microversion as mv
from services.api import validation
from services.api.operations import attachments as attachment_ops
from services.api.operations import manage as manage_ops
from services.api.operations import volumes as volume_ops
from services.api.resources import base
from services.api.schemas import OPTIONAL_UUID
from services.api.schemas import UUID
from services.api.schemas import envelope
from services.api.schemas import manage as manage_schemas
from services.api.schemas import unversioned
from services.api.schemas import volumes as schemas

#: NOTE(ashlar): os-migrate_volume is not in schemas/volumes.py yet; this
#: is Cinder's body (host or, from 3.16, cluster).
_MIGRATE = unversioned(envelope("os-migrate_volume", {
    "type": "object",
    "properties": {"host": {"type": ["string", "null"]},
                   "cluster": {"type": ["string", "null"]},
                   "force_host_copy": {},
                   "lock_volume": {}},
    "additionalProperties": False}))
_FORCE_DETACH = unversioned(envelope("os-force_detach", {
    "type": ["object", "null"],
    "properties": {"connector": {"type": ["string", "object", "null"]},
                   "attachment_id": OPTIONAL_UUID},
    "additionalProperties": False}))

#: ``revert`` to the latest snapshot, from 3.40.
_REVERT = ((mv.VOLUME_REVERT, envelope("revert", {
    "type": "object", "properties": {"snapshot_id": UUID},
    "required": ["snapshot_id"], "additionalProperties": False})),)
#: Cinder's os-reimage (3.68) and os-extend_volume_completion (3.71).
_REIMAGE = ((mv.SUPPORT_REIMAGE_VOLUME, envelope("os-reimage", {
    "type": "object",
    "properties": {"image_id": UUID,
                   "reimage_reserved": {"type": ["boolean", "string"]}},
    "required": ["image_id"], "additionalProperties": False})),)
_EXTEND_COMPLETION = ((mv.EXTEND_VOLUME_COMPLETION, envelope(
    "os-extend_volume_completion", {
        "type": "object",
        "properties": {"error": {"type": ["boolean", "string"]}},
        "additionalProperties": False})),)
ACTIONS = dict(schemas.ACTIONS, **{"os-migrate_volume": _MIGRATE,
                                   "os-force_detach": _FORCE_DETACH,
                                   "revert": _REVERT,
                                   "os-reimage": _REIMAGE,
                                   "os-extend_volume_completion":
                                       _EXTEND_COMPLETION,
                                   "os-unmanage": manage_schemas.UNMANAGE})
#: Actions answered with 200 (the others 202); both have an empty body.
_OK = frozenset(["os-set_bootable"])


class Action:
    def __init__(self, volumes: volume_ops.VolumeOperations,
                 attachments: attachment_ops.AttachmentOperations,
                 manage: manage_ops.ManageOperations) -> None:
        self.volumes = volumes
        self.attachments = attachments
        self.manage = manage
        self._handlers = {
            "os-extend": self._extend, "os-retype": self._retype,
            "os-set_bootable": self._set_bootable,
            "os-update_readonly_flag": self._readonly,
            "os-reset_status": self._reset_status,
            "os-force_delete": self._force_delete,
            "os-migrate_volume": self._migrate,
            "os-detach": self._detach, "os-force_detach": self._force_detach,
            "os-reserve": self._reserve, "os-unreserve": self._unreserve,
            "revert": self._revert,
            "os-reimage": self._reimage,
            "os-extend_volume_completion": self._extend_completion,
            "os-unmanage": self._unmanage,
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                volume_id: str) -> None:
        supported = {k: v for k, v in ACTIONS.items() if k in self._handlers}
        name, value = base.action_body(req, supported)
        self._handlers[name](req, volume_id, value or {})
        resp.status = falcon.HTTP_200 if name in _OK else falcon.HTTP_202
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""

    def _reimage(self, req: falcon.Request, volume_id: str,
                 value: Any) -> None:
        self.volumes.get(base.ctxt(req), volume_id)
        raise exception.NotSupported(what="Re-imaging a volume (os-reimage)")

    def _extend_completion(self, req: falcon.Request, volume_id: str,
                           value: Any) -> None:
        volume = self.volumes.get(base.ctxt(req), volume_id)
        raise exception.InvalidVolume(
            reason="Volume %s is not waiting for a compute host to complete "
                   "an extend: Ashlar's volume nodes extend attached volumes "
                   "themselves." % volume.id)

    def _unmanage(self, req: falcon.Request, volume_id: str,
                  value: Any) -> None:
        self.manage.unmanage_volume(base.ctxt(req), volume_id)

    def _extend(self, req: falcon.Request, volume_id: str, value: Any) -> None:
        attached_ok = base.version(req) >= mv.VOLUME_EXTEND_INUSE
        self.volumes.extend(base.ctxt(req), volume_id, int(value["new_size"]),
                            attached_ok=attached_ok)

    def _retype(self, req: falcon.Request, volume_id: str, value: Any) -> None:
        self.volumes.retype(base.ctxt(req), volume_id, value["new_type"],
                            value.get("migration_policy"))

    def _set_bootable(self, req: falcon.Request, volume_id: str,
                      value: Any) -> None:
        self.volumes.set_bootable(base.ctxt(req), volume_id,
                                  validation.parse_bool_param(
                                      "bootable", value["bootable"]))

    def _readonly(self, req: falcon.Request, volume_id: str,
                  value: Any) -> None:
        self.volumes.update_readonly_flag(
            base.ctxt(req), volume_id,
            validation.parse_bool_param("readonly", value["readonly"]))

    def _reset_status(self, req: falcon.Request, volume_id: str,
                      value: Any) -> None:
        def lower(key: str) -> str | None:
            return value[key].lower() if value.get(key) else None
        self.volumes.reset_status(
            base.ctxt(req), volume_id, self.attachments,
            status=lower("status"), attach_status=lower("attach_status"),
            migration_status=lower("migration_status"))

    def _force_delete(self, req: falcon.Request, volume_id: str,
                      value: Any) -> None:
        self.volumes.delete(
            base.ctxt(req), volume_id, force=True,
            rule="volume_extension:volume_admin_actions:force_delete")

    def _migrate(self, req: falcon.Request, volume_id: str,
                 value: Any) -> None:
        self.volumes.migrate(base.ctxt(req), volume_id, value.get("host"),
                             value.get("cluster"))

    def _revert(self, req: falcon.Request, volume_id: str,
                value: Any) -> None:
        self.volumes.revert(base.ctxt(req), volume_id, value["snapshot_id"])

    def _reserve(self, req: falcon.Request, volume_id: str,
                 value: Any) -> None:
        self.volumes.reserve(base.ctxt(req), volume_id)

    def _unreserve(self, req: falcon.Request, volume_id: str,
                   value: Any) -> None:
        self.volumes.unreserve(base.ctxt(req), volume_id)

    def _detach(self, req: falcon.Request, volume_id: str,
                value: Any) -> None:
        self._detach_under(req, volume_id, value,
                           "volume_extension:volume_actions:detach")

    def _force_detach(self, req: falcon.Request, volume_id: str,
                      value: Any) -> None:
        self._detach_under(req, volume_id, value,
                           "volume_extension:volume_admin_actions:force_detach",
                           force=True)

    def _detach_under(self, req: falcon.Request, volume_id: str, value: Any,
                      rule: str, force: bool = False) -> None:
        """``os-detach``/``os-force_detach``: ``rule`` must allow it."""
        ctxt = base.ctxt(req)
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can(rule, {"project_id": volume.project_id})
        self.attachments.detach(ctxt, volume_id, value.get("attachment_id"),
                                force=force)
