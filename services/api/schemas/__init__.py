"""JSON Schemas for request bodies, one module per resource.

Each module exposes *tables*: tuples of ``(first microversion, schema)``,
oldest first, from which ``services.api.validation.schema_for`` picks the
schema for a request.  Action bodies are in ``ACTIONS`` dicts keyed by the
action name.  The schemas and their keyword order follow openstack/cinder
``cinder/api/schemas/`` and ``cinder/api/validation/parameter_types.py``,
because the order decides which error (and so which message) comes first.

Formats named here are implemented in ``services.api.validation``.
"""

from typing import Any

from services.api.microversion import MIN_VERSION, APIVersion

Schema = dict[str, Any]
Versioned = tuple[tuple[APIVersion, Schema], ...]

#: Largest value of a 32-bit signed DB integer column (Cinder's DB_MAX_INT).
DB_MAX_INT = 0x7FFFFFFF

BOOLEAN: Schema = {
    "type": ["boolean", "string"],
    "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on",
             "YES", "Yes", "yes", "y", "t",
             False, "False", "FALSE", "false", "0", "OFF", "Off", "off",
             "NO", "No", "no", "n", "f"],
}
OPTIONAL_BOOLEAN: Schema = {"oneOf": [{"type": "null"}, BOOLEAN]}

UUID: Schema = {"type": "string", "format": "uuid"}
OPTIONAL_UUID: Schema = {"oneOf": [{"type": "null"}, UUID]}

#: A type or volume type name: 1-255 characters, not all blank.
NAME: Schema = {"type": "string", "minLength": 1, "maxLength": 255,
                "format": "name"}
NULLABLE_NAME: Schema = {"type": ["string", "null"], "minLength": 0,
                         "maxLength": 255}
#: NOTE: Cinder spells "printable" as a ``pattern`` of every printable BMP
#: character, whose error message quotes that whole pattern.
DESCRIPTION: Schema = {"type": ["string", "null"], "minLength": 0,
                       "maxLength": 255, "format": "printable"}
NULLABLE_STRING: Schema = {"type": ["string", "null"], "minLength": 0,
                           "maxLength": 255}

VOLUME_SIZE: Schema = {"type": ["integer", "string"], "pattern": "^[0-9]+$",
                       "minimum": 1, "maximum": DB_MAX_INT}
NULLABLE_VOLUME_SIZE: Schema = {**VOLUME_SIZE,
                                "type": ["integer", "string", "null"]}


_NULLABLE_NAME: Schema = {"type": ["string", "null"],
                          "format": "name_non_mandatory_remove_white_spaces"}
_NULLABLE_DESCRIPTION: Schema = {
    "type": ["string", "null"],
    "format": "description_non_mandatory_remove_white_spaces"}
#: The name and description keys of volume and snapshot bodies (and their
#: v1 ``display_`` spellings).
NAMES: Schema = {"name": _NULLABLE_NAME, "description": _NULLABLE_DESCRIPTION,
                 "display_name": _NULLABLE_NAME,
                 "display_description": _NULLABLE_DESCRIPTION}


def _string_map(key_pattern: str, value: Schema) -> Schema:
    """Return an object schema whose keys match key_pattern."""
    return {"type": "object", "patternProperties": {key_pattern: value},
            "additionalProperties": False}


#: Volume metadata and type-create extra specs: keys may hold ' ' and '/'.
EXTRA_SPECS = _string_map("^[a-zA-Z0-9-_:. /]{1,255}$",
                          {"type": "string", "maxLength": 255})
EXTRA_SPECS_WITH_NULL = _string_map("^[a-zA-Z0-9-_:. /]{1,255}$",
                                    {"type": ["string", "null"],
                                     "maxLength": 255})
NULLABLE_METADATA: Schema = {**EXTRA_SPECS, "type": ["object", "null"]}
#: Extra specs set through /types/{id}/extra_specs.
EXTRA_SPECS_NO_SPACES_KEY = _string_map("^[a-zA-Z0-9-_:.]{1,255}$",
                                        {"type": ["string", "null"],
                                         "minLength": 0, "maxLength": 255})

#: A service host; Cinder allows '_', ':', '/', '#', '@' and '+'.
HOSTNAME: Schema = {"type": ["string", "null"], "minLength": 1,
                    "maxLength": 255, "pattern": "^[a-zA-Z0-9-._#@:/+]*$"}


def envelope(key: str, inner: Schema) -> Schema:
    """Return the schema of a body ``{key: <inner>}`` with nothing else."""
    return {"type": "object", "properties": {key: inner}, "required": [key],
            "additionalProperties": False}


def unversioned(schema: Schema) -> Versioned:
    """Return a table that uses schema at every microversion."""
    return ((MIN_VERSION, schema),)
