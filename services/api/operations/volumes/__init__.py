"""Volume operations: one object, :class:`VolumeOperations`, that the REST
resources, the RPC door and the other operations call, made of one part
per responsibility, each in its module:

- :mod:`.base`: the collaborators, the reads (a volume, and the snapshot,
  group and type a create or an action names), update, and the
  compare-and-swap and quota check the other parts share;
- :mod:`.create`: the create path (source, group, size, type, zones, the
  early check, one transaction for the quota check and the row, the cast);
- :mod:`.delete`: the delete path (and a cascade's snapshots);
- :mod:`.actions`: extend, revert, bootable, read-only, the legacy
  reserve and unreserve, reset-status;
- :mod:`.moves`: retype and migrate, which may move the data;
- :mod:`.metadata`: ``/volumes/{id}/metadata``.

Every status change is a compare-and-swap on the read value; the rules that
keep shared volumes safe come from ``common.states``.
"""

from services.api.operations.volumes.actions import Actions
from services.api.operations.volumes.base import EarlyCheck
from services.api.operations.volumes.create import Creating
from services.api.operations.volumes.create import Into
from services.api.operations.volumes.delete import Deleting
from services.api.operations.volumes.metadata import Metadata
from services.api.operations.volumes.moves import Moves

__all__ = ["EarlyCheck", "Into", "VolumeOperations"]


class VolumeOperations(Creating, Deleting, Actions, Moves, Metadata):
    """Every operation on volumes; each part stands on
    :class:`~services.api.operations.volumes.base.VolumeBase` (the
    constructor, the reads and the shared steps)."""
