"""Request bodies of ``/snapshots`` and their metadata.

From openstack/cinder ``cinder/api/schemas/snapshots.py`` and
``snapshot_manage.py``'s metadata bodies.
"""

from services.api.schemas import (
    NAMES,
    BOOLEAN,
    EXTRA_SPECS,
    NULLABLE_METADATA,
    UUID,
    Versioned,
    envelope,
    unversioned,
)


CREATE: Versioned = unversioned(envelope("snapshot", {
    "type": "object",
    "properties": {**NAMES, "volume_id": UUID, "force": BOOLEAN,
                   "metadata": NULLABLE_METADATA},
    "required": ["volume_id"],
    "additionalProperties": False,
}))

UPDATE: Versioned = unversioned(envelope("snapshot", {
    "type": "object",
    "properties": NAMES,
    "additionalProperties": False,
    "anyOf": [{"required": [key]} for key in NAMES],
}))

METADATA: Versioned = unversioned(envelope("metadata", EXTRA_SPECS))

METADATA_ITEM: Versioned = unversioned(envelope("meta", {
    **EXTRA_SPECS, "minProperties": 1, "maxProperties": 1}))

ACTIONS = {
    "os-reset_status": unversioned(envelope("os-reset_status", {
        "type": "object", "properties": {"status": {"type": "string"}},
        "required": ["status"], "additionalProperties": False})),
    "os-force_delete": unversioned(envelope("os-force_delete", {})),
}
