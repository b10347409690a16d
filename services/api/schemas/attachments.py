"""Request bodies of ``/attachments`` (3.27+) and its actions.

From openstack/cinder ``cinder/api/schemas/attachments.py``.  ``connector``
null or ``{}`` on create both mean "reserve only"; that is the caller's
reading.
"""

from services.api.microversion import APIVersion
from services.api.schemas import UUID, Schema, Versioned, envelope

ATTACHMENTS_VERSION = APIVersion(3, 27)
COMPLETE_VERSION = APIVersion(3, 44)
MODE_VERSION = APIVersion(3, 54)


def _create(with_mode: bool) -> Schema:
    """Return the create schema; with_mode accepts ``mode`` (3.54+)."""
    properties: Schema = {"instance_uuid": UUID,
                          "connector": {"type": ["object", "null"]},
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
    "properties": {"connector": {"type": "object", "minProperties": 1}},
    "required": ["connector"],
    "additionalProperties": False,
})),)

#: ``POST /attachments/{id}/action``; Cinder ignores the os-complete value.
ACTIONS: dict[str, Versioned] = {
    "os-complete": ((COMPLETE_VERSION, envelope("os-complete", {})),),
}
