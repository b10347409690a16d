"""Request bodies of ``/snapshots`` (their metadata's: ``metadata``).

From openstack/cinder ``cinder/api/schemas/snapshots.py``.
"""

from services.api.schemas import (
    NAMES,
    BOOLEAN,
    NULLABLE_METADATA,
    OPTIONAL_UUID,
    Versioned,
    envelope,
    unversioned,
)


CREATE: Versioned = unversioned(envelope("snapshot", {
    "type": "object",
    # NOTE(ashlar): null is Cinder's too: the volume is then not found (404).
    "properties": {**NAMES, "volume_id": OPTIONAL_UUID, "force": BOOLEAN,
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

ACTIONS = {
    "os-reset_status": unversioned(envelope("os-reset_status", {
        "type": "object", "properties": {"status": {"type": "string"}},
        "required": ["status"], "additionalProperties": False})),
    "os-force_delete": unversioned(envelope("os-force_delete", {})),
    "os-unmanage": unversioned(envelope("os-unmanage", {})),
    "os-update_snapshot_status": unversioned(envelope(
        "os-update_snapshot_status", {
            "type": "object",
            "properties": {"status": {"type": "string"},
                           "progress": {"type": "string"}},
            "required": ["status"], "additionalProperties": False})),
}
