"""Request bodies of ``/attachments`` (3.27+) and its actions.

From openstack/cinder ``cinder/api/schemas/attachments.py``.  ``connector``
null or ``{}`` on create both mean "reserve only"; that is the caller's
reading.
"""

from common.policy import HOST_PATTERN
from services.api.microversion import (
    ATTACHMENT_CREATE_MODE_ARG,
    NEW_ATTACH,
    NEW_ATTACH_COMPLETION,
)
from services.api.schemas import UUID, Schema, Versioned, envelope


_TEXT: Schema = {"type": "string", "minLength": 1, "maxLength": 255}
_NAMES: Schema = {"type": "array", "maxItems": 64, "items": _TEXT}

#: A connector (os-brick's properties of the attaching host): any keys, as
#: Cinder takes them, but bounded as the database stores them (a key is a
#: row of ``attachment_specs``), a ``host`` that names a host, and the keys
#: drivers read of the types os-brick gives them (an ``initiator`` list
#: would break an iSCSI driver; ``ip`` tells a host apart for a fence).
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
        "initiator": _TEXT,
        "ip": _TEXT,
        "nqn": _TEXT,
        "multipath": {"type": "boolean"},
        "wwpns": _NAMES,
        "wwnns": _NAMES,
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
    (NEW_ATTACH, _create(with_mode=False)),
    (ATTACHMENT_CREATE_MODE_ARG, _create(with_mode=True)),
)

UPDATE: Versioned = ((NEW_ATTACH, envelope("attachment", {
    "type": "object",
    "properties": {"connector": {**CONNECTOR, "minProperties": 1}},
    "required": ["connector"],
    "additionalProperties": False,
})),)

#: ``POST /attachments/{id}/action``; Cinder ignores the os-complete value.
ACTIONS: dict[str, Versioned] = {
    "os-complete": ((NEW_ATTACH_COMPLETION, envelope("os-complete", {})),),
    # Ashlar's fencing extension: no parameters.
    **{name: ((NEW_ATTACH, envelope(name, {
        "type": ["object", "null"], "additionalProperties": False})),)
       for name in ("ashlar-fence", "ashlar-takeover", "ashlar-unfence")},
}

#: ``PUT /ashlar-fencing/{fence|unfence}``: one compute host.
HOST_FENCE: Versioned = ((NEW_ATTACH, {
    "type": "object",
    "properties": {"host": {"type": "string", "minLength": 1,
                            "maxLength": 255,
                            "pattern": HOST_PATTERN.pattern}},
    "required": ["host"],
    "additionalProperties": False,
}),)
