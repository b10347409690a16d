"""Move a volume to another pool (``common.migration``), on the volume
nodes' side.

The source's node marks the volume ``migrating`` and asks the scheduler
for a pool (``start_move``: a retype whose type this pool does not satisfy,
or an admin's ``migrate``); the destination's node copies it from what the
source's driver said of it and takes it, of its new type (``move_in``);
the source's node then removes its copy (``delete_migrated``).  A move that
cannot go on ends with the volume where it was (``migration.give_up``).
"""

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from oslo_log import log as logging

from common import attach_rules
from common import constants
from common import context as ashlar_context
from common import exception
from common import extra_specs
from common import migration
from common import zones
from common.db.api import attachments as attachments_db
from common.db.api import volumes as volumes_db
from common.db.api.timestamps import older_than
from drivers import base as driver_base
from services.volume import backend as volume_backend
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
MIGRATION = constants.MigrationStatus


def migrate(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
            volume_id: str, host: str) -> None:
    """An admin's migrate of a volume here to pool ``host``, with its
    type, if it is still ``maintenance`` and ``starting``."""
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.MAINTENANCE)
    if row is None or row.migration_status != MIGRATION.STARTING:
        return
    reason = start_move(here, ctxt, row, row.volume_type_id, host)
    if reason is not None:
        migration.give_up(ctxt, row, reason, expected={
            "host": row.host, "migration_status": MIGRATION.STARTING})


def start_move(here: volume_backend.Backend,
               ctxt: ashlar_context.RequestContext, row: Any, type_id: str,
               host: str | None = None) -> str | None:
    """Mark the volume migrating and ask the scheduler for a pool of
    type ``type_id`` (``host``, if named), telling where its data can
    be read.

    :returns: why it cannot move (attachments, snapshots, a group,
        older services), or None when it moves or its move ended.
    """
    if not migration.copy_carries(row):
        return ("It has attachments, snapshots or a group, which a "
                "copy cannot carry.")
    if not (here.scheduler_rpcapi.client.can_send_version(
            here.scheduler_rpcapi.MIGRATION_VERSION)
            and here.volume_rpcapi.client.can_send_version(
                here.volume_rpcapi.MIGRATION_VERSION)):
        return "The scheduler or volume services are too old to move it."
    if not volumes_db.volume_cas(
            ctxt, row.id, {"status": row.status, "host": row.host,
                           "migration_status": row.migration_status},
            {"migration_status": MIGRATION.MIGRATING}):
        return None
    try:
        source = here.driver.copy_source(volume_backend.driver_volume(row))
    except Exception as exc:
        migration.give_up(ctxt, row, "Backend %s cannot give the "
                          "volume's data to another backend: %s"
                          % (here.service_host, exc))
        return None
    here.scheduler_rpcapi.migrate_volume(ctxt, row.id, type_id, source, host)
    LOG.info("Volume %(id)s moves from %(host)s",
             {"id": row.id, "host": row.host})
    return None


def move_in(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
            volume_id: str, host: str, source_host: str, source: dict,
            new_type_id: str) -> bool:
    """Copy a moving volume (in hand) to pool ``host`` here from
    ``source`` and take it; tell the source's node to remove its copy.

    :returns: whether it was taken (the backend's capacity changed).
    """
    moving = migration.moving_volume(ctxt, volume_id, new_type_id,
                                     source_host)
    if moving is None:
        return False
    row, specs = moving
    multiattach = extra_specs.is_multiattach_spec(specs)
    target = driver_base.DriverVolume(id=row.id, size=row.size,
                                      name=row.display_name,
                                      multiattach=multiattach)
    try:
        with _signing(here, volume_id, source_host):
            update = here.driver.create_volume_from_copy(target, source)
    except Exception as exc:
        LOG.exception("Driver failed to copy volume %s", volume_id)
        migration.give_up(ctxt, row, "Backend %s failed to copy the "
                          "volume from %s: %s"
                          % (here.service_host, source_host, exc))
        return False
    values = dict(update or {}, host=host, volume_type_id=new_type_id,
                  availability_zone=zones.of_pool(
                      here.pool(host), here.conf.storage_availability_zone),
                  multiattach=multiattach,
                  encrypted=attach_rules.is_encrypted(specs),
                  migration_status=MIGRATION.SUCCESS,
                  previous_status=None, pending_type_id=None,
                  error_reason=None, service_uuid=here.service_uuid)
    if not attachments_db.volume_leave_status(
            ctxt, volume_id, row.status, values,
            expected=dict(migration.moving(source_host),
                          pending_type_id=row.pending_type_id)):
        LOG.warning("Volume %s stopped moving while it was copied; "
                    "removing the copy", volume_id)
        _driver_delete(here, target)
        return False
    here.volume_rpcapi.delete_migrated(ctxt, volume_id, source_host,
                                       row.size, row.provider_location)
    LOG.info("Moved volume %(id)s from %(src)s to %(dst)s",
             {"id": volume_id, "src": source_host, "dst": host})
    return True


def delete_migrated(here: volume_backend.Backend,
                    ctxt: ashlar_context.RequestContext, volume_id: str,
                    size: int, provider_location: str | None) -> bool:
    """Remove the copy a volume left here when it moved away, unless its
    row points here again.

    :returns: whether a removal was attempted (capacity may have changed).
    """
    try:
        where = volume_rpcapi.backend_of(
            volumes_db.volume_get(ctxt, volume_id).host or "")
    except exception.VolumeNotFound:
        where = None
    if where == here.service_host:
        LOG.warning("Volume %s is here again; its copy stays",
                    volume_id)
        return False
    _driver_delete(here, driver_base.DriverVolume(
        id=volume_id, size=size, provider_location=provider_location))
    return True


@contextlib.contextmanager
def _signing(here: volume_backend.Backend, volume_id: str,
             source_host: str) -> Iterator[None]:
    """While a copy runs, sign the move's progress every third of
    ``migration_stall_timeout`` (``migration.touch``), so that its
    source's sweep does not end it (``resume.end_stalled``)."""
    stop = threading.Event()
    interval = here.conf.migration_stall_timeout / 3.0

    def sign() -> None:
        ctxt = ashlar_context.get_admin_context()
        while not stop.wait(interval):
            try:
                if not migration.touch(ctxt, volume_id, source_host):
                    return
            except Exception:
                LOG.exception("Could not sign the move of volume %s",
                              volume_id)
    signer = threading.Thread(target=sign, daemon=True,
                              name="move-%s" % volume_id)
    signer.start()
    try:
        yield
    finally:
        stop.set()
        signer.join()


def remove_leftovers(here: volume_backend.Backend,
                     ctxt: ashlar_context.RequestContext,
                     min_age: float) -> bool:
    """Remove the copies this backend holds of volumes that moved away
    (their source's copy, when ``delete_migrated`` was lost) or whose move
    ended while this backend copied them, changed at least ``min_age``
    seconds ago.

    Only a copy of a volume whose row says it moved (``migration_status``
    ``success`` or ``error``), lives on another backend and is somewhere
    else (another ``provider_location``) goes: never a copy a row refers
    to, nor one of a volume with no row (this backend's storage may be
    shared with others).

    :returns: whether a removal was attempted (capacity may have changed).
    """
    try:
        held = here.driver.volume_locations()
    except Exception:
        LOG.exception("Backend %s cannot list its volumes",
                      here.service_host)
        return False
    removed = False
    for row in volumes_db.moved_volumes(ctxt, held) if held else []:
        if not _left_here(here, row, held[row.id], min_age):
            continue
        with here.in_hand(row.id) as mine:
            if not mine or not _left_here(
                    here, _reread(ctxt, row.id), held[row.id], min_age):
                continue
            LOG.warning("Removing the copy of volume %(id)s left on "
                        "%(here)s; it moved to %(host)s",
                        {"id": row.id, "here": here.service_host,
                         "host": row.host})
            _driver_delete(here, driver_base.DriverVolume(
                id=row.id, size=row.size, provider_location=held[row.id]))
            removed = True
    return removed


def _left_here(here: volume_backend.Backend, row: Any,
               location: str | None, min_age: float) -> bool:
    """Whether this backend's copy (at ``location``) of volume ``row`` is
    one no row refers to: see ``remove_leftovers``."""
    if row is None:
        return False
    changed = row.updated_at or row.created_at
    return (row.migration_status in (MIGRATION.SUCCESS, MIGRATION.ERROR)
            and volume_rpcapi.backend_of(row.host or "") != here.service_host
            and row.provider_location is not None
            and row.provider_location != location
            and changed is not None and older_than(changed, min_age))


def _reread(ctxt: ashlar_context.RequestContext, volume_id: str
            ) -> Any | None:
    try:
        return volumes_db.volume_get(ctxt, volume_id)
    except exception.VolumeNotFound:
        return None


def _driver_delete(here: volume_backend.Backend,
                   volume: driver_base.DriverVolume) -> None:
    """Remove a copy no row points to; a failure leaves it (logged)."""
    try:
        here.driver.delete_volume(volume)
    except Exception:
        LOG.exception("Driver failed to remove the copy of volume %s "
                      "that no row points to; remove it by hand",
                      volume.id)
