"""Snapshots, their metadata, and the snapshot count of their volume.

A snapshot row comes and goes in the transaction that changes its volume's
``snapshot_count`` with a conditional ``UPDATE`` (as ``attachment_count``
in ``attachments``): ``snapshot_create`` adds one only ``WHERE`` the volume
is in the statuses the caller expects, and a volume delete that expects
``snapshot_count = 0`` (``volumes.volume_cas``) then either runs before the
create, which finds the volume ``deleting`` and writes nothing, or after it,
and finds the count at 1.  The database re-evaluates each ``WHERE`` against
the latest committed row after waiting for the row's lock (PostgreSQL,
InnoDB) or runs writers one at a time (SQLite), so never both.
"""

from collections.abc import Collection
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import metadata as metadata_db
from common.db.api.cas import compare_and_swap
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection
from common.db.api.paging import project_page
from common.db.api.timestamps import utcnow
from common.db.api.volumes import Check

SNAP = models.Snapshot
SNAP_STATUS = constants.SnapshotStatus
META = models.SnapshotMetadata
VOL = models.Volume

#: What a snapshot read brings along: its metadata, and its volume with
#: the volume's type (no type specs, volume metadata or attachments: read
#: the volume with ``volumes.volume_get`` for those).
_LOAD = (orm.selectinload(SNAP.snapshot_metadata),
         orm.joinedload(SNAP.volume).joinedload(VOL.volume_type).raiseload(
             models.VolumeType.extra_specs),
         orm.defaultload(SNAP.volume).raiseload(VOL.volume_metadata),
         orm.defaultload(SNAP.volume).raiseload(VOL.attachments))


def _get(session: orm.Session, snapshot_id: str) -> models.Snapshot:
    query = sa.select(SNAP).where(SNAP.id == snapshot_id).options(*_LOAD) \
        .execution_options(populate_existing=True)
    row = session.execute(query).unique().scalars().first()
    if row is None:
        raise exception.SnapshotNotFound(snapshot_id=snapshot_id)
    return row


def _matches(have: object, want: object) -> bool:
    """Whether a column's value passes ``expected`` (as compare_and_swap)."""
    if isinstance(want, (list, tuple, set, frozenset)):
        return have in want
    return have is None if want is None else have == want


def _wording(want: object) -> str:
    if isinstance(want, (list, tuple, set, frozenset)):
        return " or ".join(str(value) for value in want)
    return str(want)


def _refusal(session: SessionOrConnection, volume_id: str,
             expected: dict[str, Any]) -> exception.AshlarException | None:
    """Why the volume does not pass ``expected``, in Cinder's words (None:
    it does)."""
    columns = [getattr(VOL, name) for name in expected]
    row = session.execute(sa.select(VOL.id, *columns).where(
        VOL.id == volume_id)).first()
    if row is None:
        return exception.VolumeNotFound(volume_id=volume_id)
    for (name, want), have in zip(expected.items(), row[1:], strict=True):
        if not _matches(have, want):
            return exception.InvalidVolume(
                reason="Volume %s %s must be %s, but current %s is: %s."
                % (volume_id, name, _wording(want), name, have))
    return None


@retry_on_deadlock
@writer
def snapshot_create(context: RequestContext, values: dict[str, Any],
                    metadata: Mapping[str, str | None] | None,
                    volume_expected: dict[str, Any],
                    check: Check | None = None) -> models.Snapshot:
    """Insert a snapshot of ``values["volume_id"]`` and count it on the
    volume, in one transaction (``insert``).

    :returns: the row as read back, with its metadata and volume.
    """
    return insert(context.session, values, metadata, volume_expected, check)


def insert(session: orm.Session, values: dict[str, Any],
           metadata: Mapping[str, str | None] | None,
           volume_expected: dict[str, Any], check: Check | None = None
           ) -> models.Snapshot:
    """Insert a snapshot and count it on its volume, in the caller's
    transaction.

    NOTE(ashlar): ``check`` (the quota check, which locks the project's
    row) runs before the volume's ``UPDATE`` (which locks the volume's
    row): ``volumes.volume_cas`` with a check (extend, retype) takes the
    two locks in that order too, and the opposite order could deadlock
    with it.  A volume that fails ``volume_expected`` still refuses first,
    as in Cinder: a quota error is replaced by the volume's refusal.

    :param values: the snapshot's columns (``id``, ``volume_id``,
        ``project_id``, ``status``, ``volume_size`` at least).
    :param volume_expected: volume column -> value the volume must have
        (a list or tuple: one of them; None: NULL), as ``volume_cas``.
    :param check: runs first, in the same transaction
        (``quotas.enforce``).
    :raises VolumeNotFound: no such volume.
    :raises InvalidVolume: the volume does not pass ``volume_expected``.
    :raises QuotaError: from ``check``.
    """
    volume_id = values["volume_id"]
    if check is not None:
        try:
            check(session)
        except exception.QuotaError:
            refusal = _refusal(session, volume_id, volume_expected)
            if refusal is not None:
                raise refusal from None
            raise
    query, params = compare_and_swap(VOL, volume_id, volume_expected,
                                     {"updated_at": utcnow()})
    query = query.values(snapshot_count=VOL.snapshot_count + 1)
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(  # type: ignore[attr-defined]
            query, params).rowcount != 1:
        raise _refusal(session, volume_id, volume_expected) or \
            exception.InvalidVolume(reason="Volume %s changed while the "
                                    "snapshot was being created." % volume_id)
    row = SNAP(**values)
    row.snapshot_metadata = [META(key=k, value=v)
                             for k, v in (metadata or {}).items()]
    session.add(row)
    session.flush()
    return _get(session, row.id)


@reader
def snapshot_get(context: RequestContext, snapshot_id: str) -> models.Snapshot:
    """:raises SnapshotNotFound:"""
    return _get(context.session, snapshot_id)


@reader
def snapshot_list(context: RequestContext, project_id: str | None = None,
                  filters: dict[str, Any] | None = None,
                  limit: int | None = None, marker: str | None = None,
                  sort_keys: list[str] | None = None,
                  sort_dirs: list[str] | None = None,
                  offset: int | None = None) -> list[models.Snapshot]:
    """List snapshots of ``project_id`` (all projects when None), newest
    first unless sorted otherwise.

    :param filters: column -> value (``display_name``, ``status``,
        ``volume_id``, ...), all of which must match.
    :raises SnapshotNotFound: for an unknown marker, or one of another
        project, as Cinder does.
    """
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(SNAP).options(*_LOAD), SNAP,
                        project_id, filters, marker_row,
                        exception.SnapshotNotFound(snapshot_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@reader
def snapshots_of_backend(context: RequestContext, backend: str,
                         statuses: Collection[str]) -> list[Any]:
    """The snapshots of ``backend``'s volumes (``host@backend``, any of
    its pools) in any of ``statuses``, in one statement (a node's periodic
    resume read every project's snapshots of each status, one at a time):
    their id, status, created_at and updated_at."""
    vol = models.Volume
    return list(context.session.execute(sa.select(
        SNAP.id, SNAP.status, SNAP.created_at, SNAP.updated_at).join(
        vol, SNAP.volume_id == vol.id).where(
        SNAP.status.in_(sorted(statuses)),
        sa.or_(vol.host == backend,
               vol.host.startswith(backend + "#", autoescape=True))
    ).order_by(SNAP.created_at.desc(), SNAP.id.desc())).all())


@reader
def snapshots_of_volume(context: RequestContext,
                        volume_id: str) -> list[models.Snapshot]:
    """The volume's snapshots, oldest first (the last is the latest).

    ``created_at`` keeps microseconds on every database
    (``models.PRECISE_DATETIME``); ``id`` breaks the rare tie, so the order
    is the same at every call.
    """
    query = sa.select(SNAP).where(SNAP.volume_id == volume_id).options(
        *_LOAD).order_by(SNAP.created_at, SNAP.id)
    return list(context.session.execute(query).unique().scalars())


@retry_on_deadlock
@writer
def snapshot_update(context: RequestContext, snapshot_id: str,
                    values: dict[str, Any],
                    metadata: Mapping[str, str | None] | None = None,
                    delete_metadata: bool = False) -> models.Snapshot:
    """Change non-status fields and the metadata.

    :param metadata: keys to set, merged into the snapshot's metadata;
        with ``delete_metadata``, the whole new set (keys not in it go).
    :raises SnapshotNotFound:
    """
    session = context.session
    row = _get(session, snapshot_id)
    for key, value in values.items():
        setattr(row, key, value)
    if metadata is not None:
        metadata_db.set_items(session, row, "snapshot_metadata", META,
                              metadata, replace=delete_metadata)
    row.updated_at = utcnow()
    session.flush()
    return row


def all_deleting(session: SessionOrConnection, snapshot_ids: list[str],
                 force: bool) -> None:
    """Make each snapshot ``deleting`` in the caller's transaction (a
    cascade): each ``available`` or ``error``, or with ``force`` anything
    but ``restoring``.

    :raises InvalidSnapshot: one is not; the caller's transaction must
        roll back.
    """
    allowed = (SNAP.status != SNAP_STATUS.RESTORING if force
               else SNAP.status.in_(states.SNAPSHOT_DELETABLE))
    for snapshot_id in snapshot_ids:
        # Session.execute's DML result is a CursorResult (typed Result).
        if session.execute(sa.update(SNAP).where(  # type: ignore[attr-defined]
                SNAP.id == snapshot_id, allowed).values(
                    status=SNAP_STATUS.DELETING, updated_at=utcnow())).rowcount != 1:
            raise exception.InvalidSnapshot(
                reason="Snapshot %s of the volume cannot be deleted in its "
                       "status; a cascade deletes available or error "
                       "snapshots." % snapshot_id)


@retry_on_deadlock
@writer
def snapshot_cas(context: RequestContext, snapshot_id: str,
                 expected: dict[str, Any], values: dict[str, Any],
                 check: Check | None = None,
                 then: Check | None = None) -> bool:
    """Compare-and-swap the snapshot's status fields; see
    ``conditional_update``.  ``check`` first and, once the swap is made,
    ``then``, in the same transaction.

    :returns: whether the snapshot matched ``expected`` (and changed).
    """
    if check is not None:
        check(context.session)
    swapped = conditional_update(context.session, SNAP, snapshot_id,
                                 expected, values)
    if swapped and then is not None:
        then(context.session)
    return swapped


@retry_on_deadlock
@writer
def snapshot_destroy(context: RequestContext, snapshot_id: str,
                     check: Check | None = None,
                     then: Check | None = None) -> None:
    """Remove the row (its metadata goes with it) and uncount it on its
    volume, in one transaction; nothing when it is already gone.
    ``check`` first and, once the row is gone, ``then``, in the same
    transaction."""
    session = context.session
    if check is not None:
        check(session)
    volume_id = session.execute(sa.select(SNAP.volume_id).where(
        SNAP.id == snapshot_id)).scalar()
    if volume_id is None:
        return
    # NOTE(ashlar): of racing destroys, the DELETE removes the row once;
    # only that transaction uncounts it.
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(sa.delete(SNAP).where(  # type: ignore[attr-defined]
            SNAP.id == snapshot_id)).rowcount != 1:
        return
    session.execute(sa.update(VOL).where(VOL.id == volume_id).values(
        snapshot_count=VOL.snapshot_count - 1, updated_at=utcnow()))
    if then is not None:
        then(session)


@retry_on_deadlock
@writer
def snapshot_metadata_delete(context: RequestContext, snapshot_id: str,
                             key: str) -> None:
    """Remove one key of the snapshot's metadata.

    :raises SnapshotNotFound:
    :raises SnapshotMetadataNotFound: the snapshot has no such key.
    """
    metadata_db.delete_item(
        context.session, SNAP, META.snapshot_id, snapshot_id, key,
        exception.SnapshotNotFound(snapshot_id=snapshot_id),
        exception.SnapshotMetadataNotFound(snapshot_id=snapshot_id,
                                           metadata_key=key))


def metadata_of(row: models.Snapshot) -> dict[str, str | None]:
    return {item.key: item.value for item in row.snapshot_metadata}
