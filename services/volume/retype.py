"""Retype a volume on this backend: take the new type if this pool
satisfies it, else (``on-demand``) start its move to a pool that does
(``migrate.start_move``).

``retyping`` -> what the attachments say, with the new type and its
multiattach and encryption flags, or the old type when this pool does not
satisfy the new one and the volume cannot move.
"""

from typing import Any

from oslo_log import log as logging

from common import attach_rules
from common import constants
from common import context as ashlar_context
from common import exception
from common import extra_specs
from common.db.api import attachments as attachments_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import migrate

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
MIGRATION = constants.MigrationStatus


def retype(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
           volume_id: str, new_type_id: str, migration_policy: str) -> None:
    """Retype the volume (in hand) if it is still ``retyping`` to
    ``new_type_id`` and not moving; a retype the api let move
    (``migration_status`` ``starting``) moves whatever the policy."""
    try:
        row = volumes_db.volume_get(ctxt, volume_id)
        vtype = types_db.type_get(ctxt, new_type_id)
    except exception.NotFound:
        row = None
    if (row is None or row.status != STATUS.RETYPING
            or row.pending_type_id != new_type_id
            or row.migration_status == MIGRATION.MIGRATING):
        return
    specs = types_db.specs_of(vtype)
    missing = here.missing(row, specs)
    values: dict = {"previous_status": None, "pending_type_id": None}
    if row.migration_status == MIGRATION.STARTING:
        values["migration_status"] = None
        migration_policy = "on-demand"
    multiattach = extra_specs.is_multiattach_spec(specs)
    if missing and migration_policy == "on-demand" and \
            migrate.start_move(here, ctxt, row, vtype.id) is None:
        return
    if missing:
        LOG.warning("Volume %(id)s not retyped to %(type)s: its pool "
                    "does not offer %(missing)s and migration (policy "
                    "%(policy)s) is not available",
                    {"id": volume_id, "type": vtype.name,
                     "missing": ", ".join(missing),
                     "policy": migration_policy})
    elif _driver_retype(here, row, multiattach):
        values.update(volume_type_id=vtype.id, multiattach=multiattach,
                      encrypted=attach_rules.is_encrypted(specs))
    else:
        missing = ["a backend change of its multiattach flag"]
    attachments_db.volume_leave_status(
        ctxt, volume_id, STATUS.RETYPING, values, expected={
            "pending_type_id": new_type_id,
            "migration_status": row.migration_status})
    LOG.info("Retype of volume %(id)s to %(type)s %(result)s",
             {"id": volume_id, "type": vtype.name,
              "result": "refused" if missing else "done"})


def _driver_retype(here: volume_backend.Backend, row: Any,
                   multiattach: bool) -> bool:
    """Let the driver follow a change of the multiattach flag; False
    when it cannot (the volume keeps its type)."""
    if bool(row.multiattach) == multiattach:
        return True
    try:
        here.driver.retype(volume_backend.driver_volume(row), multiattach)
    except Exception:
        LOG.exception("Driver failed to make volume %(id)s %(what)s",
                      {"id": row.id, "what": "multiattach" if multiattach
                       else "single-host"})
        return False
    return True
