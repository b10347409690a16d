"""Request bodies of the metadata of volumes and snapshots
(``/{volumes,snapshots}/{id}/metadata[/{key}]``).

From openstack/cinder ``cinder/api/schemas/volume_metadata.py`` and
``snapshot_manage.py``'s metadata bodies.
"""

from services.api.schemas import (
    EXTRA_SPECS,
    Versioned,
    envelope,
    unversioned,
)

METADATA: Versioned = unversioned(envelope("metadata", EXTRA_SPECS))

METADATA_ITEM: Versioned = unversioned(envelope("meta", {
    **EXTRA_SPECS, "minProperties": 1, "maxProperties": 1}))
