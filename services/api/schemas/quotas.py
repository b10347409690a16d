"""Request bodies of ``os-quota-sets`` and ``os-quota-class-sets``.

The keys and limits are checked by the operations, with Cinder's messages
("Bad key(s) in quota set", "Quota limit must be -1 or greater.").
"""

from services.api.schemas import Versioned, envelope, unversioned

_LIMITS = {"type": "object",
           "additionalProperties": {"type": ["integer", "string"]}}

UPDATE: Versioned = unversioned(envelope("quota_set", _LIMITS))
CLASS_UPDATE: Versioned = unversioned(envelope("quota_class_set", _LIMITS))
