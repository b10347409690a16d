"""A volume's move to another pool: the data half of a retype whose new
type its pool does not satisfy (``migration_policy`` ``on-demand``).

The move is a chain of casts, each step checking the row it acts on::

    api        retyping (pending type)                -> source node
    source     its pool fails the type: migrating,
               where its data can be read (copy_source) -> scheduler
    scheduler  a pool for the new type                -> destination node
    destination  a copy from the source; the row moves
               to it with the new type (success)      -> source node
    source     removes its copy

Any step that cannot go on ends the retype here: the volume keeps its
type and its pool, ``migration_status`` ``error``, the reason in
``error_reason`` for operators.
"""

from typing import Any

from oslo_log import log as logging

from common import constants
from common.db.api import attachments as attachments_db

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
MIGRATION = constants.MigrationStatus


def moving(source_host: str) -> dict:
    """The columns a migrating volume holds until its move ends."""
    return {"host": source_host, "migration_status": MIGRATION.MIGRATING}


def give_up(ctxt: Any, volume_id: str, source_host: str, reason: str) -> bool:
    """End a move that cannot go on: the volume stays where it is, with
    its type.

    :returns: whether the volume was still moving from ``source_host``.
    """
    LOG.warning("Migration of volume %(id)s from %(host)s failed: "
                "%(reason)s", {"id": volume_id, "host": source_host,
                               "reason": reason})
    return attachments_db.volume_leave_status(
        ctxt, volume_id, STATUS.RETYPING,
        {"migration_status": MIGRATION.ERROR, "previous_status": None,
         "pending_type_id": None, "error_reason": reason},
        expected=moving(source_host))
