"""Service records and heartbeats."""

import datetime
import time
import uuid
from collections.abc import Callable, Iterable

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
_IS_RUNNING = (_OF_BINARY, sa.not_(_DISABLED),
               _SERVICES.c.heartbeat_at >= sa.bindparam("since"))
_RUNNING = sa.select(_ANSWERS_FOR).distinct().select_from(
    _WITH_CLUSTER).where(*_IS_RUNNING)


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
    return running_hosts(context, binary, _up_since(service_down_time))


def _up_since(service_down_time: int) -> datetime.datetime:
    """The oldest heartbeat of a service that is up (``is_up``)."""
    return utcnow() - datetime.timedelta(seconds=service_down_time)


@single_statement(reader)
def running_hosts(conn: Conn, binary: str,
                  since: datetime.datetime | None = None) -> set[str]:
    """``(context, binary, since)``: ``running_backends`` of ``binary``
    with a heartbeat at ``since`` or later (now when None), in one
    prebuilt statement that returns only their names.

    NOTE(ashlar): the scheduler's every placement asks this, and the early
    400's completeness check (rule 4 of ``services.api.capability_cache``)
    through ``RunningHosts``; with 1,000 volume services, reading every
    row's liveness and judging it in Python cost the api about 20 ms per
    refused create.
    """
    return set(conn.execute(_RUNNING, {
        "binary": binary, "since": since or utcnow()}).scalars())


#: The rows ``running_hosts`` counts, with their ids.
_RUNNING_ROWS = sa.select(_SERVICES.c.id, _ANSWERS_FOR.label("host")) \
    .select_from(_WITH_CLUSTER).where(*_IS_RUNNING)
#: Id ranges a ``RunningHosts`` checks in one statement; more, and it reads
#: the rows every time.
MAX_RANGES = 8
#: Seconds a ``RunningHosts`` answer stands unread at most.
REREAD_AFTER = 10.0


def _checks(ranges: int) -> sa.Select[int, int]:
    """``(rows running, of which outside :a0-:b0, ..., :aN-:bN)``, one
    statement per number of ranges (a plan is cached per statement)."""
    inside = sa.or_(*(_SERVICES.c.id.between(
        sa.bindparam("a%d" % i, type_=sa.Integer),
        sa.bindparam("b%d" % i, type_=sa.Integer)) for i in range(ranges)))
    return sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(
        sa.case((inside, 0), else_=1)), 0)).select_from(
        _WITH_CLUSTER).where(*_IS_RUNNING)


_CHECKS = {ranges: _checks(ranges) for ranges in range(1, MAX_RANGES + 1)}


def id_ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    """The runs of consecutive integers ``ids`` make, as ``(first,
    last)``, in order."""
    runs: list[tuple[int, int]] = []
    for value in sorted(ids):
        if runs and value == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


@single_statement(reader)
def _running_rows(conn: Conn, binary: str,
                  since: datetime.datetime) -> list[tuple[int, str]]:
    return [(row.id, row.host) for row in conn.execute(
        _RUNNING_ROWS, {"binary": binary, "since": since})]


@single_statement(reader)
def _unchanged(conn: Conn, binary: str, since: datetime.datetime,
               ranges: list[tuple[int, int]], count: int) -> bool:
    """Whether the rows running are ``count`` rows, all with ids in
    ``ranges`` (at most ``MAX_RANGES``)."""
    params: dict[str, object] = {"binary": binary, "since": since}
    for i, (first, last) in enumerate(ranges):
        params["a%d" % i], params["b%d" % i] = first, last
    running, outside = conn.execute(_CHECKS[len(ranges)], params).one()
    return int(running) == count and int(outside) == 0


def warm_running(context: RequestContext, binary: str) -> None:
    """Compile ``RunningHosts``' statements (a start's warm-up): read the
    rows of ``binary`` that run, and check them against one id range."""
    now = utcnow()
    _running_rows(context, binary, now)
    _unchanged(context, binary, now, [(0, 0)], 0)


class RunningHosts:
    """``running_hosts`` of one binary for a caller that asks often (the
    api's early 400 asks at every refused create): the names are read
    again only when the rows that run are not those of the last read, as
    one statement of two counts tells, or after ``REREAD_AFTER`` seconds.

    NOTE(ashlar): at 1,000 volume services the names' read cost the api
    3.0 ms of CPU on MariaDB (PyMySQL parses each row in Python) and 1.4 ms
    on PostgreSQL; the counts, 0.3 ms.  The counts are exact for the rows:
    a service that starts, comes back or is enabled runs with an id the
    last read did not have (or the count differs).  A row's name changes
    only as its service restarts into another cluster; until the next read
    (``REREAD_AFTER`` seconds at most) the answer carries the old name,
    which the early 400 counts as heard only while the old report is
    fresh, and the new name's start report arrives within milliseconds:
    the window the capability cache already accepts for a backend that
    restarts with a new configuration.
    """

    def __init__(self, binary: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.binary = binary
        self._clock = clock
        #: (read at, id ranges, how many rows, their names)
        self._last: tuple[float, list[tuple[int, int]], int,
                          frozenset[str]] | None = None

    def __call__(self, context: RequestContext,
                 service_down_time: int) -> set[str]:
        since = _up_since(service_down_time)
        last = self._last
        if (last is not None and self._clock() - last[0] < REREAD_AFTER
                and _unchanged(context, self.binary, since, last[1],
                               last[2])):
            return set(last[3])
        read_at = self._clock()
        rows = _running_rows(context, self.binary, since)
        names = frozenset(host for _id, host in rows)
        ranges = id_ranges(row_id for row_id, _host in rows)
        self._last = ((read_at, ranges, len(rows), names)
                      if 0 < len(ranges) <= MAX_RANGES else None)
        return set(names)


def is_up(row: Heartbeat, service_down_time: int) -> bool:
    """Whether the service heartbeat is younger than ``service_down_time``."""
    if row.heartbeat_at is None:
        return False
    return (utcnow() - row.heartbeat_at).total_seconds() <= service_down_time
