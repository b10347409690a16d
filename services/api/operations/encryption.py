"""Volume type encryption (``/types/{id}/encryption``, admin): Cinder's
API over the type's ``encryption:`` extra specs, which make its volumes
``encrypted`` (and never multiattach).

Ashlar keeps no keys (no key manager): the specs say how a compute host
should encrypt; they change only while no volume uses the type.
"""

import uuid

from common import attach_rules
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import types as types_db
from services.api.operations import types as type_ops

FIELDS = ("provider", "cipher", "key_size", "control_location")
_RULE = "volume_extension:volume_type_encryption:%s"
_SCOPE = attach_rules.ENCRYPTION_SCOPE
#: A type and its encryption fields (``FIELDS``, as its specs hold them).
TypeEncryption = tuple[models.VolumeType, dict[str, str | None]]


def encryption_id(type_id: str) -> str:
    """The type's encryption id: derived from it (one per type)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "ashlar:encryption:" + type_id))


class EncryptionOperations:
    def get(self, ctxt: RequestContext, type_id: str) -> TypeEncryption:
        """The type and its encryption fields (empty: not encrypted)."""
        ctxt.can(_RULE % "get")
        return self._read(ctxt, type_id)

    @staticmethod
    def _read(ctxt: RequestContext, type_id: str) -> TypeEncryption:
        row: models.VolumeType = types_db.type_get(ctxt, type_id)
        specs = types_db.specs_of(row)
        return row, {field: specs[_SCOPE + field] for field in FIELDS
                     if _SCOPE + field in specs}

    def create(self, ctxt: RequestContext, type_id: str,
               values: dict[str, object]) -> dict[str, object]:
        """:raises Invalid: the type is encrypted already, or multiattach.
        :raises VolumeTypeInUse: volumes use the type."""
        ctxt.can(_RULE % "create")
        row, found = self._read(ctxt, type_id)
        if found:
            raise exception.Invalid("Volume type encryption for type %s "
                                    "already exists." % type_id)
        return self._write(ctxt, row, values)

    def update(self, ctxt: RequestContext, type_id: str, enc_id: str,
               values: dict[str, object]) -> dict[str, object]:
        ctxt.can(_RULE % "update")
        row, found = self._existing(ctxt, type_id, enc_id)
        self._write(ctxt, row, {**found, **values})
        return values

    def delete(self, ctxt: RequestContext, type_id: str, enc_id: str) -> None:
        ctxt.can(_RULE % "delete")
        self._existing(ctxt, type_id, enc_id)
        types_db.specs_replace_scope(ctxt, type_id, _SCOPE, {})

    def _existing(self, ctxt: RequestContext, type_id: str,
                  enc_id: str) -> TypeEncryption:
        row, found = self._read(ctxt, type_id)
        if not found or enc_id != encryption_id(type_id):
            raise exception.NotFound("Volume type encryption for type %s "
                                     "does not exist." % type_id)
        return row, found

    @staticmethod
    def _write(ctxt: RequestContext, row: models.VolumeType,
               values: dict[str, object]) -> dict[str, object]:
        specs = {_SCOPE + k: str(v) for k, v in values.items()
                 if v is not None}
        others = {k: v for k, v in types_db.specs_of(row).items()
                  if not k.startswith(_SCOPE)}
        type_ops.validate_specs({**others, **specs})
        types_db.specs_replace_scope(ctxt, row.id, _SCOPE, specs)
        return values
