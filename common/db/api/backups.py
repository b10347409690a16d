"""Backups, and the volume status a backup holds while it reads.

A backup row comes in the transaction that checks the project's backup
quotas (under its lock row, ``quotas.enforce_backups``), moves its volume
to ``backing-up`` with a conditional ``UPDATE`` (the volume must be in the
statuses the caller expects) and, for an incremental backup, counts it on
its parent (``num_dependent_backups``, ``WHERE`` the parent is
``available``).  A parent's delete expects that count at 0, so of a
delete and an incremental backup of the same parent only one lands.
"""

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api import metadata as metadata_db
from common.db.api import quotas as quotas_db
from common.db.api import services as services_db
from common.db.api import snapshots as snapshots_db
from common.db.api.cas import compare_and_swap
from common.db.api.cas import conditional_update
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection
from common.db.api.paging import project_page
from common.db.api.snapshots import _refusal
from common.db.api.timestamps import utcnow
from sqlalchemy import orm

BAK = models.Backup
VOL = models.Volume


def _get(session: orm.Session, backup_id: str) -> models.Backup:
    row = session.execute(sa.select(BAK).where(BAK.id == backup_id)
                          .execution_options(populate_existing=True)
                          ).scalars().first()
    if row is None:
        raise exception.BackupNotFound(backup_id=backup_id)
    return row


def _swap_volume(session: SessionOrConnection, volume_id: str,
                 expected: dict[str, Any], status: str) -> None:
    """Move the volume to ``status`` if it passes ``expected``.

    :raises InvalidVolume: it does not (VolumeNotFound: it is gone).
    """
    query, params = compare_and_swap(VOL, volume_id, expected,
                                     {"status": status,
                                      "updated_at": utcnow()})
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(query, params).rowcount != 1:  # type: ignore
        raise _refusal(session, volume_id, expected) or \
            exception.InvalidVolume(reason="Volume %s changed." % volume_id)


def _count_on_parent(session: SessionOrConnection, parent_id: str) -> None:
    """:raises InvalidBackup: the parent is not available (or is gone)."""
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(sa.update(BAK).where(  # type: ignore[attr-defined]
            BAK.id == parent_id, BAK.status.in_(states.BACKUP_USABLE))
            .values(num_dependent_backups=BAK.num_dependent_backups + 1,
                    updated_at=utcnow())).rowcount != 1:
        raise exception.InvalidBackup(
            reason="The parent backup %s must be available for an "
            "incremental backup." % parent_id)


def _swap_snapshot(session: SessionOrConnection, snapshot_id: str,
                   volume_id: str) -> None:
    """The volume's ``available`` snapshot to ``backing-up``.

    :raises InvalidSnapshot: it is in another status, or of another volume
        (SnapshotNotFound: it is gone).
    """
    if not conditional_update(
            session, models.Snapshot, snapshot_id,
            {"status": states.SNAPSHOT_BACKUPABLE, "volume_id": volume_id},
            {"status": constants.SnapshotStatus.BACKING_UP}):
        status = session.execute(sa.select(models.Snapshot.status).where(
            models.Snapshot.id == snapshot_id)).scalar()
        if status is None:
            raise exception.SnapshotNotFound(snapshot_id=snapshot_id)
        raise exception.InvalidSnapshot(
            reason="Snapshot to be backed up must be available, but the "
            "current status is \"%s\"." % status)


@retry_on_deadlock
@writer
def backup_create(context: RequestContext, conf: cfg.ConfigOpts,
                  values: dict[str, Any], volume_expected: dict[str, Any],
                  metadata: Mapping[str, str | None] | None = None
                  ) -> models.Backup:
    """Insert a backup ``creating``, its volume going ``backing-up`` (or,
    with ``snapshot_id``, that snapshot), in one transaction.

    :param values: the backup's columns (``id``, ``volume_id``,
        ``project_id``, ``size`` at least; ``parent_id`` for an
        incremental one, ``snapshot_id`` for a backup of a snapshot).
    :raises QuotaError: over the backup quotas.
    :raises InvalidVolume: the volume does not pass ``volume_expected``.
    :raises InvalidSnapshot: the snapshot is not ``available``.
    :raises InvalidBackup: the parent is not available.
    """
    session = context.session
    try:
        quotas_db.enforce_backups(session, conf, values["project_id"],
                                  values["size"])
    except exception.QuotaError:
        refusal = _refusal(session, values["volume_id"], volume_expected)
        if refusal is not None:
            raise refusal from None
        raise
    if values.get("snapshot_id"):
        _swap_snapshot(session, values["snapshot_id"], values["volume_id"])
    else:
        _swap_volume(session, values["volume_id"], volume_expected,
                     constants.VolumeStatus.BACKING_UP)
    if values.get("parent_id"):
        _count_on_parent(session, values["parent_id"])
    row = BAK(status=constants.BackupStatus.CREATING, **values)
    row.backup_metadata = [models.BackupMetadata(key=k, value=v)
                           for k, v in (metadata or {}).items()]
    session.add(row)
    session.flush()
    return _get(session, row.id)


@reader
def backup_get(context: RequestContext, backup_id: str) -> models.Backup:
    """:raises BackupNotFound:"""
    return _get(context.session, backup_id)


@reader
def latest_backup(context: RequestContext, volume_id: str,
                  project_id: str | None,
                  snapshot_id: str | None = None) -> models.Backup | None:
    """The volume's newest available backup of ``project_id`` (an
    incremental one's parent, as in Cinder: the requester's project's, by
    ``data_timestamp``); with ``snapshot_id``, the newest of the data older
    than that snapshot.

    NOTE(ashlar): compared with the snapshot's ``created_at`` as stored:
    MariaDB keeps whole seconds, so a time read in Python (with its
    microseconds) took a backup of the same second as older.  In a tie
    the older parent is chosen (a larger increment, never newer data).
    """
    query = sa.select(BAK).where(BAK.volume_id == volume_id,
                                 BAK.project_id == project_id,
                                 BAK.status.in_(states.BACKUP_USABLE))
    if snapshot_id is not None:
        taken = sa.select(models.Snapshot.created_at).where(
            models.Snapshot.id == snapshot_id).scalar_subquery()
        query = query.where(BAK.data_timestamp < taken)
    return context.session.execute(query.order_by(
        BAK.data_timestamp.desc(), BAK.created_at.desc(),
        BAK.id)).scalars().first()


@reader
def backups_in_flight(context: RequestContext,
                      host: str) -> list[models.Backup]:
    """``host``'s backups that a running step left in a transitional
    status (``states.BACKUP_IN_FLIGHT``)."""
    return list(context.session.execute(sa.select(BAK).where(
        BAK.host == host, BAK.status.in_(states.BACKUP_IN_FLIGHT)
    ).order_by(BAK.created_at, BAK.id)).scalars())


@reader
def in_flight_of_down_services(context: RequestContext,
                               service_down_time: int) -> list[models.Backup]:
    """The in-flight backups (``states.BACKUP_IN_FLIGHT``) of backup
    services seen down: no heartbeat for ``service_down_time`` seconds."""
    down = [row.host for row in context.session.execute(
        sa.select(models.Service).where(
            models.Service.binary == constants.BACKUP_BINARY)).scalars()
        if not services_db.is_up(row, service_down_time)]
    if not down:
        return []
    return list(context.session.execute(sa.select(BAK).where(
        BAK.host.in_(down), BAK.status.in_(states.BACKUP_IN_FLIGHT)
    ).order_by(BAK.created_at, BAK.id)).scalars())


@retry_on_deadlock
@writer
def backup_take_over(context: RequestContext, row: models.Backup,
                     new_host: str, service_down_time: int) -> bool:
    """Move ``row`` from its backup service to ``new_host`` if that service
    is still down and the row still its own, in the same status.

    The dead service's row is locked (``FOR UPDATE``) first: a restart's
    registration (which stamps it alive before the restarted service
    resumes its own rows) waits for this transaction, or this one sees it
    up.  So of two takers, or a taker and the owner back, one works on it.

    :returns: whether the backup is ``new_host``'s now.
    """
    owner = context.session.execute(sa.select(models.Service).where(
        models.Service.host == row.host,
        models.Service.binary == constants.BACKUP_BINARY
    ).with_for_update()).scalars().first()
    if owner is None or services_db.is_up(owner, service_down_time):
        return False
    return conditional_update(context.session, BAK, row.id,
                              {"host": row.host, "status": row.status},
                              {"host": new_host})


@reader
def backup_list(context: RequestContext, project_id: str | None = None,
                filters: dict[str, Any] | None = None,
                limit: int | None = None, marker: str | None = None,
                sort_keys: list[str] | None = None,
                sort_dirs: list[str] | None = None,
                offset: int | None = None) -> list[models.Backup]:
    """List backups of ``project_id`` (all projects when None), newest
    first unless sorted otherwise.

    :raises BackupNotFound: an unknown marker, or one of another project.
    """
    marker_row = _get(context.session, marker) if marker else None
    return project_page(context.session.query(BAK), BAK, project_id,
                        filters, marker_row,
                        exception.BackupNotFound(backup_id=marker),
                        limit, sort_keys, sort_dirs, offset)


@retry_on_deadlock
@writer
def backup_cas(context: RequestContext, backup_id: str,
               expected: dict[str, Any], values: dict[str, Any],
               volume: tuple[str, dict[str, Any], str] | None = None
               ) -> bool:
    """Compare-and-swap the backup's columns and, in the same transaction,
    move a volume: ``volume`` is ``(id, expected, new status)``.

    :returns: whether the backup matched ``expected`` (and changed).
    :raises InvalidVolume: the volume does not pass its expectation
        (nothing changes).
    """
    session = context.session
    if not conditional_update(session, BAK, backup_id, expected, values):
        return False
    if volume is not None:
        _swap_volume(session, *volume)
    return True


@retry_on_deadlock
@writer
def volume_settle(context: RequestContext, volume_id: str, expected: str,
                  status: str) -> bool:
    """The volume back from ``expected`` (``backing-up``, ...) to
    ``status``; False when it was not in ``expected``."""
    return conditional_update(context.session, VOL, volume_id,
                              {"status": expected}, {"status": status})


@retry_on_deadlock
@writer
def backup_destroy(context: RequestContext, backup_id: str) -> bool:
    """Remove a ``deleting`` backup with no dependent backup and uncount it
    on its parent, in one transaction.

    :returns: whether it removed the row.
    """
    session = context.session
    parent_id = session.execute(sa.select(BAK.parent_id).where(
        BAK.id == backup_id)).scalar()
    # Session.execute's DML result is a CursorResult (typed Result).
    if session.execute(sa.delete(BAK).where(  # type: ignore[attr-defined]
            BAK.id == backup_id, BAK.num_dependent_backups == 0)
            ).rowcount != 1:
        return False
    session.execute(sa.delete(models.BackupMetadata).where(
        models.BackupMetadata.backup_id == backup_id))
    if parent_id is not None:
        session.execute(sa.update(BAK).where(BAK.id == parent_id).values(
            num_dependent_backups=BAK.num_dependent_backups - 1,
            updated_at=utcnow()))
    return True


@reader
def creating_backup_of(context: RequestContext, volume_id: str,
                       snapshot_id: str | None) -> bool:
    """Whether a backup of the volume (or of its snapshot) is
    ``creating``."""
    source = BAK.snapshot_id == snapshot_id if snapshot_id else \
        BAK.snapshot_id.is_(None)
    return context.session.execute(sa.select(BAK.id).where(
        BAK.volume_id == volume_id, source,
        BAK.status == constants.BackupStatus.CREATING).limit(1)
    ).first() is not None


def release_source(context: RequestContext, volume_id: str,
                   snapshot_id: str | None) -> None:
    """The volume out of ``backing-up`` to what its attachments say (or
    the snapshot back to ``available``), unless a backup of it is still
    ``creating``: while the source is held no other backup of it starts,
    so the answer cannot change before the swap.  A source gone (a backup
    outlives its volume) is nothing to release."""
    if creating_backup_of(context, volume_id, snapshot_id):
        return
    if snapshot_id:
        snapshots_db.snapshot_cas(
            context, snapshot_id,
            {"status": constants.SnapshotStatus.BACKING_UP},
            {"status": constants.SnapshotStatus.AVAILABLE})
        return
    try:
        attachments_db.volume_leave_status(
            context, volume_id, constants.VolumeStatus.BACKING_UP)
    except exception.VolumeNotFound:
        pass


@retry_on_deadlock
@writer
def backup_update(context: RequestContext, backup_id: str,
                  values: dict[str, Any],
                  metadata: Mapping[str, str | None] | None) -> models.Backup:
    """Set a backup's columns (name, description) and, unless None,
    replace its metadata (Cinder's backup update).

    :raises BackupNotFound:
    """
    session = context.session
    row = _get(session, backup_id)
    for key, value in values.items():
        setattr(row, key, value)
    if metadata is not None:
        metadata_db.set_items(session, row, "backup_metadata",
                              models.BackupMetadata, metadata, replace=True)
    row.updated_at = utcnow()
    session.flush()
    return _get(session, backup_id)


@retry_on_deadlock
@writer
def backup_import_create(context: RequestContext, conf: cfg.ConfigOpts,
                         values: dict[str, Any]) -> models.Backup:
    """Insert an imported backup ``creating`` under the quota check (its
    columns from the record come once its service has checked it).

    :raises QuotaError: over the backup quotas.
    :raises InvalidBackup: a backup with that id exists.
    """
    session = context.session
    quotas_db.enforce_backups(session, conf, values["project_id"],
                              values["size"])
    if session.execute(sa.select(BAK.id).where(
            BAK.id == values["id"])).first() is not None:
        raise exception.InvalidBackup(
            reason="Backup already exists in database.")
    session.add(BAK(status=constants.BackupStatus.CREATING, **values))
    session.flush()
    return _get(session, values["id"])


@retry_on_deadlock
@writer
def backup_import_settle(context: RequestContext, backup_id: str,
                         values: dict[str, Any],
                         metadata: Mapping[str, str | None]) -> bool:
    """A ``creating`` import to ``available`` with the record's columns
    and metadata, counted on its parent (if that is here) and counting the
    incremental backups already here that name it, in one transaction.

    :returns: whether it was still ``creating``.
    """
    session = context.session
    children = session.execute(sa.select(sa.func.count()).where(
        BAK.parent_id == backup_id)).scalar_one()
    if not conditional_update(session, BAK, backup_id,
                              {"status": constants.BackupStatus.CREATING},
                              dict(values, num_dependent_backups=children,
                                   status=constants.BackupStatus.AVAILABLE)):
        return False
    if values.get("parent_id"):
        session.execute(sa.update(BAK).where(
            BAK.id == values["parent_id"]).values(
            num_dependent_backups=BAK.num_dependent_backups + 1,
            updated_at=utcnow()))
    metadata_db.set_items(session, _get(session, backup_id),
                          "backup_metadata", models.BackupMetadata,
                          metadata, replace=True)
    return True
