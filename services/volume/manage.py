"""Adopt existing storage as a volume or a snapshot, and forget one.

``managing`` -> ``available`` once the driver renamed what the ``ref``
names (``error_managing`` / ``error`` on failure); ``unmanaging`` -> the
row is gone, the storage left as it is (``error_deleting`` on failure).
The api checked the ``ref`` and read its size before it wrote the row
(``manage_existing_get_size``), so a failure here is a change of the
backend meanwhile.
"""

from typing import Any

from oslo_log import log as logging

from common import capabilities
from common import constants
from common import context as ashlar_context
from common import exception
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import snapshots

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
Context = ashlar_context.RequestContext
#: Cinder's drivers' words for storage a row already refers to.
ALREADY_MANAGED = "already managed"


def manageable(here: volume_backend.Backend, ctxt: Context,
               snapshot: bool) -> list[dict[str, Any]]:
    """The driver's list, those a row refers to marked not safe."""
    driver = here.driver
    found = (driver.manageable_snapshots() if snapshot
             else driver.manageable_volumes())
    entries = []
    for entry in found:
        entry = {key: value for key, value in entry.items() if key != "kind"}
        row = _row(ctxt, entry.get("cinder_id"), snapshot)
        if row is None:
            entry["cinder_id"] = None
        else:
            entry.update(safe_to_manage=False, reason_not_safe=ALREADY_MANAGED)
            if snapshot:
                entry["source_reference"] = {"source-id": row.volume_id}
        entries.append(entry)
    return entries


def _row(ctxt: Context, object_id: str | None, snapshot: bool) -> Any:
    """The volume (or snapshot) row ``object_id`` names, or None."""
    if not object_id:
        return None
    try:
        if snapshot:
            return snapshots_db.snapshot_get(ctxt, object_id)
        return volumes_db.volume_get(ctxt, object_id)
    except (exception.VolumeNotFound, exception.SnapshotNotFound):
        return None


def manage(here: volume_backend.Backend, ctxt: Context, volume_id: str,
           ref: dict[str, Any]) -> bool:
    """Adopt ``ref`` as the volume (in hand) if it is still ``managing``.

    :returns: whether it was adopted (the backend's capacity changed).
    """
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.MANAGING)
    if row is None:
        return False
    volume = volume_backend.driver_volume(row)
    update = here.driver_call(
        ctxt, row, "manage", STATUS.ERROR_MANAGING,
        lambda: here.driver.manage_existing(volume, ref))
    if update is None:
        return False
    if not volumes_db.volume_cas(
            ctxt, volume_id, {"status": STATUS.MANAGING},
            dict(update, status=STATUS.AVAILABLE, host=_with_pool(here, row),
                 service_uuid=here.service_uuid)):
        LOG.warning("Volume %s changed status while being managed",
                    volume_id)
    LOG.info("Managed %(ref)s as volume %(id)s on %(host)s",
             {"ref": ref, "id": volume_id, "host": here.service_host})
    return True


def _with_pool(here: volume_backend.Backend, row: Any) -> str:
    """The row's ``host@backend``, given without a pool, with the pool of
    a backend that has one (Cinder's manager appends it too)."""
    if "#" in row.host:
        return str(row.host)
    pools = [name.partition("#")[2] for name in capabilities.flatten(
        here.service_host, here.stats(), 0.0)]
    return "%s#%s" % (row.host, pools[0]) if len(pools) == 1 else row.host


def unmanage(here: volume_backend.Backend, ctxt: Context,
             volume_id: str) -> bool:
    """Forget the volume (in hand) if it is still ``unmanaging``; its
    storage stays.

    :returns: whether its row is gone.
    """
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.UNMANAGING)
    if row is None:
        return False
    volume = volume_backend.driver_volume(row)

    def forget() -> dict:
        here.driver.unmanage(volume)
        return {}
    if here.driver_call(ctxt, row, "unmanage", STATUS.ERROR_DELETING,
                        forget) is None:
        return False
    volumes_db.volume_destroy(ctxt, volume_id)
    LOG.info("Unmanaged volume %(id)s; %(where)s left on %(host)s",
             {"id": volume_id, "where": row.provider_location,
              "host": here.service_host})
    return True


def manage_snapshot(worker: snapshots.SnapshotWorker, ctxt: Context,
                    snapshot_id: str, ref: dict[str, Any]) -> bool:
    """Adopt ``ref`` as the ``managing`` snapshot: ``available``, or
    ``error`` on failure."""
    row = worker.in_status(ctxt, snapshot_id, SNAP.MANAGING)
    if row is None:
        return False
    try:
        update = worker.driver.manage_existing_snapshot(
            snapshots.driver_snapshot(row), ref) or {}
    except Exception as exc:
        LOG.exception("Driver failed to manage %(ref)s as snapshot %(id)s",
                      {"ref": ref, "id": snapshot_id})
        worker.failed(ctxt, row, SNAP.ERROR, "manage the snapshot", exc)
        return False
    snapshots_db.snapshot_cas(ctxt, snapshot_id, {"status": SNAP.MANAGING},
                              dict(update, status=SNAP.AVAILABLE,
                                   progress="100%"))
    LOG.info("Managed %(ref)s as snapshot %(id)s",
             {"ref": ref, "id": snapshot_id})
    return True


def unmanage_snapshot(worker: snapshots.SnapshotWorker, ctxt: Context,
                      snapshot_id: str) -> bool:
    """Forget the ``unmanaging`` snapshot; its storage stays."""
    row = worker.in_status(ctxt, snapshot_id, SNAP.UNMANAGING)
    if row is None:
        return False
    try:
        worker.driver.unmanage_snapshot(snapshots.driver_snapshot(row))
    except Exception as exc:
        LOG.exception("Driver failed to unmanage snapshot %s", snapshot_id)
        worker.failed(ctxt, row, SNAP.ERROR_DELETING,
                      "unmanage the snapshot", exc)
        return False
    snapshots_db.snapshot_destroy(ctxt, snapshot_id)
    LOG.info("Unmanaged snapshot %s", snapshot_id)
    return True
