"""A backup service's access to a volume: the driver's connection, made
only while the volume is ``backing-up`` or ``restoring-backup`` (or a
snapshot ``backing-up``), as Cinder's backup manager connects through the
volume's node, not through a compute host's attachment."""

from typing import Any

from common import constants
from common import context as ashlar_context
from common import exception
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.volume import backend as volume_backend
from services.volume import snapshots as volume_snapshots

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


def _snapshot(ctxt: ashlar_context.RequestContext,
              snapshot_id: str) -> driver_base.DriverSnapshot:
    row = snapshots_db.snapshot_get(ctxt, snapshot_id)
    if row.status != constants.SnapshotStatus.BACKING_UP:
        raise exception.InvalidSnapshot(
            reason="Snapshot %s is %s, not being backed up."
            % (snapshot_id, row.status))
    return volume_snapshots.driver_snapshot(row)


def connect_snapshot(ctxt: ashlar_context.RequestContext,
                     driver: driver_base.VolumeDriver, snapshot_id: str,
                     connector: dict[str, Any]) -> dict[str, Any]:
    """:raises InvalidSnapshot: the snapshot is not ``backing-up``, or the
    backend cannot connect snapshots."""
    return driver.initialize_connection_snapshot(
        _snapshot(ctxt, snapshot_id), connector)


def disconnect_snapshot(ctxt: ashlar_context.RequestContext,
                        driver: driver_base.VolumeDriver, snapshot_id: str,
                        connector: dict[str, Any]) -> None:
    row = snapshots_db.snapshot_get(ctxt, snapshot_id)
    driver.terminate_connection_snapshot(
        volume_snapshots.driver_snapshot(row), connector)
