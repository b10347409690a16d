"""Quota limits, what projects have, and the check under a project's lock.

``enforce`` runs inside the writer transaction of the change it checks
(a volume's insert, an extend's or a retype's compare-and-swap): it locks
the project's row in ``project_locks`` (``SELECT ... FOR UPDATE``; SQLite
transactions already take the database's write lock at BEGIN), counts
what the project has (its volumes, and its snapshots by their volume's
type), and refuses what would go over a limit.  Two changes
of one project are so counted one after the other, whatever their number,
and nothing is counted but rows that exist.
"""

import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy import orm
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from common import exception
from common import quota
from common.context import RequestContext
from common.db import models
from common.db.api.engine import get_engine
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import SessionOrConnection

_Q = models.Quota
_QC = models.QuotaClass
_VOL = models.Volume.__table__
_SNAP = models.Snapshot.__table__
_LOCKS = models.ProjectLock.__table__


# -- limits -----------------------------------------------------------------
def _class_limits(session: orm.Session, class_name: str) -> dict[str, int]:
    rows = session.execute(sa.select(_QC.resource, _QC.hard_limit).where(
        _QC.class_name == class_name))
    return {resource: limit for resource, limit in rows}


#: The default class's limits (``own`` false) and a project's (true).
_BOTH_LIMITS = sa.union_all(
    sa.select(sa.literal(False).label("own"), _QC.resource,
              _QC.hard_limit).where(_QC.class_name == quota.DEFAULT_CLASS),
    sa.select(sa.literal(True), _Q.resource, _Q.hard_limit).where(
        _Q.project_id == sa.bindparam("project_id")))


def _both_limits(session: SessionOrConnection, project_id: str
                 ) -> tuple[dict[str, int], dict[str, int]]:
    """The default class's limits and the project's, in one (prebuilt)
    statement."""
    found: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for own, resource, limit in session.execute(
            _BOTH_LIMITS, {"project_id": project_id}):
        found[bool(own)][resource] = limit
    return found


def _type_names(session: orm.Session) -> list[str]:
    return list(session.execute(sa.select(models.VolumeType.name).order_by(
        models.VolumeType.created_at, models.VolumeType.name)).scalars())


@reader
def class_limits(context: RequestContext, conf: cfg.ConfigOpts,
                 class_name: str = quota.DEFAULT_CLASS) -> dict[str, int]:
    """Every resource's limit in a quota class (the configured default
    where the class sets none)."""
    session = context.session
    return quota.defaults(conf, quota.resources(_type_names(session)),
                          _class_limits(session, class_name))


@reader
def project_limits(context: RequestContext, conf: cfg.ConfigOpts,
                   project_id: str) -> dict[str, int]:
    """Every resource's limit for a project."""
    session = context.session
    return quota.limits(conf, quota.resources(_type_names(session)),
                        *_both_limits(session, project_id))


@reader
def resource_names(context: RequestContext) -> list[str]:
    return quota.resources(_type_names(context.session))


def _set(session: orm.Session,
         model: type[models.Quota] | type[models.QuotaClass], owner: str,
         key: str, limits: dict[str, int]) -> None:
    for resource, limit in limits.items():
        row = session.execute(sa.select(model).where(
            getattr(model, owner) == key,
            model.resource == resource)).scalars().first()
        if row is None:
            session.add(model(**{owner: key, "resource": resource,
                                 "hard_limit": limit}))
        else:
            row.hard_limit = limit


@retry_on_deadlock
@writer
def project_set(context: RequestContext, project_id: str,
                limits: dict[str, int]) -> None:
    _set(context.session, _Q, "project_id", project_id, limits)


@retry_on_deadlock
@writer
def class_set(context: RequestContext, class_name: str,
              limits: dict[str, int]) -> None:
    _set(context.session, _QC, "class_name", class_name, limits)


@retry_on_deadlock
@writer
def project_reset(context: RequestContext, project_id: str) -> None:
    """Drop a project's own limits: the defaults apply again."""
    context.session.execute(sa.delete(_Q).where(_Q.project_id == project_id))


# -- usage ------------------------------------------------------------------
def _gigabytes() -> sa.ColumnElement[int]:
    return sa.func.coalesce(_VOL.c.pending_size, _VOL.c.size)


def _usage_statement() -> sa.CompoundSelect[bool, int, int, int, int]:
    """What a project has, in all and of one type, in one statement: its
    volumes, and its snapshots (of the type of their volume); a row of
    each."""
    type_id: sa.BindParameter[str] = sa.bindparam("type_id")
    of_type = sa.or_(_VOL.c.volume_type_id == type_id,
                     _VOL.c.pending_type_id == type_id)

    def counts(snapshots: bool, gigabytes: sa.ColumnElement[int]
               ) -> sa.Select[bool, int, int, int, int]:
        return sa.select(
            sa.literal(snapshots).label("snapshots"), sa.func.count(),
            sa.func.coalesce(sa.func.sum(gigabytes), 0),
            sa.func.coalesce(sa.func.sum(sa.case((of_type, 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(sa.case((of_type, gigabytes),
                                                 else_=0)), 0))
    project_id: sa.BindParameter[str] = sa.bindparam("project_id")
    return sa.union_all(
        counts(False, _gigabytes()).where(_VOL.c.project_id == project_id),
        counts(True, _SNAP.c.volume_size).select_from(_SNAP.join(
            _VOL, _VOL.c.id == _SNAP.c.volume_id)).where(
            _SNAP.c.project_id == project_id))


_USAGE = _usage_statement()


def _usage(session: SessionOrConnection, project_id: str,
           type_id: str) -> quota.Usage:
    """What the project has, in all and of ``type_id`` (``_USAGE``)."""
    rows = session.execute(_USAGE, {"project_id": project_id,
                                    "type_id": type_id})
    found = {bool(snapshots): [int(value) for value in values]
             for snapshots, *values in rows}
    (volumes, gigabytes, type_volumes, type_gigabytes) = found[False]
    (snapshots, snapshot_gb, type_snapshots, type_snapshot_gb) = found[True]
    return quota.Usage(volumes, gigabytes + snapshot_gb, type_volumes,
                       type_gigabytes + type_snapshot_gb, snapshots,
                       type_snapshots)


@reader
def usage(context: RequestContext, project_id: str) -> dict[str, int]:
    """Resource name -> what the project has (``in_use``): volumes,
    snapshots, and the GiB of both, in all and per type."""
    session = context.session
    types = models.VolumeType.__table__

    def by_type(resource: str, table: sa.Table, joined: sa.Join,
                gigabytes: sa.ColumnElement[int]
                ) -> sa.Select[str, str, int, int]:
        return sa.select(sa.literal(resource).label("resource"), types.c.name,
                         sa.func.count(table.c.id),
                         sa.func.coalesce(sa.func.sum(gigabytes), 0)) \
            .select_from(joined).where(table.c.project_id == project_id) \
            .group_by(types.c.name)
    rows = session.execute(sa.union_all(
        by_type(quota.VOLUMES, _VOL, types.join(
            _VOL, _VOL.c.volume_type_id == types.c.id), _gigabytes()),
        by_type(quota.SNAPSHOTS, _SNAP, types.join(
            _VOL, _VOL.c.volume_type_id == types.c.id).join(
            _SNAP, _SNAP.c.volume_id == _VOL.c.id), _SNAP.c.volume_size)))
    # Every volume has a type: the project's totals are the types' sums.
    found = {quota.VOLUMES: 0, quota.SNAPSHOTS: 0, quota.GIGABYTES: 0,
             quota.GROUPS: _groups(session, project_id)}
    found[quota.BACKUPS], found[quota.BACKUP_GIGABYTES] = _backups(
        session, project_id)
    for resource, name, count, size in rows:
        gigabytes = quota.type_resource(quota.GIGABYTES, name)
        found[quota.type_resource(resource, name)] = int(count)
        found[gigabytes] = found.get(gigabytes, 0) + int(size)
        found[resource] += int(count)
        found[quota.GIGABYTES] += int(size)
    return found


# -- the check --------------------------------------------------------------
#: dialect -> an insert of a project's lock row that does nothing when
#: the row exists; and the locking read of the row.
_INSERT = {"postgresql": postgresql.insert(_LOCKS).on_conflict_do_nothing(),
           "sqlite": sqlite.insert(_LOCKS).on_conflict_do_nothing(),
           "mysql": mysql.insert(_LOCKS).prefix_with("IGNORE")}
_LOCK = sa.select(_LOCKS.c.project_id).where(
    _LOCKS.c.project_id == sa.bindparam("project_id")).with_for_update()


def _lock(session: SessionOrConnection, project_id: str) -> None:
    """Hold the project's lock row until the transaction ends."""
    key = {"project_id": project_id}
    session.execute(_INSERT[get_engine().dialect.name], key)
    session.execute(_LOCK, key)


def enforce(session: SessionOrConnection, conf: cfg.ConfigOpts,
            project_id: str, type_id: str, change: quota.Change) -> None:
    """Check ``change`` in the caller's writer transaction.

    :raises QuotaError: a limit would be exceeded.
    """
    class_limits, own = _both_limits(session, project_id)
    found = quota.limits(conf, change.names(), class_limits, own)
    quota.check_size(change, found)
    if not quota.needs_count(change, found):
        return
    _lock(session, project_id)
    quota.check(change, found, _usage(session, project_id, type_id))


def _groups(session: SessionOrConnection, project_id: str) -> int:
    return session.execute(sa.select(sa.func.count()).where(
        models.Group.project_id == project_id)).scalar_one()


def enforce_groups(session: SessionOrConnection, conf: cfg.ConfigOpts,
                   project_id: str) -> None:
    """Check one more group of the project in the caller's writer
    transaction, under the project's lock, as ``enforce``.

    :raises GroupLimitExceeded:
    """
    limit = quota.limits(conf, [quota.GROUPS],
                         *_both_limits(session, project_id))[quota.GROUPS]
    if limit == quota.UNLIMITED:
        return
    _lock(session, project_id)
    if _groups(session, project_id) + 1 > limit:
        raise exception.GroupLimitExceeded(allowed=limit)


def _backups(session: SessionOrConnection, project_id: str
             ) -> tuple[int, int]:
    """How many backups the project has, and their GiB."""
    table = models.Backup.__table__
    count, size = session.execute(sa.select(
        sa.func.count(), sa.func.coalesce(sa.func.sum(table.c.size), 0))
        .where(table.c.project_id == project_id)).one()
    return int(count), int(size)


def enforce_backups(session: SessionOrConnection, conf: cfg.ConfigOpts,
                    project_id: str, size: int) -> None:
    """Check one more backup of ``size`` GiB of the project in the caller's
    writer transaction, under the project's lock, as ``enforce``.

    :raises BackupLimitExceeded:
    :raises VolumeBackupSizeExceedsAvailableQuota:
    """
    found = quota.limits(conf, [quota.BACKUPS, quota.BACKUP_GIGABYTES],
                         *_both_limits(session, project_id))
    if all(limit == quota.UNLIMITED for limit in found.values()):
        return
    _lock(session, project_id)
    count, gigabytes = _backups(session, project_id)
    limit = found[quota.BACKUPS]
    if limit != quota.UNLIMITED and count + 1 > limit:
        raise exception.BackupLimitExceeded(allowed=limit)
    limit = found[quota.BACKUP_GIGABYTES]
    if limit != quota.UNLIMITED and gigabytes + size > limit:
        raise exception.VolumeBackupSizeExceedsAvailableQuota(
            requested=size, quota=limit, consumed=gigabytes)
