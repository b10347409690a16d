"""Key/value metadata of volumes and snapshots: one way to merge, replace
and remove keys for both (each owner has its item model and relation)."""

from typing import Any

import sqlalchemy as sa

from common.db.api.timestamps import utcnow


def set_items(session: Any, row: Any, relation: str, item: type,
              metadata: dict, replace: bool) -> None:
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


def delete_item(session: Any, owner: type, owner_column: Any,
                owner_id: str, key: str, missing_owner: Exception,
                missing_key: Exception) -> None:
    """Remove one key of an owner's metadata and touch its ``updated_at``.

    :param owner: the owner's model (``Volume``, ``Snapshot``).
    :param owner_column: the item model's column naming the owner
        (``SnapshotMetadata.snapshot_id``).
    :raises: ``missing_owner`` (no such owner row) or ``missing_key``.
    """
    if session.execute(sa.update(owner).where(owner.id == owner_id).values(
            updated_at=utcnow())).rowcount != 1:
        raise missing_owner
    item = owner_column.class_
    if session.execute(sa.delete(item).where(
            owner_column == owner_id, item.key == key)).rowcount != 1:
        raise missing_key
