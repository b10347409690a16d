"""Request bodies of ``/types/{id}/encryption``.

From openstack/cinder ``cinder/api/schemas/volume_type_encryption.py``.
"""

from services.api.schemas import (
    DB_MAX_INT,
    Schema,
    Versioned,
    envelope,
    unversioned,
)

_FIELDS: Schema = {
    "key_size": {"type": ["integer", "string", "null"],
                 "pattern": "^[0-9]+$", "minimum": 0,
                 "maximum": DB_MAX_INT},
    "provider": {"type": "string", "minLength": 0, "maxLength": 255},
    "control_location": {"type": "string",
                         "enum": ["front-end", "back-end"]},
    "cipher": {"type": ["string", "null"], "minLength": 0,
               "maxLength": 255},
}

CREATE: Versioned = unversioned(envelope("encryption", {
    "type": "object", "properties": _FIELDS,
    "required": ["provider", "control_location"],
    "additionalProperties": False}))

UPDATE: Versioned = unversioned(envelope("encryption", {
    "type": "object", "properties": _FIELDS, "minProperties": 1,
    "additionalProperties": False}))
