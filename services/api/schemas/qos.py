"""Request bodies of ``/qos-specs``.

From openstack/cinder ``cinder/api/schemas/qos_specs.py``.
"""

from services.api.schemas import (
    EXTRA_SPECS,
    NAME,
    Versioned,
    envelope,
    unversioned,
)

#: A name, then spec keys and values (``consumer`` among them).
CREATE: Versioned = unversioned(envelope("qos_specs", {
    **EXTRA_SPECS, "properties": {"name": NAME}, "required": ["name"]}))

SET: Versioned = unversioned(envelope("qos_specs", {
    **EXTRA_SPECS, "minProperties": 1}))

UNSET: Versioned = unversioned({
    "type": "object",
    "properties": {"keys": {
        "type": "array", "uniqueItems": True,
        "items": {"type": "string", "minLength": 1, "maxLength": 255}}},
    "required": ["keys"], "additionalProperties": False})
