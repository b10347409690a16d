"""Attachments, their connector rows, and the volume status they drive.

Every function that changes an attachment runs prebuilt Core statements on
a connection (no ORM session: these are the hot paths), on PostgreSQL and
MariaDB as plans on the driver's cursor (``common.db.api.direct``).  A
change of the row alone (its ``attach_status``, connector and mode stay, as
when the volume service records a connection or a delete begins) is one
compare-and-swap statement of its own (``common.db.api.single_statement``).
Any other runs one short transaction that

0. may first read the volume without a lock and hand it to the caller's
   ``decide`` (policy, state machine), so that reading, deciding and
   writing cost one transaction (``attachment_reserve``); what was decided
   is then guarded by step 1 (``attachment_change`` reads the row and its
   volume in a statement of its own before it);
1. changes the attachment row with a compare-and-swap on its
   ``attach_status``/``transition`` (or removes it); this locks that row
   only;
2. when the row's ``attach_status`` changed (or it came or went), locks the
   volume row, so all status changes of one volume's attachments are
   serialised; a change that keeps ``attach_status`` never touches the
   volume.  A change that can only raise the volume's statuses
   (``common.states.raises``: a new row, ``attaching`` -> ``attached``,
   ...) sets them in that same ``UPDATE``, from the volume's own
   ``attach_status``, and skips step 3;
3. otherwise, with an ``UPDATE`` of its counters when they change, else a
   ``SELECT ... FOR UPDATE``, either of them returning the volume's
   statuses and attachment count, recomputes ``status``/``attach_status``
   from the live rows (``common.states.volume_status``) and
   compare-and-swaps them when they change.  When the counter says the row
   just written is the volume's only one (or there is none left), its
   status is the whole input and nothing is read.

The volume row is locked last, so it is held only for steps 2-3 and the
commit: every change of the volume's attachments queues on that one lock,
and what it covers is what bounds their rate.  Rows are always locked
before the volume, never after (step 3 reads without a lock), so the order
cannot deadlock; the read sees every change committed under the lock
because it runs in its own snapshot (PostgreSQL's and, set by
``common.db.api``, MySQL's READ COMMITTED) or with the writers serialised
(SQLite runs every transaction ``BEGIN IMMEDIATE``).

The reservation locks the volume first instead: its step 2 decides too.
``UPDATE volumes SET attachment_count = attachment_count + 1 ... WHERE id =
:id AND status IN (...) AND attachment_count < :limit ...``.  The database
re-evaluates the ``WHERE`` against the latest committed row after waiting
for the lock (PostgreSQL, InnoDB) or runs writers one at a time (SQLite),
so however many reservations race, the counter admits exactly as many as
the guard allows; a loser's transaction writes nothing.  The row a
reservation inserts is new, so no other transaction holds it; it goes in
once the guard admitted it (``_reserve`` says why not before).

On PostgreSQL (``common.db.api.data_modifying_with``) the two changes every
attach makes are one statement each, a data-modifying ``WITH`` run on its
own: the reservation's guard with the new row and its connector rows after
it (``_admitting``; the read of step 0 is a statement before it), and a
change that can only raise the volume's statuses, steps 1-2 (``_raising``,
as ``os-complete``).  The locks are taken in the same order; the volume's
is held until the commit with no round trip to the client in between, and
the round trips of ``BEGIN`` and ``COMMIT`` go.
"""

import dataclasses
import functools
import json
from typing import Any, Callable

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy import orm

from common import exception
from common import states
from common.db import models
from common.db.api import among
from common.db.api import compare_and_swap
from common.db.api import conditional_update
from common.db.api import data_modifying_with
from common.db.api import direct
from common.db.api import page
from common.db.api import reader
from common.db.api import Record
from common.db.api import retry_on_deadlock
from common.db.api import single_statement
from common.db.api import utcnow
from common.db.api import writer

VA = models.VolumeAttachment
VOL = models.Volume
SPEC = models.AttachmentSpec



_AID = sa.bindparam("attachment_id")
_VID = sa.bindparam("volume_id")


class Lost(Exception):
    """A compare-and-swap found the row changed (nothing was written)."""


# -- connector rows ---------------------------------------------------------

def _spec_values(connector: dict | None) -> dict[str, str]:
    """The ``attachment_specs`` key and value of each connector key: the
    key as a string, the value as JSON."""
    return {str(key): json.dumps(value)
            for key, value in (connector or {}).items()}


def _spec_rows(attachment_id: str, connector: dict | None) -> list[dict]:
    """One ``attachment_specs`` row per connector key (``_spec_values``)."""
    return [{"attachment_id": attachment_id, "key": key, "value": value,
             "created_at": utcnow()}
            for key, value in _spec_values(connector).items()]


def _connector(conn: Any, attachment_id: str) -> dict:
    """The connector an attachment was given, or ``{}``."""
    return _decode_connector(conn.execute(_SELECT_CONNECTOR,
                                          {"attachment_id": attachment_id}))


def _decode_connector(rows: Any) -> dict:
    """The connector from its ``(key, JSON value)`` rows."""
    result = {}
    for key, value in rows:
        try:
            result[key] = json.loads(value)
        except (TypeError, ValueError):
            result[key] = value
    return result


def connection_info_of(row: Any) -> dict:
    return json.loads(row.connection_info) if row.connection_info else {}


def replace_connector(conn: Any, attachment_id: str,
                      connector: dict | None) -> None:
    """Replace the row's connector rows (in the caller's transaction)."""
    conn.execute(_DELETE_SPECS, {"attachment_id": attachment_id})
    _insert_specs(conn, attachment_id, connector)


def _insert_specs(conn: Any, attachment_id: str,
                  connector: dict | None) -> None:
    rows = _spec_rows(attachment_id, connector)
    if rows:
        conn.execute(_INSERT_SPECS, rows)


# -- helpers ----------------------------------------------------------------

#: Every column of an attachment row.
_ROW = tuple(getattr(VA, column.key) for column in VA.__table__.columns)

#: What locking the volume row tells: its statuses and live row count.
_STATE = (VOL.status, VOL.attach_status, VOL.attachment_count)

#: The QoS specs (JSON) of the volume's type that a compute host applies
#: (consumer ``front-end`` or ``both``), as an attachment's
#: ``connection_info`` gives them; NULL when its type has none.
_FRONT_END_QOS = sa.select(models.QoSSpecs.specs).join(
    models.VolumeType,
    models.VolumeType.qos_specs_id == models.QoSSpecs.id).where(
    models.VolumeType.id == VOL.volume_type_id,
    among(models.QoSSpecs.consumer, ("front-end", "both"))
).scalar_subquery().label("front_end_qos")

#: The volume columns attachment work needs (a light read: no type,
#: metadata or attachment rows; the front-end QoS specs of its type).
_BRIEF = (VOL.id, VOL.project_id, VOL.status, VOL.attach_status, VOL.host,
          VOL.size, VOL.display_name, VOL.provider_location, VOL.multiattach,
          VOL.bootable, VOL.readonly, VOL.encrypted, VOL.volume_type_id,
          VOL.migration_status, VOL.attachment_count, VOL.writer_count,
          _FRONT_END_QOS)
_PREFIX = "vol__"

#: Whether a row has connector rows (``has_connector`` of ``_with_volume``).
_HAS_CONNECTOR = sa.exists().where(SPEC.attachment_id == VA.id).label(
    "has_connector")


def _holds_connection(row: Any) -> Any:
    """``states.holds_connection`` of a row of ``VA`` (or an alias)."""
    return sa.and_(among(row.attach_status, states.CONNECTED),
                   sa.or_(row.transition.is_(None),
                          row.transition != states.Transition.DISCONNECTING))


def _part(name: str) -> Any:
    """A constant column naming a part of a ``UNION ALL``."""
    return sa.literal_column("'%s'" % name, sa.String).label("part")


# Statements of the hot paths, built once: SQLAlchemy reuses their compiled
# form and cache key.  Parameters: attachment_id, volume_id, host, type_id.
_SELECT_CONNECTOR = sa.select(SPEC.key, SPEC.value).where(
    SPEC.attachment_id == _AID)
_DELETE_SPECS = sa.delete(SPEC).where(SPEC.attachment_id == _AID)
_INSERT_SPECS = sa.insert(SPEC)
_INSERT_ROW = sa.insert(VA)
_SELECT_ROW = sa.select(*_ROW).where(VA.id == _AID)
_SELECT_STATE = sa.select(*_STATE).where(VOL.id == _VID)
_LOCK_STATE = _SELECT_STATE.with_for_update(key_share=True)
_LIVE_STATUSES = sa.select(VA.attach_status).where(VA.volume_id == _VID)
_LIVE_ROWS = sa.select(*_ROW).where(VA.volume_id == _VID).order_by(
    VA.created_at)
#: Another row of the volume using the connection of ``host``.
_SHARES_HOST = sa.and_(VA.volume_id == _VID, VA.id != _AID,
                       VA.attached_host == sa.bindparam("host"),
                       _holds_connection(VA))
_SHARED = sa.select(VA.id).where(_SHARES_HOST).order_by(VA.created_at)
_SELECT_BRIEF = sa.select(*_BRIEF).where(VOL.id == _VID)
_WITH_VOLUME = sa.select(*_ROW, _HAS_CONNECTOR, *(
    column.label(_PREFIX + column.key) for column in _BRIEF)).join(
    VOL, VOL.id == VA.volume_id).where(VA.id == _AID)
#: Another live row of the same volume and host (``_SHARED`` as a join).
_OTHER = orm.aliased(VA)
_WITH_VOLUME_SHARED = _WITH_VOLUME.add_columns(
    _OTHER.id.label("shared_id")).outerjoin(_OTHER, sa.and_(
        _OTHER.volume_id == VA.volume_id, _OTHER.id != VA.id,
        _OTHER.attached_host == VA.attached_host,
        _holds_connection(_OTHER))).order_by(
    _OTHER.created_at)
_BRIEF_SPECS = _SELECT_BRIEF.add_columns(
    models.VolumeTypeExtraSpec.key.label("spec_key"),
    models.VolumeTypeExtraSpec.value.label("spec_value")).outerjoin(
    models.VolumeTypeExtraSpec,
    models.VolumeTypeExtraSpec.volume_type_id == VOL.volume_type_id)

#: What removing a row's host connection needs, in one statement; each
#: result row is a ``part``: ``row`` (key: its attach_status, value: its
#: transition), ``spec`` (a connector key and value) or ``holder`` (key:
#: the id of another row using the connection, as ``_SHARED``).
_DISCONNECT_STATE = sa.union_all(
    sa.select(_part("row"), VA.attach_status.label("key"),
              VA.transition.label("value")).where(VA.id == _AID),
    sa.select(_part("spec"), SPEC.key, SPEC.value).where(
        SPEC.attachment_id == _AID),
    sa.select(_part("holder"), VA.id, sa.null()).where(_SHARES_HOST))
_COUNT = sa.update(VOL).where(VOL.id == _VID).values(
    writer_count=VOL.writer_count + sa.bindparam("writer_delta"),
    updated_at=sa.bindparam("now"))
#: What the volume becomes when its last row goes (``volume_status([])``).
_EMPTY_STATUS, _EMPTY_ATTACH_STATUS = states.volume_status(
    [], states.VOL.AVAILABLE)
_LAST = VOL.attachment_count == 1
# NOTE(ashlar): the statuses come first and read the count before it is
# decremented: MySQL evaluates a single-table UPDATE's assignments left to
# right, each seeing the ones before it.
_LEAVE = sa.update(VOL).where(VOL.id == _VID).ordered_values(
    (VOL.status, sa.case(
        (sa.and_(_LAST, among(VOL.status, states.ATTACH_DRIVEN)),
         _EMPTY_STATUS), else_=VOL.status)),
    (VOL.attach_status, sa.case((_LAST, _EMPTY_ATTACH_STATUS),
                                else_=VOL.attach_status)),
    (VOL.attachment_count, VOL.attachment_count - 1),
    (VOL.writer_count, VOL.writer_count - sa.bindparam("writer")),
    (VOL.updated_at, sa.bindparam("now")))


_VOL_RANK = sa.case(states.RANK, value=VOL.attach_status, else_=0)
_OUTRANKED = _VOL_RANK < sa.bindparam("new_rank")
#: ``status`` and ``attach_status`` once a row is in a status that can only
#: raise them (``states.raises``; parameters from ``_raised``).  They come
#: first in an ``UPDATE``: ``status`` reads ``attach_status`` as it was.
_RAISED = (
    (VOL.status, sa.case(
        (sa.and_(_OUTRANKED, among(VOL.status, states.ATTACH_DRIVEN)),
         sa.bindparam("new_status")), else_=VOL.status)),
    (VOL.attach_status, sa.case((_OUTRANKED, sa.bindparam("new_attach_status")),
                                else_=VOL.attach_status)))
#: What ``_RAISE`` sets (parameters: ``_raised``, writer_delta, now).
_RAISE_VALUES = (
    *_RAISED,
    (VOL.writer_count, VOL.writer_count + sa.bindparam("writer_delta")),
    (VOL.updated_at, sa.bindparam("now")))
_RAISE = sa.update(VOL).where(VOL.id == _VID).ordered_values(*_RAISE_VALUES)


def _raised(status: str) -> dict:
    """The parameters of ``_RAISED`` for a row now in ``status``."""
    return {"new_rank": states.RANK.get(status, 0),
            "new_attach_status": status,
            "new_status": states.STATUS_OF.get(status)}


def _raise(conn: Any, volume_id: str, status: str,
           writer_delta: int = 0) -> None:
    """Lock the volume and raise its statuses for a row now in ``status``
    (``states.raises``): one statement, no row read."""
    params = dict(_raised(status), volume_id=volume_id,
                  writer_delta=writer_delta, now=utcnow())
    if conn.execute(_RAISE, params).rowcount != 1:
        raise exception.VolumeNotFound(volume_id=volume_id)


def _returning(conn: Any, kind: str) -> bool:
    """Whether the dialect supports ``update_returning``/``delete_returning``
    (not MariaDB's UPDATE)."""
    return bool(getattr(conn.dialect, kind, False))


@functools.lru_cache(maxsize=None)
def _returning_state(query: Any) -> Any:
    return query.returning(*_STATE)


def _state_after(conn: Any, query: Any, params: dict) -> Any:
    """Run a prebuilt counter ``UPDATE`` of one volume (``params`` name it
    ``volume_id``); its ``_STATE`` after, or None when it matched no row."""
    if _returning(conn, "update_returning"):
        return conn.execute(_returning_state(query), params).first()
    if conn.execute(query, params).rowcount != 1:
        return None
    return conn.execute(_SELECT_STATE, params).one()


def _lock_volume(conn: Any, volume_id: str, writer_delta: int = 0) -> Any:
    """Take the volume row's lock, adjusting its counters if asked.

    NOTE(ashlar): taken after the attachment row's own change.  PostgreSQL
    and InnoDB lock the row (``FOR NO KEY UPDATE``, MySQL's ``FOR UPDATE``,
    or the ``UPDATE``) and see its latest committed version;
    SQLite holds its write lock since ``BEGIN IMMEDIATE``
    (``common.db.api._tune_sqlite``).

    :returns: the volume's ``_STATE`` (after the counter change).
    """
    if writer_delta:
        state = _state_after(conn, _COUNT, {
            "volume_id": volume_id, "writer_delta": writer_delta,
            "now": utcnow()})
    else:
        state = conn.execute(_LOCK_STATE, {"volume_id": volume_id}).first()
    if state is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return state


def _live_statuses(conn: Any, volume_id: str) -> list[str]:
    return list(conn.execute(_LIVE_STATUSES,
                             {"volume_id": volume_id}).scalars())


def _derive(state: Any, statuses: list[str],
            force_from: str | None = None) -> tuple[str, str]:
    base = states.VOL.AVAILABLE if state.status == force_from \
        else state.status
    return states.volume_status(statuses, base)


def _sync_volume(conn: Any, volume_id: str, state: Any,
                 statuses: list[str] | None = None,
                 force_from: str | None = None) -> tuple[str, str]:
    """Recompute the volume's statuses from its live rows (lock held).

    :param state: the volume's ``_STATE``, as read under the lock.
    :param statuses: the live rows' statuses when known, else read.
    :param force_from: derive ``status`` even when the volume is in this
        non-attach status (the end of an extend or a retype).
    """
    if statuses is None:
        statuses = _live_statuses(conn, volume_id)
    status, attach_status = _derive(state, statuses, force_from)
    if (status, attach_status) != (state.status, state.attach_status):
        conditional_update(conn, VOL, volume_id, {"status": state.status},
                           {"status": status, "attach_status": attach_status})
    return status, attach_status


def _only_row(state: Any, status: Any) -> list[str] | None:
    """The live statuses when the row just written (in ``status``) is the
    volume's only one, else None (read them)."""
    if state.attachment_count == 1 and isinstance(status, str):
        return [status]
    return None


def _shared(conn: Any, volume_id: str, attachment_id: str,
            host: str | None) -> list[str]:
    """Other live rows of the volume connected (or connecting) on ``host``."""
    if not host:
        return []
    return list(conn.execute(_SHARED, {
        "volume_id": volume_id, "attachment_id": attachment_id,
        "host": host}).scalars())


def _brief(conn: Any, volume_id: str) -> Any:
    row = conn.execute(_SELECT_BRIEF, {"volume_id": volume_id}).first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return row


def _brief_and_specs(conn: Any, volume_id: str) -> tuple[Any, dict]:
    """The volume's ``_BRIEF`` columns and its type's extra specs, in one
    statement (one result row per spec).

    :raises VolumeNotFound:
    """
    found = conn.execute(_BRIEF_SPECS, {"volume_id": volume_id}).all()
    if not found:
        raise exception.VolumeNotFound(volume_id=volume_id)
    specs = {row.spec_key: row.spec_value for row in found
             if row.spec_key is not None}
    return Record(**{column.key: getattr(found[0], column.key)
                     for column in _BRIEF}), specs


def _with_volume(conn: Any, attachment_id: str,
                 shared: bool = False) -> tuple[Record, Record, list]:
    """The row (plus ``has_connector``), its volume's ``_BRIEF`` columns
    and, if asked, the other rows sharing its host connection
    (``_shared``), in one statement.

    :raises AttachmentNotFound:
    """
    found = conn.execute(_WITH_VOLUME_SHARED if shared else _WITH_VOLUME,
                         {"attachment_id": attachment_id}).all()
    if not found:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    values = found[0]._asdict()
    others = [row.shared_id for row in found if shared and row.shared_id]
    values.pop("shared_id", None)
    volume = {key[len(_PREFIX):]: values.pop(key)
              for key in list(values) if key.startswith(_PREFIX)}
    return Record(**values), Record(**volume), others


# -- reads ----------------------------------------------------------------

@single_statement(reader)
def attachment_get(conn: Any, attachment_id: str) -> Record:
    """:raises AttachmentNotFound:"""
    found = conn.execute(_SELECT_ROW, {"attachment_id": attachment_id}).first()
    if found is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    return Record(**found._asdict())


@single_statement(reader)
def connector(conn: Any, attachment_id: str) -> dict:
    """The connector an attachment was given, or ``{}``."""
    return _connector(conn, attachment_id)


@single_statement(reader)
def volume_brief(conn: Any, volume_id: str) -> Any:
    """The volume's columns of ``_BRIEF`` (attribute access).

    :raises VolumeNotFound:
    """
    return _brief(conn, volume_id)


@single_statement(reader)
def attachment_with_volume(conn: Any, attachment_id: str,
                           shared: bool = False
                           ) -> tuple[Record, Record, list]:
    """The row, its volume (as ``volume_brief``) and, if asked, its
    ``shared_connections_by_attachment``, in one read.

    :raises AttachmentNotFound:
    """
    return _with_volume(conn, attachment_id, shared)


@single_statement(reader)
def disconnect_state(conn: Any, volume_id: str, attachment_id: str,
                     host: str | None) -> tuple[Record | None, dict, list]:
    """What removing a row's host connection needs, in one read: the row's
    ``attach_status``/``transition`` (None when gone), its connector and
    the other rows using the connection."""
    parts: dict[str, list] = {"row": [], "spec": [], "holder": []}
    for found in conn.execute(_DISCONNECT_STATE, {
            "attachment_id": attachment_id, "volume_id": volume_id,
            "host": host}):
        parts[found.part].append(found)
    if not parts["row"]:
        return None, {}, []
    row = parts["row"][0]
    return (Record(id=attachment_id, attach_status=row.key,
                   transition=row.value),
            _decode_connector((spec.key, spec.value)
                              for spec in parts["spec"]),
            [holder.key for holder in parts["holder"]])


def _project_of(session: Any, volume_id: str) -> str | None:
    return session.execute(sa.select(VOL.project_id).where(
        VOL.id == volume_id)).scalar()


@reader
def attachment_list(context: Any, project_id: str | None = None,
                    filters: dict | None = None, limit: int | None = None,
                    marker: str | None = None,
                    sort_keys: list | None = None,
                    sort_dirs: list | None = None,
                    offset: int | None = None
                    ) -> list[models.VolumeAttachment]:
    """Attachments of volumes in ``project_id`` (all when None).

    :raises AttachmentNotFound: for an unknown marker, or one of another
        project.
    """
    query = context.session.query(VA)
    if project_id is not None:
        query = query.join(VOL, VOL.id == VA.volume_id).filter(
            VOL.project_id == project_id)
    for key, value in (filters or {}).items():
        query = query.filter(getattr(VA, key) == value)
    marker_row = None
    if marker:
        marker_row = context.session.get(VA, marker)
        if marker_row is None or project_id not in (
                None, _project_of(context.session, marker_row.volume_id)):
            raise exception.AttachmentNotFound(attachment_id=marker)
    return page(query, VA, marker_row, limit, sort_keys, sort_dirs, offset)


@reader
def attachments_of_volume(context: Any, volume_id: str
                          ) -> list[models.VolumeAttachment]:
    query = sa.select(VA).where(VA.volume_id == volume_id).order_by(
        VA.created_at)
    return list(context.session.execute(query).scalars())


def _rows_of_backend(context: Any, backend: str,
                     *where: Any) -> list[models.VolumeAttachment]:
    query = sa.select(VA).join(VOL, VOL.id == VA.volume_id).where(
        *where, VOL.host.like(backend + "#%"))
    return list(context.session.execute(query).scalars())


@reader
def attachments_in_transition(context: Any, backend: str,
                              older_than: Any) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes in flight since before ``older_than``."""
    return _rows_of_backend(
        context, backend, VA.transition.is_not(None),
        sa.func.coalesce(VA.updated_at, VA.created_at) < older_than)


@reader
def attachments_with_lapsed_lease(context: Any, backend: str,
                                  now: Any) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes at rest whose agent's lease lapsed
    before ``now`` (never completed: reserved or attaching, not fenced)."""
    return _rows_of_backend(
        context, backend, VA.lease_expires_at < now, VA.transition.is_(None),
        VA.fenced_at.is_(None),
        VA.attach_status.in_([states.ATT.RESERVED, states.ATT.ATTACHING]))


@single_statement(reader)
def connection_holders(conn: Any, volume_id: str, attachment_id: str,
                       host: str | None) -> list[str]:
    """Rows besides ``attachment_id`` that use the volume's ``host``
    connection (what decides whether terminating it is safe)."""
    return _shared(conn, volume_id, attachment_id, host)


# -- writes ---------------------------------------------------------------

@dataclasses.dataclass
class Reservation:
    """What a new attachment of a volume asks for (see
    ``attachment_reserve``)."""

    guard: states.ReserveGuard
    #: Columns of the new row, ``id`` included.
    values: dict
    connector: dict | None = None


#: Columns of a new row not given by the caller.
_UNSET = {"instance_uuid": None, "attached_host": None, "mountpoint": None,
          "attach_mode": states.MODE_NULL, "connection_info": None,
          "attach_time": None, "detach_time": None, "transition": None,
          "updated_at": None, "fenced_at": None, "fenced_clients": None,
          "clients": None, "lease_expires_at": None}


@functools.lru_cache(maxsize=None)
def _reserve_statement(multiattach: bool, same_instance: bool,
                       one_writer: bool) -> Any:
    """The counter ``UPDATE`` that admits a reservation, per guard shape.

    Parameters: volume_id, new_id (the new row's, which may be in already),
    limit, instance_uuid, writer (0/1), was_bootable,
    was_readonly (the flags as read: the caller decided policy and mode on
    them), now, and ``_raised`` of the new row's status (a new row can only
    raise the volume's statuses).
    """
    conditions = [VOL.id == _VID, among(VOL.status, states.RESERVABLE),
                  VOL.multiattach == multiattach,
                  VOL.bootable == sa.bindparam("was_bootable"),
                  VOL.readonly == sa.bindparam("was_readonly")]
    if multiattach:
        conditions.append(VOL.attachment_count < sa.bindparam("limit"))
    else:
        alone = VOL.attachment_count == 0
        if same_instance:
            same = sa.exists().where(
                VA.volume_id == _VID, VA.id != sa.bindparam("new_id"),
                VA.instance_uuid == sa.bindparam("instance_uuid"))
            alone = sa.or_(alone, sa.and_(VOL.attachment_count == 1, same))
        conditions.append(alone)
    if one_writer:
        conditions.append(VOL.writer_count == 0)
    return sa.update(VOL).where(*conditions).ordered_values(
        *_RAISED, (VOL.attachment_count, VOL.attachment_count + 1),
        (VOL.writer_count, VOL.writer_count + sa.bindparam("writer")),
        (VOL.updated_at, sa.bindparam("now")))


class _Refused(Exception):
    """The guard refused a reservation (rolls back what was inserted)."""

    def __init__(self, volume: Any, wanted: Reservation) -> None:
        super().__init__()
        self.volume, self.wanted = volume, wanted


def attachment_reserve(context: Any, volume_id: str,
                       decide: Callable[[Any, dict], Reservation]
                       ) -> tuple[Record | None, Any, Reservation]:
    """Reserve a place on the volume and insert the row, atomically.

    :param decide: ``(volume, type_specs) -> Reservation``, called with the
        volume's ``_BRIEF`` columns as read in this transaction; raise to
        refuse (nothing written).  The guard also requires the volume's
        ``bootable`` and ``readonly`` flags as read (policy and the mode
        were decided on them).
    :returns: ``(row, volume, reservation)``; ``row`` is None when the guard
        refused (nothing written).
    :raises VolumeNotFound:
    """
    try:
        if data_modifying_with():
            return _reserve_at_once(context, volume_id, decide)
        return _reserve(context, volume_id, decide)
    except _Refused as refused:
        return None, refused.volume, refused.wanted
    except db_exc.DBReferenceError:
        # NOTE(ashlar): the volume row went between the read and the insert.
        raise exception.VolumeNotFound(volume_id=volume_id)


@retry_on_deadlock
@writer.connection
def _reserve(context: Any, volume_id: str,
             decide: Callable[[Any, dict], Reservation]
             ) -> tuple[Record, Any, Reservation]:
    """``attachment_reserve``'s transaction (MySQL, SQLite).

    NOTE(ashlar): the guard goes first, then the new rows: InnoDB's foreign
    key check takes a shared lock on the volume that two reservations would
    both hold and then both want to upgrade (a deadlock) were the rows
    first; SQLite runs writers one at a time.

    :raises _Refused: the guard refused (the transaction rolls back).
    """
    conn = direct.Connection(context.connection)
    volume, specs = _brief_and_specs(conn, volume_id)
    wanted = decide(volume, specs)
    query, params, values = _admission(volume_id, volume, wanted)
    if conn.execute(query, params).rowcount != 1:
        raise _Refused(volume, wanted)
    _insert_row(conn, values, wanted.connector)
    return Record(**values), volume, wanted


def _admission(volume_id: str, volume: Any,
               wanted: Reservation) -> tuple[Any, dict, dict]:
    """The guard (``_reserve_statement``) of a reservation decided on
    ``volume``, its parameters, and the new row's columns."""
    guard = wanted.guard
    query = _reserve_statement(
        guard.multiattach,
        not guard.multiattach and bool(guard.instance_uuid),
        bool(guard.single_writer and guard.writer))
    values = dict(_UNSET, volume_id=volume_id, created_at=utcnow(),
                  **wanted.values)
    params = dict(_raised(values["attach_status"]), volume_id=volume_id,
                  new_id=values["id"], limit=guard.limit,
                  instance_uuid=guard.instance_uuid, writer=int(guard.writer),
                  was_bootable=bool(volume.bootable),
                  was_readonly=bool(volume.readonly), now=utcnow())
    return query, params, values


def _reserve_at_once(context: Any, volume_id: str,
                     decide: Callable[[Any, dict], Reservation]
                     ) -> tuple[Record, Any, Reservation]:
    """``attachment_reserve`` where ``data_modifying_with``: read the volume
    (a statement of its own, as ``_reserve`` reads it without a lock), then
    admit and insert in one statement (``_admitting``).

    :raises _Refused: the guard refused (nothing was written).
    """
    volume, specs = volume_and_specs(context, volume_id)
    wanted = decide(volume, specs)
    query, params, values = _admission(volume_id, volume, wanted)
    if not _admit(context, query, params, values, wanted.connector):
        raise _Refused(volume, wanted)
    return Record(**values), volume, wanted


@single_statement(reader)
def volume_and_specs(conn: Any, volume_id: str) -> tuple[Any, dict]:
    """The volume (as ``volume_brief``) and its type's extra specs."""
    return _brief_and_specs(conn, volume_id)


#: The columns of a new row, in the order ``_admitting`` selects them.
_NEW_ROW = tuple(column.key for column in VA.__table__.columns)


@functools.lru_cache(maxsize=None)
def _admitting(guard: Any, with_connector: bool) -> Any:
    """The guard ``UPDATE``, then the new row and its connector rows if it
    matched: one statement (PostgreSQL's data-modifying ``WITH``).

    Parameters: the guard's, ``n_<column>`` of the new row (its
    ``volume_id`` comes from the guard) and ``connector`` (a JSON object
    of ``_spec_values``).  The volume's lock, taken first,
    is held until the statement's commit, with no round trip to the client
    in between; the new rows' foreign keys find it locked by the statement
    itself.
    """
    admitted = guard.returning(VOL.id).cte("admitted")
    table = VA.__table__
    row = sa.insert(VA).from_select(_NEW_ROW, sa.select(*(
        admitted.c.id if key == "volume_id" else
        sa.cast(sa.bindparam("n_" + key), table.c[key].type)
        for key in _NEW_ROW)))
    if not with_connector:
        return row
    added = row.returning(VA.id, VA.created_at).cte("added")
    spec = sa.func.json_each_text(
        sa.cast(sa.bindparam("connector"), sa.JSON)).table_valued(
        "key", "value")
    return sa.insert(SPEC).from_select(
        ("attachment_id", "key", "value", "created_at"),
        sa.select(added.c.id, spec.c.key, spec.c.value,
                  added.c.created_at).select_from(
            added.join(spec, sa.true())))


@retry_on_deadlock
@single_statement(writer)
def _admit(conn: Any, guard: Any, params: dict, values: dict,
           connector: dict | None) -> bool:
    """Run ``_admitting``; whether the guard admitted the reservation.

    NOTE(ashlar): SQLAlchemy keeps an ``INSERT``'s rowcount only when asked
    (psycopg 3 reports none once the cursor is closed).
    """
    specs = _spec_values(connector)
    params = dict(params, connector=json.dumps(specs), **{
        "n_" + key: value for key, value in values.items()})
    return conn.execute(_admitting(guard, bool(specs)), params,
                        execution_options={"preserve_rowcount": True}
                        ).rowcount > 0


def _insert_row(conn: Any, values: dict, connector: dict | None) -> None:
    conn.execute(_INSERT_ROW, values)
    _insert_specs(conn, values["id"], connector)


@dataclasses.dataclass
class Change:
    """A compare-and-swap of one attachment (see ``attachment_change``)."""

    expected: dict
    values: dict = dataclasses.field(default_factory=dict)
    #: New connector rows, when ``replace_connector``.
    connector: dict | None = None
    replace_connector: bool = False
    #: Change of the volume's writer count (the mode was set).
    writer_delta: int = 0
    #: Remove the row instead (``values`` unused).
    destroy: bool = False

    def status_after(self) -> Any:
        """The row's ``attach_status`` once changed: the one set, else the
        one expected (None when neither says)."""
        return self.values.get("attach_status",
                               self.expected.get("attach_status"))

    def keeps_volume(self) -> bool:
        """Whether the volume's statuses and counters stay as they are: the
        row stays, with its (known) ``attach_status`` and writer count."""
        before = self.expected.get("attach_status")
        return (isinstance(before, str) and not self.destroy
                and not self.writer_delta and self.status_after() == before)

    def row_only(self) -> bool:
        """Whether it changes columns of the row alone (one statement):
        the volume and the connector rows stay."""
        return self.keeps_volume() and not self.replace_connector

    def raises(self) -> bool:
        """Whether the row stays, in an ``attach_status`` (known before and
        after) that can only raise the volume's statuses
        (``states.raises``), as ``os-complete``'s."""
        before = self.expected.get("attach_status")
        now = self.status_after()
        return (isinstance(before, str) and isinstance(now, str)
                and not self.destroy and states.raises(before, now))


def _apply(conn: Any, volume_id: str, attachment_id: str,
           change: Change) -> dict | None:
    """Apply ``change``: the row first, then the volume if its status may
    follow (see the module's steps 1-3).

    :returns: what ``_destroy`` returns when the change removes the row.
    :raises Lost: ``change.expected`` did not match.
    """
    if change.destroy:
        return _destroy(conn, volume_id, attachment_id, change.expected)
    now = change.status_after()
    expected = dict(change.expected, volume_id=volume_id)
    if not conditional_update(conn, VA, attachment_id, expected,
                              change.values):
        raise Lost()
    if change.replace_connector:
        replace_connector(conn, attachment_id, change.connector)
    if change.keeps_volume():
        return None
    if change.raises():
        _raise(conn, volume_id, now, change.writer_delta)
    else:
        state = _lock_volume(conn, volume_id,
                             writer_delta=change.writer_delta)
        _sync_volume(conn, volume_id, state, _only_row(state, now))
    return None


def attachment_change(context: Any, attachment_id: str,
                      decide: Callable[[Record, Any], Change | None]
                      ) -> tuple[Record, Any, dict | None]:
    """Read a row and its volume, let ``decide`` choose, apply it.

    The read is a statement of its own; the change's compare-and-swap,
    expecting what ``decide`` saw, is what makes acting on it safe.

    :param decide: ``(row, volume) -> Change`` or None for no change;
        raise to refuse (nothing written).
    :returns: ``(row, volume, destroyed)``: the row with the change's
        values, and what ``attachment_destroy`` returns if it was removed.
    :raises Lost: the row changed between the read and the write.
    :raises AttachmentNotFound:
    """
    row, volume, _none = attachment_with_volume(context, attachment_id)
    change = decide(row, volume)
    if change is None:
        return row, volume, None
    destroyed = None
    if change.row_only():
        values = {key: value for key, value in change.values.items()
                  if key != "attach_status"}
        if not attachment_record(context, volume.id, attachment_id,
                                 change.expected, values):
            raise Lost()
    elif (change.raises() and not change.replace_connector
          and data_modifying_with()):
        if not _raise_with_row(context, volume.id, attachment_id, change):
            raise Lost()
    else:
        destroyed = _attachment_cas(context, volume.id, attachment_id, change)
    return Record(**dict(vars(row), **change.values)), volume, destroyed


@functools.lru_cache(maxsize=None)
def _raising(query: Any) -> Any:
    """``query``, a compare-and-swap of a row, then ``_RAISE`` of its volume
    if it matched: one statement (PostgreSQL's data-modifying ``WITH``).

    The row is locked before the volume, as in ``_apply``; the volume's
    lock is held until the statement's commit, with no round trip to the
    client in between.
    """
    changed = query.returning(VA.volume_id).cte("changed")
    return sa.update(VOL).where(VOL.id == changed.c.volume_id).ordered_values(
        *_RAISE_VALUES)


@retry_on_deadlock
@single_statement(writer)
def _raise_with_row(conn: Any, volume_id: str, attachment_id: str,
                    change: Change) -> bool:
    """Apply a ``change`` that ``raises`` the volume's statuses and keeps
    the connector rows, in one statement (``_raising``; only where
    ``data_modifying_with``).

    :returns: whether ``change.expected`` matched (else nothing changed).
    """
    now = utcnow()
    query, params = compare_and_swap(
        VA, attachment_id, dict(change.expected, volume_id=volume_id),
        dict(change.values, updated_at=now))
    params.update(_raised(change.status_after()),
                  writer_delta=change.writer_delta, now=now)
    return conn.execute(_raising(query), params).rowcount == 1


@retry_on_deadlock
@writer.connection
def _attachment_cas(context: Any, volume_id: str, attachment_id: str,
                    change: Change) -> dict | None:
    return _apply(direct.Connection(context.connection), volume_id,
                  attachment_id, change)


def attachment_cas(context: Any, volume_id: str, attachment_id: str,
                   expected: dict, values: dict,
                   connector: dict | None = None,
                   replace_connector: bool = False,
                   writer_delta: int = 0) -> bool:
    """Compare-and-swap one attachment of ``volume_id``; recompute the volume.

    :param connector: new connector rows, when ``replace_connector``.
    :param writer_delta: change of the volume's writer count (mode set).
    :returns: whether ``expected`` matched (else nothing was written).
    """
    try:
        _attachment_cas(context, volume_id, attachment_id, Change(
            expected, values, connector, replace_connector, writer_delta))
    except Lost:
        return False
    return True


@single_statement(writer)
def attachment_record(conn: Any, volume_id: str, attachment_id: str,
                      expected: dict, values: dict) -> bool:
    """Compare-and-swap columns of one row that leave its ``attach_status``
    (and so its volume's statuses) alone, such as the volume service
    recording a connection: one statement.

    :returns: whether ``expected`` matched (else nothing was written).
    :raises ValueError: ``values`` change ``attach_status``.
    """
    if "attach_status" in values:
        raise ValueError("attachment_record leaves attach_status alone")
    return conditional_update(conn, VA, attachment_id,
                              dict(expected, volume_id=volume_id), values)


@retry_on_deadlock
@writer.connection
def _attachment_destroy(context: Any, volume_id: str, attachment_id: str,
                        expected: dict) -> dict:
    return _destroy(direct.Connection(context.connection), volume_id,
                    attachment_id, expected)


def attachment_destroy(context: Any, volume_id: str, attachment_id: str,
                       expected: dict) -> dict | None:
    """Remove one row of ``volume_id`` if it matches ``expected``; recompute
    the volume.

    :returns: ``{"volume_id", "remaining": [rows], "shared": [ids]}``, as
        they stand in this transaction, or None when nothing matched.
    """
    try:
        return _attachment_destroy(context, volume_id, attachment_id,
                                   expected)
    except (Lost, exception.AttachmentNotFound):
        return None


_GONE = sa.select(VA.attached_host, VA.attach_mode, VA.fenced_at).where(
    VA.id == _AID, VA.volume_id == _VID)


@functools.lru_cache(maxsize=None)
def _returning_gone(query: Any) -> Any:
    return query.returning(VA.attached_host, VA.attach_mode, VA.fenced_at)


def _destroy(conn: Any, volume_id: str, attachment_id: str,
              expected: dict) -> dict:
    """Remove the row, then take the volume's lock; see attachment_destroy.

    :raises Lost: nothing matched.
    """
    query, params = compare_and_swap(
        VA, attachment_id, dict(expected, volume_id=volume_id), None)
    # NOTE(ashlar): the connector rows go with the row (ON DELETE CASCADE).
    if _returning(conn, "delete_returning"):
        gone = conn.execute(_returning_gone(query), params).first()
    else:
        gone = conn.execute(_GONE, {"attachment_id": attachment_id,
                                    "volume_id": volume_id}).first()
        if gone is not None and conn.execute(query, params).rowcount != 1:
            gone = None
    if gone is None:
        raise Lost()
    host, mode, fenced_at = gone
    state = _state_after(conn, _LEAVE, {
        "volume_id": volume_id, "now": utcnow(),
        "writer": int(states.counts_as_writer(mode, fenced_at))})
    if state is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    remaining = []
    if state.attachment_count:
        remaining = list(conn.execute(_LIVE_ROWS, {"volume_id": volume_id}))
        _sync_volume(conn, volume_id, state,
                     [other.attach_status for other in remaining])
    shared = [other.id for other in remaining
              if host and other.attached_host == host
              and states.holds_connection(other.attach_status,
                                          other.transition)]
    return {"volume_id": volume_id, "remaining": remaining, "shared": shared}


@retry_on_deadlock
@writer.connection
def volume_leave_status(context: Any, volume_id: str, status: str,
                        values: dict | None = None,
                        expected: dict | None = None) -> bool:
    """End a non-attach status (extending, retyping): compare-and-swap it
    to the status the attachments say, with ``values``.

    :param expected: other columns that must hold their values too.
    :returns: whether the volume was in ``status`` (and ``expected``).
    """
    conn = context.connection
    state = _lock_volume(conn, volume_id)
    if state.status != status:
        return False
    if values or expected:
        if not conditional_update(conn, VOL, volume_id,
                                  dict(expected or {}, status=status),
                                  values or {}):
            return False
        if set(values or {}) & {"status", "attach_status"}:
            state = conn.execute(_SELECT_STATE,
                                 {"volume_id": volume_id}).one()
            if state.status != status:
                return False
    _sync_volume(conn, volume_id, state, force_from=status)
    return True
