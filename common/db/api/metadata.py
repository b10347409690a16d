"""Key/value metadata of volumes, snapshots and backups: one way to merge,
replace and remove keys for all (each owner has its item model and relation)."""

from collections.abc import Mapping

import sqlalchemy as sa
from sqlalchemy import orm

from common.db import models
from common.db.api.timestamps import utcnow

#: An owner of metadata (``Volume``, ``Snapshot``) and its item model
#: (``VolumeMetadata``, ``SnapshotMetadata``).
_Owner = models.Volume | models.Snapshot | models.Backup
_Item = (type[models.VolumeMetadata] | type[models.SnapshotMetadata]
         | type[models.BackupMetadata])


def set_items(session: orm.Session, row: _Owner, relation: str, item: _Item,
              metadata: Mapping[str, str | None], replace: bool) -> None:
    """Merge ``metadata`` into ``row``'s items, or with ``replace`` make it
    the whole set (keys not in it go)."""
    if replace:
        # NOTE(ashlar): the old rows go first: SQLAlchemy would insert the
        # new ones before deleting the old, against (owner, key).
        setattr(row, relation, [])
        session.flush()
        setattr(row, relation, [item(key=k, value=v)
                                for k, v in metadata.items()])
        return
    items = getattr(row, relation)
    existing = {found.key: found for found in items}
    for key, value in metadata.items():
        if key in existing:
            existing[key].value = value
        else:
            items.append(item(key=key, value=value))


def delete_item(session: orm.Session, owner: type[_Owner],
                owner_column: orm.InstrumentedAttribute[str], owner_id: str,
                key: str, missing_owner: Exception,
                missing_key: Exception) -> None:
    """Remove one key of an owner's metadata and touch its ``updated_at``.

    :param owner: the owner's model (``Volume``, ``Snapshot``).
    :param owner_column: the item model's column naming the owner
        (``SnapshotMetadata.snapshot_id``).
    :raises: ``missing_owner`` (no such owner row) or ``missing_key``.
    """
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(sa.update(owner).where(  # type: ignore[attr-defined]
            owner.id == owner_id).values(updated_at=utcnow())).rowcount != 1:
        raise missing_owner
    item = owner_column.class_
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(sa.delete(item).where(  # type: ignore[attr-defined]
            owner_column == owner_id, item.key == key)).rowcount != 1:
        raise missing_key
