"""Request bodies of ``/types``, its extra specs and its access actions.

From openstack/cinder ``cinder/api/schemas/volume_types.py``,
``types_extra_specs.py`` and ``volume_type_access.py``.  The rule that a type
update changes at least one field is the caller's ("Specify volume type
name, description, is_public or a combination thereof.").
"""

from services.api.schemas import (
    BOOLEAN,
    DESCRIPTION,
    EXTRA_SPECS_NO_SPACES_KEY,
    EXTRA_SPECS_WITH_NULL,
    NAME,
    NULLABLE_NAME,
    UUID,
    Schema,
    Versioned,
    envelope,
    unversioned,
)

CREATE: Versioned = unversioned(envelope("volume_type", {
    "type": "object",
    "properties": {
        "name": NAME,
        "description": DESCRIPTION,
        "extra_specs": EXTRA_SPECS_WITH_NULL,
        "os-volume-type-access:is_public": BOOLEAN,
    },
    "required": ["name"],
    "additionalProperties": False,
}))

UPDATE: Versioned = unversioned(envelope("volume_type", {
    "type": "object",
    "properties": {
        "name": NULLABLE_NAME,
        "description": DESCRIPTION,
        "is_public": BOOLEAN,
    },
    "additionalProperties": False,
}))

#: ``POST /types/{id}/extra_specs``: merge these keys.
EXTRA_SPECS_CREATE: Versioned = unversioned(
    envelope("extra_specs", EXTRA_SPECS_NO_SPACES_KEY))

#: ``PUT /types/{id}/extra_specs/{key}``: ``{key: value}``, one key only;
#: that it equals the URL key is the caller's check.
EXTRA_SPEC_UPDATE: Versioned = unversioned(
    {**EXTRA_SPECS_NO_SPACES_KEY, "minProperties": 1, "maxProperties": 1})


def _project_access(action: str) -> Schema:
    """Return the body schema of a type access action."""
    return envelope(action, {"type": "object",
                             "properties": {"project": UUID},
                             "required": ["project"],
                             "additionalProperties": False})


#: ``POST /types/{id}/action``.
ACTIONS: dict[str, Versioned] = {
    action: unversioned(_project_access(action))
    for action in ("addProjectAccess", "removeProjectAccess")
}
