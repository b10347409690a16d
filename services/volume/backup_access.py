"""A backup service's access to a volume: the driver's connection, made
only while the volume is ``backing-up`` or ``restoring-backup`` (as
Cinder's backup manager connects through the volume's node, not through
a compute host's attachment)."""

from typing import Any

from common import constants
from common import context as ashlar_context
from common import exception
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.volume import backend as volume_backend

VOL = constants.VolumeStatus
#: The statuses in which a backup service may connect the volume.
CONNECTABLE = (VOL.BACKING_UP, VOL.RESTORING_BACKUP)


def _volume(ctxt: ashlar_context.RequestContext,
            volume_id: str) -> driver_base.DriverVolume:
    row = volumes_db.volume_get(ctxt, volume_id)
    if row.status not in CONNECTABLE:
        raise exception.InvalidVolume(
            reason="Volume %s is %s, not being backed up or restored."
            % (volume_id, row.status))
    return volume_backend.driver_volume(row)


def connect(ctxt: ashlar_context.RequestContext,
            driver: driver_base.VolumeDriver, volume_id: str,
            connector: dict[str, Any]) -> dict[str, Any]:
    """:raises InvalidVolume: the volume is in no backup status."""
    return driver.initialize_connection(_volume(ctxt, volume_id), connector)


def disconnect(ctxt: ashlar_context.RequestContext,
               driver: driver_base.VolumeDriver, volume_id: str,
               connector: dict[str, Any]) -> None:
    row = volumes_db.volume_get(ctxt, volume_id)
    driver.terminate_connection(volume_backend.driver_volume(row), connector)
