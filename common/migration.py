"""A volume's move to another pool: the data half of a retype whose new
type its pool does not satisfy (``migration_policy`` ``on-demand``), or an
admin's ``os-migrate_volume`` to a named pool.

The move is a chain of casts, each step checking the row it acts on::

    api        retyping (pending type), or maintenance;
               migration starting (a move allowed)    -> source node
    source     migrating, where its data can be
               read (copy_source)                     -> scheduler
    scheduler  a pool for the (new) type, or checks
               the named one                          -> destination node
    destination  a copy from the source; the row moves
               to it with the (new) type (success)    -> source node
    source     removes its copy

The volume's status (``retyping`` or ``maintenance``) holds attaches,
deletes and snapshots off until the move ends.  Any step that cannot go
on ends it there: the volume keeps its type and its pool, ``migration_status``
``error``, the reason in ``error_reason`` for operators.  Each step checks
the row's status, host, migration status and pending type, so a late or
repeated message moves nothing twice and undoes no other move.
"""

from typing import Any

from oslo_log import log as logging

from common import constants
from common import exception
from common.context import RequestContext
from common.db.api import attachments as attachments_db
from common.db.api import timestamps
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
MIGRATION = constants.MigrationStatus
#: The statuses a volume moves in: a retype's and an admin migrate's.
MOVE_STATUSES = (STATUS.RETYPING, STATUS.MAINTENANCE)


def moving(source_host: str) -> dict:
    """The columns a migrating volume holds until its move ends."""
    return {"host": source_host, "migration_status": MIGRATION.MIGRATING}


def copy_carries(row: Any) -> bool:
    """Whether a copy can carry the volume: no attachments (an attached
    volume's data is moved by its compute host), snapshots or group."""
    return not (row.attachment_count or row.snapshot_count or row.group_id)


def moving_volume(ctxt: RequestContext, volume_id: str, type_id: str,
                  source_host: str | None = None) -> tuple[Any, dict] | None:
    """The volume and the specs of type ``type_id`` when a message of its
    move still applies: the volume moves (from ``source_host``, if given)
    to that type.  None otherwise, or when the type was deleted (the move
    then ends)."""
    try:
        row = volumes_db.volume_get(ctxt, volume_id)
    except exception.VolumeNotFound:
        return None
    if (row.status not in MOVE_STATUSES
            or row.migration_status != MIGRATION.MIGRATING
            or (row.pending_type_id or row.volume_type_id) != type_id
            or source_host not in (None, row.host)):
        return None
    try:
        return row, types_db.specs_of(types_db.type_get(ctxt, type_id))
    except exception.VolumeTypeNotFound:
        give_up(ctxt, row, "Its new type was deleted.")
        return None


def touch(ctxt: RequestContext, volume_id: str, source_host: str) -> bool:
    """Sign progress of the move of volume ``volume_id`` from
    ``source_host`` (its ``updated_at``), which ``end_stalled`` reads.

    :returns: whether it still moves.
    """
    return volumes_db.volume_cas(ctxt, volume_id, dict(
        moving(source_host), status=MOVE_STATUSES), {})


def stalled(ctxt: RequestContext, source_host: str,
            older_than: float) -> list[Any]:
    """The volumes moving from backend ``source_host`` (``host@backend``)
    with no sign of progress for ``older_than`` seconds."""
    found = []
    for status in MOVE_STATUSES:
        for row in volumes_db.volume_list(ctxt, filters={
                "status": status, "migration_status": MIGRATION.MIGRATING}):
            changed = row.updated_at or row.created_at
            if ((row.host or "").partition("#")[0] == source_host
                    and changed is not None
                    and timestamps.older_than(changed, older_than)):
                found.append(row)
    return found


def give_up(ctxt: RequestContext, row: Any, reason: str,
            expected: dict | None = None) -> bool:
    """End the move of volume ``row`` (as read) that cannot go on: the
    volume stays where it is, with its type.

    :param expected: what the row must still hold (default: migrating
        from where it was read).
    :returns: whether it did.
    """
    LOG.warning("Migration of volume %(id)s from %(host)s failed: "
                "%(reason)s", {"id": row.id, "host": row.host,
                               "reason": reason})
    return attachments_db.volume_leave_status(
        ctxt, row.id, row.status,
        {"migration_status": MIGRATION.ERROR, "previous_status": None,
         "pending_type_id": None, "error_reason": reason},
        expected=moving(row.host) if expected is None else expected)
