"""``/types/{type_id}/encryption`` (show, create) and
``/types/{type_id}/encryption/{encryption_id}`` (one key by name, update,
delete), in Cinder's bodies."""

import falcon

from common import exception
from common.db import models
from services.api import views
from services.api.operations import encryption as encryption_ops
from services.api.resources import base
from services.api.schemas import encryption as schemas


def _typed(values: dict) -> dict:
    """The fields as Cinder answers them (``key_size`` an integer)."""
    size = values.get("key_size")
    return dict(values, key_size=int(size)) if size is not None else values


def _shown(row: models.VolumeType, found: dict) -> dict:
    """Show's flat body; ``{}`` for a type without encryption."""
    if not found:
        return {}
    return {"volume_type_id": row.id,
            "encryption_id": encryption_ops.encryption_id(row.id),
            "provider": found.get("provider"), "cipher": found.get("cipher"),
            "key_size": _typed(found).get("key_size"),
            "control_location": found.get("control_location"),
            "created_at": views.timestamp(row.created_at),
            "updated_at": views.timestamp(row.updated_at),
            "deleted": False, "deleted_at": None}


class Encryption:
    def __init__(self, ops: encryption_ops.EncryptionOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str) -> None:
        resp.media = _shown(*self.ops.get(base.ctxt(req), type_id))

    def on_post(self, req: falcon.Request, resp: falcon.Response,
                type_id: str) -> None:
        values = base.body(req, schemas.CREATE)["encryption"]
        made = self.ops.create(base.ctxt(req), type_id, values)
        resp.media = {"encryption": dict(
            _typed(made), volume_type_id=type_id,
            encryption_id=encryption_ops.encryption_id(type_id))}


class EncryptionItem:
    def __init__(self, ops: encryption_ops.EncryptionOperations) -> None:
        self.ops = ops

    def on_get(self, req: falcon.Request, resp: falcon.Response,
               type_id: str, encryption_id: str) -> None:
        """One key of the encryption (``encryption_id`` names the key)."""
        shown = _shown(*self.ops.get(base.ctxt(req), type_id))
        if encryption_id not in shown:
            raise exception.NotFound("Volume type encryption for type %s "
                                     "has no %s." % (type_id, encryption_id))
        resp.media = {encryption_id: shown[encryption_id]}

    def on_put(self, req: falcon.Request, resp: falcon.Response,
               type_id: str, encryption_id: str) -> None:
        values = base.body(req, schemas.UPDATE)["encryption"]
        resp.media = {"encryption": _typed(self.ops.update(
            base.ctxt(req), type_id, encryption_id, values))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response,
                  type_id: str, encryption_id: str) -> None:
        self.ops.delete(base.ctxt(req), type_id, encryption_id)
        resp.status = falcon.HTTP_202
        resp.content_type = falcon.MEDIA_JSON
        resp.data = b""
