"""What a volume is made from: a snapshot or another volume.

A volume made from a source is made on the source's pool (the backend
copies or clones it there), with the source's type unless another is
asked for, and at least the source's size; Cinder's rules and messages.
"""

import dataclasses
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common import states
from common.db import models
from common.db.api import sources as sources_db
from common.db.api.volumes import Check
from services.api import faults

SNAP = constants.SnapshotStatus


@dataclasses.dataclass(frozen=True)
class Source:
    kind: str           # "snapshot" or "volume"
    id: str
    pool: str | None    # host@backend#pool of the data
    size: int
    volume_type_id: str
    availability_zone: str | None
    #: The statuses the source must keep until the new row is written.
    statuses: tuple[str, ...]

    def describe(self) -> str:
        return "%s %s" % (self.kind, self.id)


def of_snapshot(row: models.Snapshot) -> Source:
    """:raises InvalidSnapshot: it is not ``available``."""
    if row.status != SNAP.AVAILABLE:
        raise exception.InvalidSnapshot(
            reason="Originating snapshot status must be one of 'available' "
            "values")
    return Source("snapshot", row.id, row.volume.host, row.volume_size,
                  row.volume.volume_type_id, row.volume.availability_zone,
                  states.SNAPSHOT_COPYABLE)


def of_volume(row: Any) -> Source:
    """:raises InvalidVolume: it is not ``available`` or ``in-use``."""
    if row.status not in states.VOLUME_COPYABLE:
        raise exception.InvalidVolume(
            reason="Unable to create a volume from an originating source "
            "volume when its status is not 'available' or 'in-use'.")
    return Source("volume", row.id, row.host, row.size, row.volume_type_id,
                  row.availability_zone, states.VOLUME_COPYABLE)


def require_size(size: object, sourced: bool) -> None:
    """A create names its size unless it copies a snapshot or a volume.

    :param sourced: a ``snapshot_id`` or ``source_volid`` is given.
    :raises Invalid: neither a size nor a source (Cinder's 400, naming the
        field).
    """
    if size is None and not sourced:
        raise exception.Invalid(faults.bad_request(
            "Invalid input for field/attribute size: it is required "
            "unless snapshot_id or source_volid is given."))


def checked_size(size: int | None, source: Source | None) -> int:
    """The new volume's size: as asked, else the source's.

    :raises Invalid: no size and no source (:func:`require_size`).
    :raises InvalidInput: smaller than the source.
    """
    require_size(size, sourced=source is not None)
    if source is None:
        assert size is not None  # require_size refused it
        return size
    if size is None:
        return source.size
    if size < source.size:
        what = "the snapshot size" if source.kind == "snapshot" else \
            "original volume size"
        raise exception.InvalidInput(
            reason="Volume size '%(size)s'GB cannot be smaller than %(what)s "
            "%(src)sGB. They must be >= %(orig)s size." % {
                "size": size, "what": what, "src": source.size,
                "orig": "original snapshot" if source.kind == "snapshot"
                else "original volume"})
    return size


def holding(source: Source | None, first: Check) -> Check:
    """``first`` (the quota check), then the source held in the same
    transaction (``common.db.api.sources.hold``)."""
    if source is None:
        return first

    def check(session: orm.Session | sa.engine.Connection) -> None:
        first(session)
        sources_db.hold(session, source.kind, source.id, source.statuses)
    return check


def columns(source: Source | None) -> dict[str, str | None]:
    """The new row's source columns, and its pool (placed already)."""
    if source is None:
        return {}
    return {"snapshot_id": source.id if source.kind == "snapshot" else None,
            "source_volid": source.id if source.kind == "volume" else None,
            "host": source.pool}
