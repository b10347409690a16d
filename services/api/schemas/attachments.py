"""Request bodies of ``/attachments`` (3.27+) and its actions.

From openstack/cinder ``cinder/api/schemas/attachments.py``.  ``connector``
null or ``{}`` on create both mean "reserve only"; that is the caller's
reading.
"""

from common.policy import HOST_PATTERN
from services.api.microversion import APIVersion
from services.api.schemas import UUID, Schema, Versioned, envelope

ATTACHMENTS_VERSION = APIVersion(3, 27)
COMPLETE_VERSION = APIVersion(3, 44)
MODE_VERSION = APIVersion(3, 54)


#: A connector (os-brick's properties of the attaching host): any keys, as
#: Cinder takes them, but bounded as the database stores them (a key is a
#: row of ``attachment_specs``), and a ``host`` that names a host.
CONNECTOR: Schema = {
    "type": "object",
    "maxProperties": 64,
    # NOTE(ashlar): Draft 4 has no propertyNames: a longer key matches
    # this pattern, whose schema nothing satisfies.
    "patternProperties": {"^.{256,}$": {"not": {}}},
    "properties": {
        "host": {"type": "string", "minLength": 1, "maxLength": 255,
                 "pattern": HOST_PATTERN.pattern},
        "mountpoint": {"type": ["string", "null"], "maxLength": 255},
        "mode": {"type": "string", "enum": ["rw", "ro"]},
    },
}


def _create(with_mode: bool) -> Schema:
    """Return the create schema; with_mode accepts ``mode`` (3.54+)."""
    properties: Schema = {"instance_uuid": UUID,
                          "connector": {**CONNECTOR,
                                        "type": ["object", "null"]},
                          "volume_uuid": UUID}
    if with_mode:
        properties["mode"] = {"type": "string", "enum": ["rw", "ro"]}
    return envelope("attachment", {"type": "object",
                                   "properties": properties,
                                   "required": ["volume_uuid"],
                                   "additionalProperties": False})


CREATE: Versioned = (
    (ATTACHMENTS_VERSION, _create(with_mode=False)),
    (MODE_VERSION, _create(with_mode=True)),
)

UPDATE: Versioned = ((ATTACHMENTS_VERSION, envelope("attachment", {
    "type": "object",
    "properties": {"connector": {**CONNECTOR, "minProperties": 1}},
    "required": ["connector"],
    "additionalProperties": False,
})),)

#: ``POST /attachments/{id}/action``; Cinder ignores the os-complete value.
ACTIONS: dict[str, Versioned] = {
    "os-complete": ((COMPLETE_VERSION, envelope("os-complete", {})),),
    # Ashlar's fencing extension: no parameters.
    **{name: ((ATTACHMENTS_VERSION, envelope(name, {
        "type": ["object", "null"], "additionalProperties": False})),)
       for name in ("ashlar-fence", "ashlar-takeover", "ashlar-unfence")},
}

#: ``PUT /ashlar-fencing/{fence|unfence}``: one compute host.
HOST_FENCE: Versioned = ((ATTACHMENTS_VERSION, {
    "type": "object",
    "properties": {"host": {"type": "string", "minLength": 1,
                            "maxLength": 255,
                            "pattern": HOST_PATTERN.pattern}},
    "required": ["host"],
    "additionalProperties": False,
}),)
