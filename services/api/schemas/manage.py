"""Request bodies of ``/os-volume-manage``, ``/manageable_volumes``,
``/os-snapshot-manage`` and ``/manageable_snapshots``.

From openstack/cinder ``cinder/api/schemas/volume_manage.py`` and
``snapshot_manage.py`` (``cluster`` from 3.16, as Cinder's
``VOLUME_MIGRATE_CLUSTER``).
"""

import copy

from services.api import microversion as mv
from services.api.schemas import (
    OPTIONAL_BOOLEAN,
    DESCRIPTION,
    HOSTNAME,
    NULLABLE_METADATA,
    NULLABLE_NAME,
    UUID,
    Schema,
    Versioned,
    envelope,
    unversioned,
)

_VOLUME: Schema = envelope("volume", {
    "type": "object",
    "properties": {
        "description": DESCRIPTION,
        "availability_zone": NULLABLE_NAME,
        # NOTE(ashlar): openstacksdk (``openstack volume create
        # --remote-source`` without --bootable) sends null, which Cinder's
        # schema refuses: it is taken, as false.
        "bootable": OPTIONAL_BOOLEAN,
        "volume_type": NULLABLE_NAME,
        "name": NULLABLE_NAME,
        "host": HOSTNAME,
        "ref": {"type": ["object", "string"]},
        "metadata": NULLABLE_METADATA,
    },
    "required": ["ref"],
    "additionalProperties": False,
})
_VOLUME_CLUSTER = copy.deepcopy(_VOLUME)
_VOLUME_CLUSTER["properties"]["volume"]["properties"]["cluster"] = {
    "type": ["string", "null"], "minLength": 0, "maxLength": 255}

MANAGE_VOLUME: Versioned = ((mv.MIN_VERSION, _VOLUME),
                            (mv.VOLUME_MIGRATE_CLUSTER, _VOLUME_CLUSTER))

MANAGE_SNAPSHOT: Versioned = unversioned(envelope("snapshot", {
    "type": "object",
    "properties": {
        "description": DESCRIPTION,
        "metadata": NULLABLE_METADATA,
        "name": NULLABLE_NAME,
        "volume_id": UUID,
        "ref": {"type": ["object", "null", "string"]},
    },
    "required": ["ref", "volume_id"],
    "additionalProperties": False,
}))

#: ``os-unmanage`` of a volume or a snapshot: any value.
UNMANAGE: Versioned = unversioned(envelope("os-unmanage", {}))
