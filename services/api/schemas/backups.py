"""Request bodies of ``/backups``.

From openstack/cinder ``cinder/api/schemas/backups.py`` (without 3.43's
``metadata`` and 3.51's ``availability_zone``, which Ashlar does not
serve; ``snapshot_id`` is taken, since clients send it as null, and
refused when it names a snapshot, for now).
"""

from services.api.schemas import (
    BOOLEAN,
    DESCRIPTION,
    NULLABLE_STRING,
    UUID,
    Versioned,
    envelope,
    unversioned,
)


CREATE: Versioned = unversioned(envelope("backup", {
    "type": "object",
    "properties": {
        "volume_id": UUID,
        "container": NULLABLE_STRING,
        "description": DESCRIPTION,
        "incremental": BOOLEAN,
        "force": BOOLEAN,
        "name": NULLABLE_STRING,
        "snapshot_id": {"oneOf": [{"type": "null"}, UUID]},
    },
    "required": ["volume_id"],
    "additionalProperties": False,
}))

RESTORE: Versioned = unversioned(envelope("restore", {
    "type": ["object", "null"],
    "properties": {
        "volume_id": {"oneOf": [{"type": "null"}, UUID]},
        "name": NULLABLE_STRING,
    },
    "additionalProperties": False,
}))
