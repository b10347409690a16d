"""Delete a volume from this backend, then its row.

Its ``deleting`` snapshots go first (a cascade, RPC 1.5); a failure is
``error_deleting`` with the backend's reason and, as in Cinder, no user
message.
"""

from typing import Any

from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import snapshots

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus


def delete(here: volume_backend.Backend, snaps: snapshots.SnapshotWorker,
           ctxt: ashlar_context.RequestContext, volume_id: str) -> bool:
    """Remove the volume (in hand) if it is still ``deleting``.

    :returns: whether it is gone (the backend's capacity changed).
    """
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.DELETING)
    if row is None or not _snapshots_deleted(here, snaps, ctxt, row) or \
            here.driver_call(ctxt, row, "delete",
                             STATUS.ERROR_DELETING) is None:
        return False
    volumes_db.volume_destroy(ctxt, volume_id)
    LOG.info("Deleted volume %s", volume_id)
    return True


def _snapshots_deleted(here: volume_backend.Backend,
                       snaps: snapshots.SnapshotWorker,
                       ctxt: ashlar_context.RequestContext, row: Any) -> bool:
    """A cascade: delete the volume's snapshots first.  False while one
    remains: one another delete has in hand keeps the volume
    ``deleting`` (the sweep casts it again); one that failed makes it
    ``error_deleting``."""
    if not row.snapshot_count:
        return True
    for snap in snapshots_db.snapshots_of_volume(ctxt, row.id):
        with here.in_hand(snap.id) as mine:
            if mine:
                snaps.delete(ctxt, snap.id)
    left = snapshots_db.snapshots_of_volume(ctxt, row.id)
    failed = [s.id for s in left if s.status != SNAP.DELETING]
    if failed:
        volumes_db.volume_cas(
            ctxt, row.id, {"status": STATUS.DELETING},
            {"status": STATUS.ERROR_DELETING, "error_reason":
             "Its snapshots %s could not be deleted." % ", ".join(failed)})
    return not left
