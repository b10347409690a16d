"""Request bodies of ``PUT /clusters/{enable,disable}`` (3.7) and
``POST /workers/cleanup`` (3.24).

From openstack/cinder ``cinder/api/schemas/clusters.py`` and
``workers.py``.
"""

from services.api.schemas import (
    BOOLEAN,
    HOSTNAME,
    NAME,
    NULLABLE_STRING,
    OPTIONAL_UUID,
    Versioned,
    unversioned,
)

ENABLE: Versioned = unversioned({
    "type": "object",
    "properties": {"name": NAME, "binary": NULLABLE_STRING},
    "required": ["name"],
    "additionalProperties": False,
})

DISABLE: Versioned = unversioned({
    "type": "object",
    "properties": {
        "name": NAME, "binary": NULLABLE_STRING,
        "disabled_reason": {"type": ["string", "null"],
                            "format": "disabled_reason"}},
    "required": ["name"],
    "additionalProperties": False,
})

CLEANUP: Versioned = unversioned({
    "type": "object",
    "properties": {
        "cluster_name": HOSTNAME,
        "disabled": BOOLEAN,
        "host": HOSTNAME,
        "is_up": BOOLEAN,
        "binary": {"enum": ["cinder-volume", "cinder-scheduler"]},
        "resource_id": OPTIONAL_UUID,
        "resource_type": {"type": ["string", "null"], "minLength": 0,
                          "maxLength": 40},
        "service_id": {"type": ["integer", "string", "null"],
                       "pattern": "^[0-9]*$", "maxLength": 11},
    },
    "additionalProperties": False,
})
