"""Attachments, their connector rows, and the volume status they drive.

Every function that changes an attachment runs one short transaction that

1. locks the volume row first, with an ``UPDATE`` of its counters when
   they change, else a ``SELECT ... FOR UPDATE``, either of them also
   returning the volume's statuses and attachment count, so all changes to
   one volume's attachments are serialised and always take their locks in
   the same order (SQLite runs every transaction ``BEGIN IMMEDIATE``, so
   its write lock is taken before either);
2. changes the attachment row with a compare-and-swap on its
   ``attach_status``/``transition``;
3. recomputes the volume's ``status``/``attach_status`` from the live rows
   (``common.states.volume_status``), read with a locking read so MySQL's
   repeatable-read snapshot cannot hide a row committed meanwhile, and
   compare-and-swaps them when they change.  When the counter says the row
   just written is the volume's only one (or there is none left), its
   status is the whole input and nothing is read.

The reservation is step 1 alone deciding: ``UPDATE volumes SET
attachment_count = attachment_count + 1 ... WHERE id = :id AND status IN
(...) AND attachment_count < :limit ...``.  The database re-evaluates the
``WHERE`` against the latest committed row after waiting for the lock
(PostgreSQL, InnoDB) or runs writers one at a time (SQLite, ``BEGIN
IMMEDIATE``), so however many reservations race, the counter admits exactly
as many as the guard allows; a loser's transaction inserted nothing.
"""

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import exception
from common import states
from common.db import models
from common.db.api import conditional_update
from common.db.api import page
from common.db.api import reader
from common.db.api import retry_on_deadlock
from common.db.api import utcnow
from common.db.api import where_expected
from common.db.api import writer

VA = models.VolumeAttachment
VOL = models.Volume


# -- connector rows ---------------------------------------------------------

def _spec_rows(attachment_id: str, connector: dict | None) -> list[dict]:
    """One ``attachment_specs`` row per connector key, values as JSON."""
    return [{"attachment_id": attachment_id, "key": str(key),
             "value": json.dumps(value), "created_at": utcnow()}
            for key, value in (connector or {}).items()]


def connector_of(row: models.VolumeAttachment) -> dict:
    """The connector an attachment was given, or ``{}``."""
    result = {}
    for spec in row.specs:
        try:
            result[spec.key] = json.loads(spec.value)
        except (TypeError, ValueError):
            result[spec.key] = spec.value
    return result


def connection_info_of(row: models.VolumeAttachment) -> dict:
    return json.loads(row.connection_info) if row.connection_info else {}


def _replace_specs(session: Any, attachment_id: str,
                   connector: dict | None) -> None:
    session.execute(sa.delete(models.AttachmentSpec).where(
        models.AttachmentSpec.attachment_id == attachment_id))
    _insert_specs(session, attachment_id, connector)


def _insert_specs(session: Any, attachment_id: str,
                  connector: dict | None) -> None:
    rows = _spec_rows(attachment_id, connector)
    if rows:
        session.execute(sa.insert(models.AttachmentSpec), rows)


# -- helpers ----------------------------------------------------------------

def _get(session: Any, attachment_id: str,
         with_specs: bool = True) -> models.VolumeAttachment:
    """The row; ``with_specs`` False leaves ``specs`` empty (views)."""
    options = [] if with_specs else [orm.noload(VA.specs)]
    row = session.get(VA, attachment_id, populate_existing=True,
                      options=options)
    if row is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    return row


#: What locking the volume row tells: its statuses and live row count.
_STATE = (VOL.status, VOL.attach_status, VOL.attachment_count)


def _returning(session: Any, kind: str) -> bool:
    """Whether the dialect supports ``update_returning``/``delete_returning``
    (not MariaDB's UPDATE)."""
    return bool(getattr(session.get_bind().dialect, kind, False))


def _state_after(session: Any, volume_id: str, query: Any) -> Any:
    """Run a counter ``UPDATE`` of one volume; its ``_STATE`` after, or None
    when it matched no row."""
    query = query.execution_options(synchronize_session=False)
    if _returning(session, "update_returning"):
        return session.execute(query.returning(*_STATE)).first()
    if session.execute(query).rowcount != 1:
        return None
    return session.execute(sa.select(*_STATE).where(
        VOL.id == volume_id)).one()


def _lock_volume(session: Any, volume_id: str, writer_delta: int = 0,
                 count_delta: int = 0) -> Any:
    """Take the volume row's lock, adjusting its counters if asked.

    NOTE(ashlar): always the transaction's first statement.  PostgreSQL and
    InnoDB lock the row (``FOR UPDATE`` or the ``UPDATE``) and see its latest
    committed version; SQLite holds its write lock since ``BEGIN
    IMMEDIATE`` (``common.db.api._tune_sqlite``).

    :returns: the volume's ``_STATE`` (after the counter change).
    """
    if writer_delta or count_delta:
        state = _state_after(session, volume_id, sa.update(VOL).where(
            VOL.id == volume_id).values(
            attachment_count=VOL.attachment_count + count_delta,
            writer_count=VOL.writer_count + writer_delta,
            updated_at=utcnow()))
    else:
        state = session.execute(sa.select(*_STATE).where(
            VOL.id == volume_id).with_for_update()).first()
    if state is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return state


def _live_statuses(session: Any, volume_id: str) -> list[str]:
    return list(session.execute(sa.select(VA.attach_status).where(
        VA.volume_id == volume_id).with_for_update()).scalars())


def _derive(state: Any, statuses: list[str],
            force_from: str | None = None) -> tuple[str, str]:
    base = states.VOL.AVAILABLE if state.status == force_from \
        else state.status
    return states.volume_status(statuses, base)


def _sync_volume(session: Any, volume_id: str, state: Any,
                 statuses: list[str] | None = None,
                 force_from: str | None = None) -> tuple[str, str]:
    """Recompute the volume's statuses from its live rows (lock held).

    :param state: the volume's ``_STATE``, as read under the lock.
    :param statuses: the live rows' statuses when known, else read.
    :param force_from: derive ``status`` even when the volume is in this
        non-attach status (the end of an extend or a retype).
    """
    if statuses is None:
        statuses = _live_statuses(session, volume_id)
    status, attach_status = _derive(state, statuses, force_from)
    if (status, attach_status) != (state.status, state.attach_status):
        conditional_update(session, VOL, volume_id, {"status": state.status},
                           {"status": status, "attach_status": attach_status})
    return status, attach_status


def _only_row(state: Any, status: Any) -> list[str] | None:
    """The live statuses when the row just written (in ``status``) is the
    volume's only one, else None (read them)."""
    if state.attachment_count == 1 and isinstance(status, str):
        return [status]
    return None


def _shared(session: Any, volume_id: str, attachment_id: str,
            host: str | None) -> list[str]:
    """Other live rows of the volume connected (or connecting) on ``host``."""
    if not host:
        return []
    query = sa.select(VA.id).where(
        VA.volume_id == volume_id, VA.id != attachment_id,
        VA.attached_host == host,
        VA.attach_status.in_(list(states.CONNECTED))).order_by(VA.created_at)
    return list(session.execute(query).scalars())


# -- reads ----------------------------------------------------------------

@reader
def attachment_get(context: Any, attachment_id: str,
                   with_specs: bool = True) -> models.VolumeAttachment:
    """:raises AttachmentNotFound:"""
    return _get(context.session, attachment_id, with_specs)


@reader
def lock_key(context: Any, attachment_id: str) -> tuple[str, str | None]:
    """``(volume_id, attached_host)`` of a row (one small read).

    :raises AttachmentNotFound:
    """
    found = context.session.execute(sa.select(
        VA.volume_id, VA.attached_host).where(VA.id == attachment_id)).first()
    if found is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    return found[0], found[1]


#: The volume columns attachment work needs (a light read: no type,
#: metadata or attachment rows).
_BRIEF = (VOL.id, VOL.project_id, VOL.status, VOL.attach_status, VOL.host,
          VOL.size, VOL.display_name, VOL.provider_location, VOL.multiattach,
          VOL.bootable, VOL.readonly, VOL.encrypted, VOL.volume_type_id,
          VOL.migration_status, VOL.attachment_count, VOL.writer_count)


def _brief(session: Any, volume_id: str) -> Any:
    row = session.execute(sa.select(*_BRIEF).where(
        VOL.id == volume_id)).first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return row


@reader
def volume_brief(context: Any, volume_id: str,
                 with_specs: bool = False) -> tuple[Any, dict]:
    """The volume's columns of ``_BRIEF`` (attribute access), and its
    type's extra specs when asked.

    :raises VolumeNotFound:
    """
    row = _brief(context.session, volume_id)
    specs = {}
    if with_specs:
        spec = models.VolumeTypeExtraSpec
        specs = dict(context.session.execute(
            sa.select(spec.key, spec.value).where(
                spec.volume_type_id == row.volume_type_id)).all())
    return row, specs


@reader
def attachment_with_volume(context: Any, attachment_id: str,
                           shared: bool = False, with_specs: bool = True
                           ) -> tuple[models.VolumeAttachment, Any, list]:
    """The row, its volume (as ``volume_brief``) and, if asked, its
    ``shared_connections_by_attachment``, in one read.

    :raises AttachmentNotFound:
    """
    session = context.session
    query = sa.select(VA, orm.Bundle("volume", *_BRIEF)).join(
        VOL, VOL.id == VA.volume_id).where(VA.id == attachment_id)
    if not with_specs:
        query = query.options(orm.noload(VA.specs))
    found = session.execute(query.execution_options(
        populate_existing=True)).first()
    if found is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    row, volume = found
    others = (_shared(session, row.volume_id, row.id, row.attached_host)
              if shared else [])
    return row, volume, others


@reader
def attachment_to_delete(context: Any, attachment_id: str
                         ) -> tuple[models.VolumeAttachment, Any, bool]:
    """The row (no connector rows), its volume (as ``volume_brief``) and
    whether it has a connector, in one read.

    :raises AttachmentNotFound:
    """
    has_connector = sa.exists().where(
        models.AttachmentSpec.attachment_id == VA.id)
    query = sa.select(VA, orm.Bundle("volume", *_BRIEF),
                      has_connector.label("has_connector")).join(
        VOL, VOL.id == VA.volume_id).where(
        VA.id == attachment_id).options(orm.noload(VA.specs))
    found = context.session.execute(query.execution_options(
        populate_existing=True)).first()
    if found is None:
        raise exception.AttachmentNotFound(attachment_id=attachment_id)
    return found[0], found[1], bool(found[2])


@reader
def attachment_list(context: Any, project_id: str | None = None,
                    filters: dict | None = None, limit: int | None = None,
                    marker: str | None = None,
                    sort_keys: list | None = None,
                    sort_dirs: list | None = None,
                    offset: int | None = None
                    ) -> list[models.VolumeAttachment]:
    """Attachments of volumes in ``project_id`` (all when None).

    :raises AttachmentNotFound: for an unknown marker.
    """
    query = context.session.query(VA)
    if project_id is not None:
        query = query.join(VOL, VOL.id == VA.volume_id).filter(
            VOL.project_id == project_id)
    for key, value in (filters or {}).items():
        query = query.filter(getattr(VA, key) == value)
    marker_row = _get(context.session, marker) if marker else None
    return page(query, VA, marker_row, limit, sort_keys, sort_dirs, offset)


@reader
def attachments_of_volume(context: Any, volume_id: str
                          ) -> list[models.VolumeAttachment]:
    query = sa.select(VA).where(VA.volume_id == volume_id).order_by(
        VA.created_at)
    return list(context.session.execute(query).scalars())


@reader
def attachments_in_transition(context: Any, backend: str,
                              older_than: Any) -> list[models.VolumeAttachment]:
    """Rows of ``backend``'s volumes in flight since before ``older_than``."""
    query = sa.select(VA).join(VOL, VOL.id == VA.volume_id).where(
        VA.transition.is_not(None),
        sa.func.coalesce(VA.updated_at, VA.created_at) < older_than,
        VOL.host.like(backend + "#%"))
    return list(context.session.execute(query).scalars())


@reader
def connection_holders(context: Any, volume_id: str, attachment_id: str,
                       host: str | None) -> list[str]:
    """Rows besides ``attachment_id`` that use the volume's ``host``
    connection (what decides whether terminating it is safe)."""
    return _shared(context.session, volume_id, attachment_id, host)


# -- writes ---------------------------------------------------------------

@retry_on_deadlock
@writer
def attachment_reserve(context: Any, volume_id: str,
                       guard: states.ReserveGuard, values: dict,
                       connector: dict | None = None
                       ) -> models.VolumeAttachment | None:
    """Reserve a place on the volume and insert the row, atomically.

    :param values: columns of the new row (``id`` included).
    :returns: the new row, or None when the guard refused (nothing written).
    """
    session = context.session
    conditions = [VOL.id == volume_id,
                  VOL.status.in_(list(states.RESERVABLE)),
                  VOL.multiattach == guard.multiattach]
    if guard.multiattach:
        conditions.append(VOL.attachment_count < guard.limit)
    else:
        alone = VOL.attachment_count == 0
        if guard.instance_uuid:
            same = sa.exists().where(VA.volume_id == volume_id,
                                     VA.instance_uuid == guard.instance_uuid)
            alone = sa.or_(alone, sa.and_(VOL.attachment_count == 1, same))
        conditions.append(alone)
    if guard.single_writer and guard.writer:
        conditions.append(VOL.writer_count == 0)
    state = _state_after(session, volume_id, sa.update(VOL).where(
        *conditions).values(
        attachment_count=VOL.attachment_count + 1,
        writer_count=VOL.writer_count + int(guard.writer),
        updated_at=utcnow()))
    if state is None:
        return None
    row = VA(volume_id=volume_id, **dict(_UNSET, **values))
    session.add(row)
    session.flush()
    _insert_specs(session, values["id"], connector)
    _sync_volume(session, volume_id, state,
                 _only_row(state, values["attach_status"]))
    return row


#: Columns of a new row not given by the caller (so the returned row needs
#: no reload); ``specs`` stays empty, as ``with_specs=False`` reads leave it.
_UNSET = {"instance_uuid": None, "attached_host": None, "mountpoint": None,
          "attach_mode": states.MODE_NULL, "connection_info": None,
          "attach_time": None, "detach_time": None, "transition": None,
          "updated_at": None, "specs": []}


class _NoMatch(Exception):
    """Abort a writer transaction whose compare-and-swap found nothing."""


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
        _attachment_cas(context, volume_id, attachment_id, expected, values,
                        connector, replace_connector, writer_delta)
    except _NoMatch:
        return False
    return True


@retry_on_deadlock
@writer
def _attachment_cas(context: Any, volume_id: str, attachment_id: str,
                    expected: dict, values: dict, connector: dict | None,
                    replace_connector: bool,
                    writer_delta: int) -> None:
    session = context.session
    state = _lock_volume(session, volume_id, writer_delta=writer_delta)
    now = values.get("attach_status", expected.get("attach_status"))
    expected = dict(expected, volume_id=volume_id)
    if not conditional_update(session, VA, attachment_id, expected, values):
        raise _NoMatch()
    if replace_connector:
        _replace_specs(session, attachment_id, connector)
    _sync_volume(session, volume_id, state, _only_row(state, now))


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
    except (_NoMatch, exception.AttachmentNotFound):
        return None


@retry_on_deadlock
@writer
def _attachment_destroy(context: Any, volume_id: str, attachment_id: str,
                        expected: dict) -> dict:
    session = context.session
    state = _lock_volume(session, volume_id)
    query = where_expected(sa.delete(VA).where(VA.id == attachment_id,
                                               VA.volume_id == volume_id),
                           VA, expected)
    query = query.execution_options(synchronize_session=False)
    session.execute(sa.delete(models.AttachmentSpec).where(
        models.AttachmentSpec.attachment_id == attachment_id))
    # NOTE(ashlar): on a mismatch the spec rows come back with the rollback.
    if _returning(session, "delete_returning"):
        gone = session.execute(query.returning(
            VA.attached_host, VA.attach_mode)).first()
    else:
        gone = session.execute(sa.select(
            VA.attached_host, VA.attach_mode).where(
            VA.id == attachment_id, VA.volume_id == volume_id)).first()
        if gone is not None and session.execute(query).rowcount != 1:
            gone = None
    if gone is None:
        raise _NoMatch()
    host, mode = gone
    remaining = []
    if state.attachment_count > 1:
        remaining = list(session.execute(sa.select(VA).options(
            orm.noload(VA.specs)).where(VA.volume_id == volume_id).order_by(
            VA.created_at).with_for_update()).scalars())
    status, attach_status = _derive(
        state, [other.attach_status for other in remaining])
    values = {"attachment_count": VOL.attachment_count - 1,
              "writer_count": VOL.writer_count - int(states.is_writer(mode)),
              "updated_at": utcnow()}
    update = sa.update(VOL).where(VOL.id == volume_id)
    if (status, attach_status) != (state.status, state.attach_status):
        update = update.where(VOL.status == state.status)
        values.update(status=status, attach_status=attach_status)
    if session.execute(update.values(**values).execution_options(
            synchronize_session=False)).rowcount != 1:
        # NOTE(ashlar): cannot happen with the lock held; roll back.
        raise exception.VolumeNotFound(volume_id=volume_id)
    shared = [other.id for other in remaining
              if host and other.attached_host == host
              and other.attach_status in states.CONNECTED]
    return {"volume_id": volume_id, "remaining": remaining, "shared": shared}


@retry_on_deadlock
@writer
def volume_leave_status(context: Any, volume_id: str, status: str,
                        values: dict | None = None) -> bool:
    """End a non-attach status (extending, retyping): compare-and-swap it
    to the status the attachments say, with ``values``.

    :returns: whether the volume was in ``status``.
    """
    session = context.session
    state = _lock_volume(session, volume_id)
    if state.status != status:
        return False
    if values:
        if not conditional_update(session, VOL, volume_id,
                                  {"status": status}, values):
            return False
        if set(values) & {"status", "attach_status"}:
            state = session.execute(sa.select(*_STATE).where(
                VOL.id == volume_id)).one()
            if state.status != status:
                return False
    _sync_volume(session, volume_id, state, force_from=status)
    return True
