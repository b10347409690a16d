"""Clusters of volume services (``[DEFAULT] cluster``): their rows, their
members' liveness, and the services a cleanup request names.

A cluster's row (``clusters``) is made by its first member
(``services.service_register``) and holds its enabled state; what it looks
like from outside (up, members, members down, last heartbeat) is read
from its members' ``services`` rows, as Cinder's ``Cluster`` computes it.
"""

import datetime
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import orm

from common import constants
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import services as services_db
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.timestamps import utcnow


class ClusterNotFound(exception.NotFound):
    msg_fmt = "Cluster %(id)s could not be found."


class ClusterState(NamedTuple):
    """A cluster row and what its members' heartbeats say of it."""

    row: models.Cluster
    num_hosts: int
    num_down_hosts: int
    #: The youngest of its members' heartbeats (None: none heartbeats).
    last_heartbeat: datetime.datetime | None

    @property
    def is_up(self) -> bool:
        """Up while one member heartbeats (Cinder's ``is_up``)."""
        return self.num_hosts > self.num_down_hosts


def name_matches(column: orm.InstrumentedAttribute[str] |
                 orm.InstrumentedAttribute[str | None],
                 value: str) -> sa.ColumnElement[bool]:
    """Cinder's ``_filter_host`` on a cluster name: ``cluster@backend#pool``
    matches itself only; ``cluster@backend`` also its pools; a bare
    ``cluster`` also each of its backends."""
    conditions = [column == value]
    if "#" not in value:
        conditions.append(column.like(value + "#%"))
        if "@" not in value:
            conditions.append(column.like(value + "@%"))
    return sa.or_(*conditions)


def _states(context: RequestContext, rows: list[models.Cluster],
            service_down_time: int) -> list[ClusterState]:
    members = context.session.execute(
        sa.select(models.Service).where(models.Service.cluster_name.in_(
            [row.name for row in rows]))).scalars().all() if rows else []
    states = []
    for row in rows:
        mine = [m for m in members
                if (m.cluster_name, m.binary) == (row.name, row.binary)]
        beats = [m.heartbeat_at for m in mine if m.heartbeat_at is not None]
        states.append(ClusterState(
            row, len(mine),
            sum(1 for m in mine
                if not services_db.is_up(m, service_down_time)),
            max(beats) if beats else None))
    return states


@reader
def cluster_list(context: RequestContext, service_down_time: int,
                 name: str | None = None, binary: str | None = None,
                 disabled: bool | None = None) -> list[ClusterState]:
    """The clusters (with ``name``, as :func:`name_matches` reads it, of
    ``binary``, enabled or disabled), oldest first."""
    query = sa.select(models.Cluster).order_by(models.Cluster.id)
    if name is not None:
        query = query.where(name_matches(models.Cluster.name, name))
    if binary is not None:
        query = query.where(models.Cluster.binary == binary)
    if disabled is not None:
        query = query.where(models.Cluster.disabled == disabled)
    rows = list(context.session.execute(query).scalars())
    return _states(context, rows, service_down_time)


def _shown_filters(name: str, binary: str) -> str:
    """Cinder's way of naming a cluster it did not find: its filters."""
    return "{'binary': '%s', 'name': '%s'}" % (
        constants.cinder_binary(binary), name)


def cluster_get(context: RequestContext, name: str, binary: str,
                service_down_time: int) -> ClusterState:
    """The first cluster ``name`` matches.

    :raises ClusterNotFound:
    """
    found = cluster_list(context, service_down_time, name=name,
                         binary=binary)
    if not found:
        raise ClusterNotFound(id=_shown_filters(name, binary))
    return found[0]


@retry_on_deadlock
@writer
def cluster_set_disabled(context: RequestContext, name: str, binary: str,
                         disabled: bool, reason: str | None
                         ) -> models.Cluster:
    """Enable or disable the first cluster ``name`` matches: its backends
    are placed on again, or no longer (``services.service_liveness``).

    :raises ClusterNotFound:
    """
    row = context.session.execute(
        sa.select(models.Cluster).where(
            name_matches(models.Cluster.name, name),
            models.Cluster.binary == binary).order_by(models.Cluster.id)
    ).scalars().first()
    if row is None:
        raise ClusterNotFound(id=_shown_filters(name, binary))
    row.disabled = disabled
    row.disabled_reason = reason
    row.updated_at = utcnow()
    return row


class CleanupTarget(NamedTuple):
    """A service a cleanup request names, and who would resume its work."""

    service: models.Service
    #: The RPC server that resumes the service's work: itself while it
    #: heartbeats, or its cluster while a member does; None: nobody can.
    server: str | None


def _service_disabled(disabled: bool) -> sa.ColumnElement[bool]:
    """Cinder's ``_clustered_bool_field_filter``: a member of a cluster is
    disabled when its cluster is, a service alone when it is."""
    cluster_disabled = sa.exists().where(
        models.Cluster.name == models.Service.cluster_name,
        models.Cluster.binary == models.Service.binary,
        models.Cluster.disabled)
    condition = sa.or_(
        sa.and_(models.Service.cluster_name.is_(None),
                models.Service.disabled),
        sa.and_(models.Service.cluster_name.is_not(None), cluster_disabled))
    return condition if disabled else sa.not_(condition)


@reader
def cleanup_targets(context: RequestContext, service_down_time: int,
                    binary: str, is_up: bool = False,
                    service_id: int | None = None,
                    cluster_name: str | None = None,
                    host: str | None = None,
                    disabled: bool | None = None) -> list[CleanupTarget]:
    """The services of ``binary`` a cleanup request names (Cinder's
    ``work_cleanup`` filters; ``is_up`` False, the default: those down),
    each with the server that would resume its work."""
    query = sa.select(models.Service).where(
        models.Service.binary == binary).order_by(models.Service.id)
    if service_id is not None:
        query = query.where(models.Service.id == service_id)
    if cluster_name:
        query = query.where(name_matches(models.Service.cluster_name,
                                         cluster_name))
    if host:
        query = query.where(name_matches(models.Service.host, host))
    if disabled is not None:
        query = query.where(_service_disabled(disabled))
    rows = [row for row in context.session.execute(query).scalars()
            if services_db.is_up(row, service_down_time) == is_up]
    live_clusters = {
        row.cluster_name for row in context.session.execute(
            sa.select(models.Service).where(
                models.Service.binary == binary,
                models.Service.cluster_name.in_(
                    {row.cluster_name for row in rows}))).scalars()
        if services_db.is_up(row, service_down_time)}
    return [CleanupTarget(row, _server(row, live_clusters, service_down_time))
            for row in rows]


def _server(row: models.Service, live_clusters: set[str | None],
            service_down_time: int) -> str | None:
    if row.cluster_name is not None:
        return row.cluster_name if row.cluster_name in live_clusters \
            else None
    return row.host if services_db.is_up(row, service_down_time) else None
