"""Request bodies of ``/group_types``, ``/groups`` and
``/group_snapshots``, each from the microversion that brought it.

From openstack/cinder ``cinder/api/schemas/group_types.py``,
``group_specs.py``, ``groups.py`` and ``group_snapshots.py``.
"""

from services.api.microversion import (
    GROUP_SNAPSHOT_RESET_STATUS,
    GROUP_SNAPSHOTS,
    GROUP_TYPE,
    GROUP_VOLUME,
    GROUP_VOLUME_RESET_STATUS,
    APIVersion,
)
from services.api.schemas import (
    BOOLEAN,
    DESCRIPTION,
    EXTRA_SPECS_NO_SPACES_KEY,
    NAME,
    NULLABLE_NAME,
    UUID,
    Schema,
    Versioned,
    envelope,
)


def _since(version: APIVersion, schema: Schema) -> Versioned:
    """A table with no schema before ``version`` (a 404 there)."""
    return ((version, schema),)


def _closed(properties: Schema, *required: str, **more: object) -> Schema:
    inner: Schema = {"type": "object", "properties": properties, **more}
    if required:
        inner["required"] = list(required)
    inner["additionalProperties"] = False
    return inner


_SPECS: Schema = {**EXTRA_SPECS_NO_SPACES_KEY, "type": ["object", "null"]}

TYPE_CREATE = _since(GROUP_TYPE, envelope("group_type", _closed(
    {"name": NAME, "description": DESCRIPTION, "is_public": BOOLEAN,
     "group_specs": _SPECS}, "name")))
TYPE_UPDATE = _since(GROUP_TYPE, envelope("group_type", _closed(
    {"name": NULLABLE_NAME, "description": DESCRIPTION,
     "is_public": BOOLEAN})))
SPECS_CREATE = _since(GROUP_TYPE, envelope("group_specs",
                                           EXTRA_SPECS_NO_SPACES_KEY))
SPEC_UPDATE = _since(GROUP_TYPE, {**EXTRA_SPECS_NO_SPACES_KEY,
                                  "minProperties": 1, "maxProperties": 1})

CREATE = _since(GROUP_VOLUME, envelope("group", _closed(
    {"description": DESCRIPTION, "group_type": {"type": "string"},
     "name": NULLABLE_NAME,
     "volume_types": {"type": "array", "minItems": 1,
                      "items": {"type": "string", "maxLength": 255},
                      "uniqueItems": True},
     "availability_zone": {"type": ["string", "null"]}},
    "group_type", "volume_types")))
UPDATE = _since(GROUP_VOLUME, envelope("group", _closed(
    {"description": DESCRIPTION, "name": NULLABLE_NAME,
     "add_volumes": DESCRIPTION, "remove_volumes": DESCRIPTION},
    anyOf=[{"required": [key]} for key in (
        "name", "description", "add_volumes", "remove_volumes")])))

_STATUS = _closed({"status": {"type": "string"}}, "status")

#: ``POST /groups/{id}/action``.
ACTIONS: dict[str, Versioned] = {
    "delete": _since(GROUP_VOLUME, envelope("delete", _closed(
        {"delete-volumes": BOOLEAN}))),
    "reset_status": _since(GROUP_VOLUME_RESET_STATUS,
                           envelope("reset_status", _STATUS)),
}
#: ``POST /groups/action``.
FROM_SOURCE: dict[str, Versioned] = {
    "create-from-src": _since(GROUP_SNAPSHOTS, envelope(
        "create-from-src", _closed(
            {"description": DESCRIPTION, "name": NULLABLE_NAME,
             "source_group_id": UUID, "group_snapshot_id": UUID},
            oneOf=[{"required": ["group_snapshot_id"]},
                   {"required": ["source_group_id"]}]))),
}

SNAPSHOT_CREATE = _since(GROUP_SNAPSHOTS, envelope("group_snapshot", _closed(
    {"group_id": UUID, "name": NULLABLE_NAME, "description": DESCRIPTION},
    "group_id")))
#: ``POST /group_snapshots/{id}/action``.
SNAPSHOT_ACTIONS: dict[str, Versioned] = {
    "reset_status": _since(GROUP_SNAPSHOT_RESET_STATUS,
                           envelope("reset_status", _STATUS)),
}
