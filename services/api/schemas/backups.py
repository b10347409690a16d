"""Request bodies of ``/backups``.

From openstack/cinder ``cinder/api/schemas/backups.py`` and the backup
admin actions of ``cinder/api/schemas/admin_actions.py`` (without 3.51's
``availability_zone``, which Ashlar does not serve).
"""

from services.api import microversion as mv
from services.api.schemas import (
    BOOLEAN,
    DESCRIPTION,
    EXTRA_SPECS,
    NULLABLE_METADATA,
    NULLABLE_STRING,
    UUID,
    Versioned,
    envelope,
    unversioned,
)


def _create(extra: dict) -> dict:
    return envelope("backup", {
        "type": "object",
        "properties": {
            "volume_id": UUID,
            "container": NULLABLE_STRING,
            "description": DESCRIPTION,
            "incremental": BOOLEAN,
            "force": BOOLEAN,
            "name": NULLABLE_STRING,
            "snapshot_id": {"oneOf": [{"type": "null"}, UUID]},
            **extra,
        },
        "required": ["volume_id"],
        "additionalProperties": False,
    })


CREATE: Versioned = (
    (mv.MIN_VERSION, _create({})),
    (mv.BACKUP_METADATA, _create({"metadata": NULLABLE_METADATA})),
)


def _update(extra: dict) -> dict:
    return envelope("backup", {
        "type": ["object", "null"],
        "properties": {"name": NULLABLE_STRING, "description": DESCRIPTION,
                       **extra},
        "additionalProperties": False,
    })


#: ``PUT /backups/{id}`` (3.9+; ``metadata``, replaced whole, 3.43+).
UPDATE: Versioned = (
    (mv.BACKUP_UPDATE, _update({})),
    (mv.BACKUP_METADATA, _update({"metadata": EXTRA_SPECS})),
)

#: ``POST /backups/import_record``: what ``export_record`` gave.
IMPORT_RECORD: Versioned = unversioned(envelope("backup-record", {
    "type": "object",
    "properties": {
        "backup_service": {"type": "string", "minLength": 0,
                           "maxLength": 255},
        "backup_url": {"type": "string", "minLength": 1},
    },
    "required": ["backup_service", "backup_url"],
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

ACTIONS = {
    "os-reset_status": unversioned(envelope("os-reset_status", {
        "type": "object", "properties": {"status": {"type": "string"}},
        "required": ["status"], "additionalProperties": False})),
    "os-force_delete": unversioned(envelope("os-force_delete", {})),
}
