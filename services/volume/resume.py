"""The sweep that resumes this backend's interrupted work.

Creates, deletes, snapshots, reverts, extends, retypes and unmanages that
no message will bring are finished (an extend or retype from the size or
type the api recorded as pending); a manage older than an RPC timeout,
whose reference went with its message, ends ``available`` if its storage
was adopted, else ``error_managing``; an admin's migrate whose message
was lost ends, and so does a move with no sign of progress for
``migration_stall_timeout`` (its message was lost or its destination
died: ``end_stalled``).  At
start the sweep takes everything a previous run began: RPC messages are
acknowledged before they are handled, so work in hand when the process
died is not redelivered.  Periodically it takes what is older than an RPC
timeout: a cast that never arrived (a broker restart can drop a queue).

Work is resumed through the manager's own RPC methods (``Endpoint``), so
it is claimed as a late cast would be and never done twice.
"""

import functools
from typing import Any, Protocol

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common import migration
from common.db.api import attachments as attachments_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from common.db.api.timestamps import older_than
from services.volume import backend as volume_backend
from services.volume import snapshots

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
MIGRATION = constants.MigrationStatus
Context = ashlar_context.RequestContext


class Endpoint(Protocol):
    """What the sweep uses of the volume manager."""

    conf: cfg.ConfigOpts
    service_host: str
    snapshots: snapshots.SnapshotWorker
    here: volume_backend.Backend

    def create_volume(self, ctxt: Context, volume_id: str) -> None: ...

    def delete_volume(self, ctxt: Context, volume_id: str) -> None: ...

    def create_snapshot(self, ctxt: Context, snapshot_id: str) -> None: ...

    def delete_snapshot(self, ctxt: Context, snapshot_id: str) -> None: ...

    def revert_to_snapshot(self, ctxt: Context, volume_id: str,
                           snapshot_id: str | None) -> None: ...

    def unmanage_volume(self, ctxt: Context, volume_id: str) -> None: ...

    def unmanage_snapshot(self, ctxt: Context, snapshot_id: str) -> None: ...

    def extend_volume(self, ctxt: Context, volume_id: str,
                      new_size: int) -> None: ...

    def retype_volume(self, ctxt: Context, volume_id: str, new_type_id: str,
                      migration_policy: str) -> None: ...


def finish_interrupted_work(mgr: Endpoint, min_age: float = 0.0) -> None:
    """Resume this backend's rows in an unfinished status, those changed
    at least ``min_age`` seconds ago (0: all)."""
    ctxt = ashlar_context.get_admin_context()
    snaps = mgr.snapshots
    mine = _my_volumes(mgr.service_host)
    mine_snap = _my_snapshots(mgr.service_host)
    for kind, rows, method in (
            ("volume", mine[STATUS.CREATING],
             mgr.create_volume),
            ("volume", mine[STATUS.DELETING],
             mgr.delete_volume),
            ("snapshot", mine_snap[SNAP.CREATING],
             mgr.create_snapshot),
            ("snapshot", mine_snap[SNAP.DELETING],
             mgr.delete_snapshot),
            ("volume", mine[STATUS.REVERTING],
             lambda ctxt, volume_id: mgr.revert_to_snapshot(
                 ctxt, volume_id, snaps.restoring_of(ctxt, volume_id))),
            ("volume", mine[STATUS.EXTENDING],
             functools.partial(_resume_extend, mgr)),
            ("volume", mine[STATUS.RETYPING],
             functools.partial(_resume_retype, mgr)),
            ("volume", mine[STATUS.MAINTENANCE],
             _resume_migrate),
            ("volume", mine[STATUS.UNMANAGING],
             mgr.unmanage_volume),
            ("snapshot", mine_snap[SNAP.UNMANAGING],
             mgr.unmanage_snapshot),
            ("volume", mine[STATUS.MANAGING],
             functools.partial(_resume_manage, mgr)),
            ("snapshot", mine_snap[SNAP.MANAGING],
             functools.partial(_resume_manage_snapshot, mgr))):
        for row in rows:
            changed = row.updated_at or row.created_at
            if min_age and changed is not None and not older_than(changed,
                                                                  min_age):
                continue
            LOG.info("Resuming %(status)s %(kind)s %(id)s",
                     {"status": row.status, "kind": kind, "id": row.id})
            method(ctxt, row.id)
    end_stalled(mgr, ctxt)


def end_stalled(mgr: Endpoint, ctxt: Context) -> None:
    """End the moves from this backend with no sign of progress for
    ``migration_stall_timeout``: the message of a step was lost, or the
    destination died while it copied.  The volume stays here, with its
    type, ``migration_status`` ``error``; a destination that still copies
    finds the move ended and removes its copy."""
    bound = mgr.conf.migration_stall_timeout
    for row in migration.stalled(ctxt, mgr.service_host, bound):
        migration.give_up(
            ctxt, row, "Its move made no progress for %d seconds: a "
            "message was lost or its destination died. Move it again."
            % bound, expected=dict(migration.moving(row.host),
                                   updated_at=row.updated_at))


#: The volume statuses a node resumes its work in.
RESUMED = (STATUS.CREATING, STATUS.DELETING, STATUS.REVERTING,
           STATUS.EXTENDING, STATUS.RETYPING, STATUS.MAINTENANCE,
           STATUS.UNMANAGING, STATUS.MANAGING)
#: The snapshot statuses a node resumes its work in.
RESUMED_SNAPSHOTS = (SNAP.CREATING, SNAP.DELETING, SNAP.UNMANAGING,
                     SNAP.MANAGING)


def _my_volumes(service_host: str) -> dict[str, list]:
    """This backend's volumes in each status of ``RESUMED`` (one read)."""
    found: dict[str, list] = {status: [] for status in RESUMED}
    for row in volumes_db.volumes_of_backend(
            ashlar_context.get_admin_context(), service_host, RESUMED):
        found[row.status].append(row)
    return found


def _my_snapshots(service_host: str) -> dict[str, list]:
    """This backend's snapshots in each status of ``RESUMED_SNAPSHOTS``
    (one read)."""
    found: dict[str, list] = {status: [] for status in RESUMED_SNAPSHOTS}
    for row in snapshots_db.snapshots_of_backend(
            ashlar_context.get_admin_context(), service_host,
            RESUMED_SNAPSHOTS):
        found[row.status].append(row)
    return found


def _older(row: Any, seconds: float) -> bool:
    """Whether ``row`` last changed more than ``seconds`` ago."""
    changed = row.updated_at or row.created_at
    return changed is not None and older_than(changed, seconds)


def _resume_manage(mgr: Endpoint, ctxt: Context, volume_id: str) -> None:
    """A manage whose cast was lost: its ``ref`` went with it.  Once older
    than an RPC timeout (its message may still be queued), the volume is
    ``available`` if its storage was adopted already, else
    ``error_managing`` (it may be deleted, and managed again)."""
    with mgr.here.in_hand(volume_id) as mine:
        row = volume_backend.volume_in(ctxt, volume_id, STATUS.MANAGING)
        if not mine or row is None or not _older(row,
                                                 mgr.conf.rpc_call_timeout):
            return
        try:
            adopted = volume_id in mgr.here.driver.volume_locations()
        except Exception:
            LOG.exception("Backend %s cannot list its volumes",
                          mgr.service_host)
            return
        values = {"status": STATUS.AVAILABLE} if adopted else {
            "status": STATUS.ERROR_MANAGING, "error_reason": "The manage "
            "was interrupted before the backend adopted the storage; "
            "manage it again."}
        volumes_db.volume_cas(ctxt, volume_id, {"status": STATUS.MANAGING},
                              values)


def _resume_manage_snapshot(mgr: Endpoint, ctxt: Context,
                            snapshot_id: str) -> None:
    """A snapshot manage whose cast was lost (its ``ref`` with it), older
    than an RPC timeout: ``error``, which may be deleted."""
    with mgr.here.in_hand(snapshot_id) as mine:
        row = mgr.snapshots.in_status(ctxt, snapshot_id, SNAP.MANAGING)
        if mine and row is not None and _older(row,
                                               mgr.conf.rpc_call_timeout):
            snapshots_db.snapshot_cas(
                ctxt, snapshot_id, {"status": SNAP.MANAGING},
                {"status": SNAP.ERROR, "error_reason": "The manage was "
                 "interrupted before the backend adopted the storage."})


def _resume_extend(mgr: Endpoint, ctxt: Context, volume_id: str) -> None:
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.EXTENDING)
    if row is None:
        return
    if row.pending_size is None:
        # NOTE(ashlar): an extend of a release before pending sizes.
        volumes_db.volume_cas(ctxt, volume_id,
                              {"status": STATUS.EXTENDING},
                              {"status": STATUS.ERROR_EXTENDING,
                               "error_reason": "The extend was "
                               "interrupted and its size is unknown."})
        return
    mgr.extend_volume(ctxt, volume_id, row.pending_size)


def _resume_retype(mgr: Endpoint, ctxt: Context, volume_id: str) -> None:
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.RETYPING)
    if row is None:
        return
    if row.migration_status == MIGRATION.MIGRATING:
        LOG.info("Volume %s is moving to another pool; the move ends "
                 "it", volume_id)
        return
    if row.pending_type_id is None:
        attachments_db.volume_leave_status(
            ctxt, volume_id, STATUS.RETYPING, {"previous_status": None})
        LOG.warning("Retype of volume %s was interrupted and its type "
                    "is unknown; it keeps its type", volume_id)
        return
    mgr.retype_volume(ctxt, volume_id, row.pending_type_id, "never")


def _resume_migrate(ctxt: Context, volume_id: str) -> None:
    """An admin's migrate whose message was lost ends (its destination
    went with the message); one that moves goes on elsewhere."""
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.MAINTENANCE)
    if row is not None and row.migration_status == MIGRATION.STARTING:
        migration.give_up(ctxt, row, "Its migration's message was lost "
                          "before this node took it up; migrate it "
                          "again.", expected={
                              "host": row.host,
                              "migration_status": MIGRATION.STARTING})
