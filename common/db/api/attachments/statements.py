"""The prebuilt statements of the attachment family and the columns they read.

Built once at import: SQLAlchemy reuses each one's compiled form and cache
key, and ``common.db.api.direct`` its plan.  Parameters: attachment_id,
volume_id, host; those of the volume's counters and statuses are named
where each is built.
"""

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from common import states
from common.db import models
from common.db.api.paging import LIMIT

VA = models.VolumeAttachment
VOL = models.Volume
SPEC = models.AttachmentSpec

AID: sa.BindParameter[str] = sa.bindparam("attachment_id")
VID: sa.BindParameter[str] = sa.bindparam("volume_id")


def among(column: sa.SQLColumnExpression[str | None],
          values: Iterable[str]) -> sa.ColumnElement[bool]:
    """``column IN (values)`` for a fixed set of values, as ORed ``=``.

    NOTE(ashlar): SQLAlchemy turns ``in_(list)`` into an "expanding"
    parameter that it renders into the SQL again at every execution; the
    prebuilt statements of the hot paths use this instead.
    """
    return sa.or_(*(column == value for value in sorted(values)))


#: Every column of an attachment row.
ROW = tuple(getattr(VA, column.key) for column in VA.__table__.columns)

#: What locking the volume row tells: its statuses and live row count.
STATE = (VOL.status, VOL.attach_status, VOL.attachment_count)

#: The QoS specs (JSON) of the volume's type that a compute host applies
#: (consumer ``front-end`` or ``both``), as an attachment's
#: ``connection_info`` gives them; NULL when its type has none.
FRONT_END_QOS = sa.select(models.QoSSpecs.specs).join(
    models.VolumeType,
    models.VolumeType.qos_specs_id == models.QoSSpecs.id).where(
    models.VolumeType.id == VOL.volume_type_id,
    among(models.QoSSpecs.consumer, ("front-end", "both"))
).scalar_subquery().label("front_end_qos")

#: The volume columns attachment work needs (a light read: no type,
#: metadata or attachment rows; the front-end QoS specs of its type).
BRIEF = (VOL.id, VOL.project_id, VOL.status, VOL.attach_status, VOL.host,
         VOL.size, VOL.display_name, VOL.provider_location, VOL.multiattach,
         VOL.bootable, VOL.readonly, VOL.encrypted, VOL.volume_type_id,
         VOL.migration_status, VOL.attachment_count, VOL.writer_count,
         FRONT_END_QOS)
PREFIX = "vol__"

#: Whether a row has connector rows (``has_connector`` of
#: ``reads._with_volume``).
HAS_CONNECTOR = sa.exists().where(SPEC.attachment_id == VA.id).label(
    "has_connector")


def holds_connection(row: type[VA]) -> sa.ColumnElement[bool]:
    """``states.holds_connection`` of a row of ``VA`` (or an alias)."""
    return sa.and_(among(row.attach_status, states.CONNECTED),
                   sa.or_(row.transition.is_(None),
                          row.transition != states.Transition.DISCONNECTING))


def _part(name: str) -> sa.Label[str]:
    """A constant column naming a part of a ``UNION ALL``."""
    return sa.literal_column("'%s'" % name, sa.String).label("part")


# Statements of the hot paths, built once: SQLAlchemy reuses their compiled
# form and cache key.  Parameters: attachment_id, volume_id, host, type_id.
SELECT_CONNECTOR = sa.select(SPEC.key, SPEC.value).where(
    SPEC.attachment_id == AID)
DELETE_SPECS = sa.delete(SPEC).where(SPEC.attachment_id == AID)
INSERT_SPECS = sa.insert(SPEC)
INSERT_ROW = sa.insert(VA)
SELECT_ROW = sa.select(*ROW).where(VA.id == AID)
SELECT_STATE = sa.select(*STATE).where(VOL.id == VID)
LOCK_STATE = SELECT_STATE.with_for_update(key_share=True)
LIVE_STATUSES = sa.select(VA.attach_status).where(VA.volume_id == VID)
LIVE_ROWS = sa.select(*ROW).where(VA.volume_id == VID).order_by(
    VA.created_at)
#: Another row of the volume using the connection of ``host``.
SHARES_HOST = sa.and_(VA.volume_id == VID, VA.id != AID,
                      VA.attached_host == sa.bindparam("host"),
                      holds_connection(VA))
SHARED = sa.select(VA.id).where(SHARES_HOST).order_by(VA.created_at)
SELECT_BRIEF = sa.select(*BRIEF).where(VOL.id == VID)
#: ``GET /attachments?volume_id=`` (the list's usual read): the volume's
#: first ``:limit`` rows in Cinder's default order (newest first); the
#: ``_OWNED`` one only if the volume is ``:project_id``'s.
VOLUME_PAGE = sa.select(*ROW).where(VA.volume_id == VID).order_by(
    VA.created_at.desc(), VA.id.desc()).limit(LIMIT)
VOLUME_PAGE_OWNED = VOLUME_PAGE.join(VOL, VOL.id == VA.volume_id).where(
    VOL.project_id == sa.bindparam("project_id"))
WITH_VOLUME = sa.select(*ROW, HAS_CONNECTOR, *(
    column.label(PREFIX + column.key) for column in BRIEF)).join(
    VOL, VOL.id == VA.volume_id).where(VA.id == AID)
#: Another live row of the same volume and host (``SHARED`` as a join).
_OTHER = orm.aliased(VA)
WITH_VOLUME_SHARED = WITH_VOLUME.add_columns(
    _OTHER.id.label("shared_id")).outerjoin(_OTHER, sa.and_(
        _OTHER.volume_id == VA.volume_id, _OTHER.id != VA.id,
        _OTHER.attached_host == VA.attached_host,
        holds_connection(_OTHER))).order_by(
    _OTHER.created_at)
BRIEF_SPECS = SELECT_BRIEF.add_columns(
    models.VolumeTypeExtraSpec.key.label("spec_key"),
    models.VolumeTypeExtraSpec.value.label("spec_value")).outerjoin(
    models.VolumeTypeExtraSpec,
    models.VolumeTypeExtraSpec.volume_type_id == VOL.volume_type_id)

#: What removing a row's host connection needs, in one statement; each
#: result row is a ``part``: ``row`` (key: its attach_status, value: its
#: transition), ``spec`` (a connector key and value) or ``holder`` (key:
#: the id of another row using the connection, as ``SHARED``).
DISCONNECT_STATE: sa.CompoundSelect[str, str, str | None] = sa.union_all(
    sa.select(_part("row"), VA.attach_status.label("key"),
              VA.transition.label("value")).where(VA.id == AID),
    sa.select(_part("spec"), SPEC.key, SPEC.value).where(
        SPEC.attachment_id == AID),
    sa.select(_part("holder"), VA.id, sa.null()).where(SHARES_HOST))
COUNT = sa.update(VOL).where(VOL.id == VID).values(
    writer_count=VOL.writer_count + sa.bindparam("writer_delta"),
    updated_at=sa.bindparam("now"))
#: What the volume becomes when its last row goes (``volume_status([])``).
_EMPTY_STATUS, _EMPTY_ATTACH_STATUS = states.volume_status(
    [], states.VOL.AVAILABLE)
_LAST = VOL.attachment_count == 1
# NOTE(ashlar): the statuses come first and read the count before it is
# decremented: MySQL evaluates a single-table UPDATE's assignments left to
# right, each seeing the ones before it.
LEAVE = sa.update(VOL).where(VOL.id == VID).ordered_values(
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
#: raise them (``states.raises``; parameters from ``volume_status.raised``).
#: They come first in an ``UPDATE``: ``status`` reads ``attach_status`` as
#: it was.
RAISED = (
    (VOL.status, sa.case(
        (sa.and_(_OUTRANKED, among(VOL.status, states.ATTACH_DRIVEN)),
         sa.bindparam("new_status")), else_=VOL.status)),
    (VOL.attach_status, sa.case((_OUTRANKED, sa.bindparam("new_attach_status")),
                                else_=VOL.attach_status)))
#: What ``RAISE`` sets (parameters: ``raised``, writer_delta, now).
RAISE_VALUES: tuple[tuple[orm.InstrumentedAttribute[Any],
                          sa.ColumnElement[Any]], ...] = (
    *RAISED,
    (VOL.writer_count, VOL.writer_count + sa.bindparam("writer_delta")),
    (VOL.updated_at, sa.bindparam("now")))
RAISE = sa.update(VOL).where(VOL.id == VID).ordered_values(*RAISE_VALUES)
