"""Service records and heartbeats."""

import datetime
import uuid

import sqlalchemy as sa
from sqlalchemy import orm
from oslo_db import exception as db_exc

from common import constants
from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api.engine import reader
from common.db.api.engine import retry_on_deadlock
from common.db.api.engine import writer
from common.db.api.execution import Conn
from common.db.api.execution import single_statement
from common.db.api.rows import Heartbeat
from common.db.api.rows import ServiceLiveness
from common.db.api.timestamps import utcnow


@retry_on_deadlock
@writer
def service_register(context: RequestContext, host: str, binary: str,
                     topic: str, availability_zone: str,
                     version: str | None = None,
                     cluster_name: str | None = None) -> models.Service:
    """Create or refresh the row of a starting service, with a heartbeat,
    the release it runs and the cluster it is a member of (whose row is
    made with the first member)."""
    query = sa.select(models.Service).where(models.Service.host == host,
                                            models.Service.binary == binary)
    row = context.session.execute(query).scalars().first()
    if row is None:
        row = models.Service(uuid=str(uuid.uuid4()), host=host, binary=binary,
                             disabled=False)
        context.session.add(row)
    row.topic = topic
    row.availability_zone = availability_zone
    row.version = version
    row.cluster_name = cluster_name
    row.heartbeat_at = utcnow()
    if cluster_name is not None and _cluster(
            context.session, cluster_name, binary) is None:
        context.session.add(models.Cluster(name=cluster_name, binary=binary,
                                           disabled=False))
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise db_exc.RetryRequest(db_exc.DBDuplicateEntry())
    return row


def _cluster(session: orm.Session, name: str,
             binary: str) -> models.Cluster | None:
    return session.execute(sa.select(models.Cluster).where(
        models.Cluster.name == name,
        models.Cluster.binary == binary)).scalars().first()


@retry_on_deadlock
@writer
def service_heartbeat(context: RequestContext, service_id: int) -> None:
    """Stamp the service alive now."""
    context.session.execute(
        sa.update(models.Service).where(models.Service.id == service_id)
        .values(heartbeat_at=utcnow()))


@retry_on_deadlock
@writer
def service_stopped(context: RequestContext, service_id: int) -> None:
    """Mark the service stopped (no heartbeat: down at once)."""
    context.session.execute(
        sa.update(models.Service).where(models.Service.id == service_id)
        .values(heartbeat_at=None))


@reader
def service_list(context: RequestContext, host: str | None = None,
                 binary: str | None = None) -> list[models.Service]:
    """List services; ``host`` also matches that host's ``host@backend``."""
    query = sa.select(models.Service).order_by(models.Service.id)
    if binary:
        query = query.where(models.Service.binary == binary)
    if host:
        query = query.where(sa.or_(models.Service.host == host,
                                   models.Service.host.like(host + "@%")))
    return list(context.session.execute(query).scalars())


_SERVICES = models.Service.__table__
_CLUSTERS = models.Cluster.__table__
#: A member of a cluster answers for the cluster (its name is the host its
#: volumes and pools carry), disabled if it or its cluster is.
_ANSWERS_FOR = sa.func.coalesce(_SERVICES.c.cluster_name, _SERVICES.c.host)
_DISABLED = sa.or_(_SERVICES.c.disabled,
                   sa.func.coalesce(_CLUSTERS.c.disabled, False))
_WITH_CLUSTER = _SERVICES.outerjoin(
    _CLUSTERS, sa.and_(_CLUSTERS.c.name == _SERVICES.c.cluster_name,
                       _CLUSTERS.c.binary == _SERVICES.c.binary))
_OF_BINARY = _SERVICES.c.binary == sa.bindparam("binary")
_LIVENESS = sa.select(
    _ANSWERS_FOR.label("host"), _DISABLED.label("disabled"),
    _SERVICES.c.heartbeat_at).select_from(_WITH_CLUSTER).where(_OF_BINARY)
#: ``running_hosts``: the names of those enabled with a heartbeat since
#: ``:since``, decided by the database (no row of the others is read).
_RUNNING = sa.select(_ANSWERS_FOR).distinct().select_from(
    _WITH_CLUSTER).where(_OF_BINARY, sa.not_(_DISABLED),
                         _SERVICES.c.heartbeat_at >= sa.bindparam("since"))


@single_statement(reader)
def service_liveness(conn: Conn, binary: str) -> list[ServiceLiveness]:
    """``(context, binary)``: ``(host, disabled, heartbeat_at)`` of the
    services of ``binary``; a cluster's members each as the cluster (its
    pools count while one of them is up and neither it nor the cluster is
    disabled).

    A prebuilt Core select for the capability cache's completeness check
    (rule 4 of ``services.api.capability_cache``), on the path of an early
    400: no ORM session or objects, no transaction of its own.  Pass each
    row to :func:`is_up`.
    """
    return list(conn.execute(_LIVENESS, {"binary": binary}))


@retry_on_deadlock
@writer
def service_set_disabled(context: RequestContext, host: str, binary: str,
                         disabled: bool, reason: str | None) -> models.Service:
    query = sa.select(models.Service).where(models.Service.host == host,
                                            models.Service.binary == binary)
    row = context.session.execute(query).scalars().first()
    if row is None:
        raise exception.ServiceNotFound(service_id="%s on host %s"
                                        % (binary, host))
    row.disabled = disabled
    row.disabled_reason = reason if disabled else None
    row.updated_at = utcnow()
    return row


class ServiceInUse(exception.Invalid):
    msg_fmt = "%(binary)s on %(host)s %(why)s; it stays."


@retry_on_deadlock
@writer
def service_remove(context: RequestContext, host: str, binary: str,
                   service_down_time: int) -> None:
    """Remove a dead service's row.

    :raises ServiceNotFound:
    :raises ServiceInUse: it heartbeats, or volumes live on it.
    """
    query = sa.select(models.Service).where(
        models.Service.host == host,
        models.Service.binary == binary).with_for_update()
    row = context.session.execute(query).scalars().first()
    if row is None:
        raise exception.ServiceNotFound(service_id="%s on host %s"
                                        % (binary, host))
    if is_up(row, service_down_time):
        raise ServiceInUse(binary=binary, host=host,
                           why="is up (its last heartbeat is younger than "
                               "service_down_time)")
    held = context.session.execute(
        sa.select(sa.func.count()).select_from(models.Volume).where(
            models.Volume.host.like(host + "#%"))).scalar()
    if held:
        raise ServiceInUse(binary=binary, host=host,
                           why="holds %d volumes" % held)
    context.session.delete(row)


def running_backends(context: RequestContext, service_down_time: int,
                     binary: str = constants.VOLUME_BINARY) -> set[str]:
    """The names volumes and pools carry of the volume backends that run:
    ``host@backend`` of each enabled service that heartbeats (``is_up``),
    and ``cluster@backend`` of each enabled cluster one of whose enabled
    members does."""
    return running_hosts(context, binary,
                         utcnow() - datetime.timedelta(
                             seconds=service_down_time))


@single_statement(reader)
def running_hosts(conn: Conn, binary: str,
                  since: datetime.datetime | None = None) -> set[str]:
    """``(context, binary, since)``: ``running_backends`` of ``binary``
    with a heartbeat at ``since`` or later (now when None), in one
    prebuilt statement that returns only their names.

    NOTE(ashlar): the early 400's completeness check (rule 4 of
    ``services.api.capability_cache``) and the scheduler's every placement
    ask this; with 1,000 volume services, reading every row's liveness and
    judging it in Python cost the api about 20 ms per refused create.
    """
    return set(conn.execute(_RUNNING, {
        "binary": binary, "since": since or utcnow()}).scalars())


def is_up(row: Heartbeat, service_down_time: int) -> bool:
    """Whether the service heartbeat is younger than ``service_down_time``."""
    if row.heartbeat_at is None:
        return False
    return (utcnow() - row.heartbeat_at).total_seconds() <= service_down_time
