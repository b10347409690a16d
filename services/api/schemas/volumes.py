"""Request bodies of ``/volumes`` and ``/volumes/{id}/action``.

From openstack/cinder ``cinder/api/schemas/volumes.py``,
``volume_actions.py`` and ``admin_actions.py``.  ``multiattach`` passes the
create schema at every version; the caller rejects a true value.
"""

from services.api import microversion as mv
from services.api.schemas import (
    NAMES,
    BOOLEAN,
    EXTRA_SPECS,
    NULLABLE_METADATA,
    NULLABLE_NAME,
    NULLABLE_VOLUME_SIZE,
    OPTIONAL_BOOLEAN,
    OPTIONAL_UUID,
    UUID,
    VOLUME_SIZE,
    Schema,
    Versioned,
    envelope,
    unversioned,
)

_IMAGE: Schema = {"type": ["string", "null"], "minLength": 0, "maxLength": 255}

_CREATE_KEYS: Schema = {
    **NAMES,
    # NOTE: a type name or id, looked up by the caller.
    "volume_type": NULLABLE_NAME,
    "metadata": NULLABLE_METADATA,
    "snapshot_id": OPTIONAL_UUID,
    "source_volid": OPTIONAL_UUID,
    "consistencygroup_id": OPTIONAL_UUID,
    "size": NULLABLE_VOLUME_SIZE,
    "availability_zone": {"type": ["string", "null"], "minLength": 1,
                          "maxLength": 255},
    "multiattach": OPTIONAL_BOOLEAN,
    "image_id": _IMAGE,
    "imageRef": _IMAGE,
}
_GROUP_ID: Schema = {"group_id": NULLABLE_NAME}
_BACKUP_ID: Schema = {"backup_id": OPTIONAL_UUID}


def _create(extra_keys: Schema, strict: bool) -> Schema:
    """Return a create schema; strict rejects unknown keys in ``volume``."""
    volume = {"type": "object",
              "properties": {**_CREATE_KEYS, **extra_keys},
              "additionalProperties": not strict}
    return {"type": "object",
            "properties": {"volume": volume,
                           "OS-SCH-HNT:scheduler_hints": {
                               "type": ["object", "null"]}},
            "required": ["volume"],
            "additionalProperties": False}


def _update(needs_a_key: bool) -> Schema:
    """Return an update schema; needs_a_key rejects ``{"volume": {}}``."""
    volume: Schema = {"type": "object",
                      "properties": {**NAMES, "metadata": EXTRA_SPECS},
                      "additionalProperties": False}
    if needs_a_key:
        volume["anyOf"] = [{"required": [key]}
                           for key in (*NAMES, "metadata")]
    return envelope("volume", volume)


CREATE: Versioned = (
    (mv.MIN_VERSION, _create({}, strict=False)),
    (mv.GROUP_VOLUME, _create(_GROUP_ID, strict=False)),
    (mv.VOLUME_CREATE_FROM_BACKUP,
     _create({**_GROUP_ID, **_BACKUP_ID}, strict=False)),
    (mv.SUPPORT_VOLUME_SCHEMA_CHANGES,
     _create({**_GROUP_ID, **_BACKUP_ID}, strict=True)),
)

UPDATE: Versioned = (
    (mv.MIN_VERSION, _update(needs_a_key=False)),
    (mv.SUPPORT_VOLUME_SCHEMA_CHANGES, _update(needs_a_key=True)),
)


def _action(name: str, properties: Schema, *required: str) -> Versioned:
    """Return the table of an action whose value is a closed object."""
    inner: Schema = {"type": "object", "properties": properties}
    if required:
        inner["required"] = list(required)
    inner["additionalProperties"] = False
    return unversioned(envelope(name, inner))


def _unchecked(name: str) -> Versioned:
    """Return the table of an action whose value Cinder does not check."""
    return unversioned(envelope(name, {}))


_CONNECTOR: Schema = {"type": ["string", "object", "null"]}

ACTIONS: dict[str, Versioned] = {
    "os-extend": _action("os-extend", {"new_size": VOLUME_SIZE}, "new_size"),
    "os-retype": _action(
        "os-retype",
        {"new_type": {"type": "string"},
         # NOTE: Cinder's enum forgets the null its type allows; the API
         # reference documents null as "never", so accept it.
         "migration_policy": {"type": ["string", "null"],
                              "enum": ["on-demand", "never", None]}},
        "new_type"),
    "os-reset_status": unversioned(envelope("os-reset_status", {
        "type": "object",
        "format": "validate_volume_reset_body",
        "properties": {
            "status": {"type": ["string", "null"], "format": "volume_status"},
            "attach_status": {"type": ["string", "null"],
                              "format": "volume_attach_status"},
            "migration_status": {"type": ["string", "null"],
                                 "format": "volume_migration_status"}},
        "additionalProperties": False})),
    "os-force_delete": _unchecked("os-force_delete"),
    "os-set_bootable": _action("os-set_bootable", {"bootable": BOOLEAN},
                               "bootable"),
    "os-update_readonly_flag": _action("os-update_readonly_flag",
                                       {"readonly": BOOLEAN}, "readonly"),
    "os-initialize_connection": _action(
        "os-initialize_connection",
        {"connector": {"type": ["object", "string"]}}, "connector"),
    "os-terminate_connection": _action("os-terminate_connection",
                                       {"connector": _CONNECTOR}, "connector"),
    "os-attach": unversioned(envelope("os-attach", {
        "type": "object",
        "properties": {
            "instance_uuid": UUID,
            "mountpoint": {"type": "string", "minLength": 1, "maxLength": 255},
            "host_name": {"type": "string", "maxLength": 255},
            "mode": {"type": "string", "enum": ["rw", "ro"]}},
        "required": ["mountpoint"],
        "anyOf": [{"required": ["instance_uuid"]}, {"required": ["host_name"]}],
        "additionalProperties": False})),
    "os-detach": unversioned(envelope(
        "os-detach",
        {"type": ["object", "null"],
         # NOTE: nulls are allowed for backward compatibility, as in Cinder.
         "properties": {"attachment_id": OPTIONAL_UUID},
         "additionalProperties": False})),
    "os-reserve": _unchecked("os-reserve"),
    "os-unreserve": _unchecked("os-unreserve"),
    "os-begin_detaching": _unchecked("os-begin_detaching"),
    "os-roll_detaching": _unchecked("os-roll_detaching"),
    "os-force_detach": _action(
        "os-force_detach",
        {"connector": _CONNECTOR,
         "attachment_id": {"type": ["string", "null"]}}),
}
