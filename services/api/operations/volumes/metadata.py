"""A volume's metadata (``/volumes/{id}/metadata``): read, merge or
replace, set one key, delete one key."""

from typing import Any

from common import constants
from common import exception
from common.context import RequestContext
from common.db.api import volumes as volumes_db
from services.api.operations.volumes import base


class Metadata(base.VolumeBase):
    """``/volumes/{id}/metadata`` and ``/volumes/{id}/metadata/{key}``."""

    def metadata(self, ctxt: RequestContext,
                 volume_id: str) -> dict[str, str | None]:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:get_volume_metadata", {"project_id": row.project_id})
        return volumes_db.metadata_of(row)

    def set_metadata(self, ctxt: RequestContext, volume_id: str,
                     metadata: dict[str, str], replace: bool,
                     item: bool = False) -> dict[str, str | None]:
        """Merge ``metadata`` into the volume's (POST), or replace it all
        (PUT); ``item``: one key set through ``/metadata/{key}``.

        :raises InvalidVolume: the volume is in maintenance.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update_volume_metadata" if replace or item
                 else "volume:create_volume_metadata",
                 {"project_id": row.project_id})
        _refuse_metadata_change(row, "Updating")
        row = volumes_db.volume_update(ctxt, volume_id, {}, metadata,
                                       delete_metadata=replace)
        return volumes_db.metadata_of(row)

    def delete_metadata(self, ctxt: RequestContext, volume_id: str,
                        key: str) -> None:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:delete_volume_metadata",
                 {"project_id": row.project_id})
        _refuse_metadata_change(row, "Deleting")
        volumes_db.volume_metadata_delete(ctxt, volume_id, key)


def _refuse_metadata_change(row: Any, doing: str) -> None:
    """Cinder's refusal of a metadata change while the volume is in
    maintenance (Ashlar never uploads to an image)."""
    if row.status == constants.VolumeStatus.MAINTENANCE:
        raise exception.InvalidVolume(
            reason="%s volume metadata is not allowed for volumes in %s "
                   "status." % (doing, row.status))
