"""Request bodies of ``PUT /os-services/{action}``.

From openstack/cinder ``cinder/api/schemas/services.py``.  These bodies have
no wrapper key, so their errors carry no "Invalid input for field/attribute"
prefix unless they concern one field.
"""

import copy

from services.api.schemas import (
    HOSTNAME,
    NULLABLE_STRING,
    Schema,
    Versioned,
    unversioned,
)

_ENABLE_DISABLE: Schema = {
    "type": "object",
    "properties": {
        "binary": {"type": "string", "minLength": 1, "maxLength": 255},
        "host": HOSTNAME,
        "cluster": NULLABLE_STRING,
        # NOTE: the deprecated name of 'binary', echoed in the response.
        "service": {"type": "string", "minLength": 1, "maxLength": 255},
    },
    "anyOf": [{"required": ["binary"]}, {"required": ["service"]}],
    "additionalProperties": False,
}

_DISABLE_LOG_REASON = copy.deepcopy(_ENABLE_DISABLE)
_DISABLE_LOG_REASON["properties"]["disabled_reason"] = {
    "type": "string", "minLength": 1, "maxLength": 255,
    "format": "disabled_reason"}

#: ``freeze`` and ``thaw`` (replication failover).
FREEZE_THAW: Versioned = unversioned({
    "type": "object",
    "properties": {"host": HOSTNAME, "cluster": NULLABLE_STRING},
    "additionalProperties": False,
})

ACTIONS: dict[str, Versioned] = {
    "enable": unversioned(_ENABLE_DISABLE),
    "disable": unversioned(_ENABLE_DISABLE),
    "disable-log-reason": unversioned(_DISABLE_LOG_REASON),
}
