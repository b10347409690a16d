"""Request bodies of ``/os-volume-transfer`` and (3.55+)
``/volume-transfers``.

From openstack/cinder ``cinder/api/schemas/volume_transfer.py``.
"""

from services.api.schemas import (
    BOOLEAN,
    NULLABLE_NAME,
    UUID,
    Versioned,
    envelope,
    unversioned,
)

_TRANSFER = {"volume_id": UUID, "name": NULLABLE_NAME}


def _create(properties: dict) -> Versioned:
    return unversioned(envelope("transfer", {
        "type": "object", "properties": properties,
        "required": ["volume_id"], "additionalProperties": False}))


#: ``/os-volume-transfer``.
CREATE: Versioned = _create(_TRANSFER)
#: ``/volume-transfers`` (3.55+): the snapshots may stay behind.
CREATE_WITH_SNAPSHOTS: Versioned = _create({**_TRANSFER,
                                            "no_snapshots": BOOLEAN})

ACCEPT: Versioned = unversioned(envelope("accept", {
    "type": "object",
    "properties": {"auth_key": {"type": ["string", "integer"]}},
    "required": ["auth_key"], "additionalProperties": False}))
