"""The state machines, as pure functions, and every status set.

This is the one place that says which status follows which, and from
which statuses each operation on a volume, snapshot, group or group
snapshot starts (the ``*_DELETABLE``, ``*_STATUSES``, ... sets below).
The database layer (``common/db/api/attachments/``) applies these answers
with compare-and-swap updates; the API and the volume service only ask.
The values themselves are Cinder's, named in ``common.constants``; what
the multiattach settings of a type allow is ``common.attach_rules``.

Attachments (``volume_attachment.attach_status`` plus ``transition``, the
operation in flight, NULL at rest)::

    create ........................ reserved
    create with connector ......... attaching   [creating]
    update (connector) on reserved  attaching   [connecting]
    update on attaching/attached .. (same)      [reconnecting] (same host)
    volume service answered ....... (same)      transition NULL
    complete ...................... attached (from reserved or attaching)
    delete with a connection ...... (same)      [disconnecting] -> row gone
    delete without a connection ... row gone
    fence ......................... (same)      [fencing] -> fenced_at set

A row being disconnected keeps its status until it goes, as in Cinder's
attachment delete, so starting a delete never changes the volume's
status; the row no longer counts as a holder of its host's connection
(``holds_connection``).  (Rows of releases before this one were marked
``detaching`` instead; they are deleted the same way.)

A row in flight is resolved by whoever holds it: the volume service that
finishes the backend call, or, when that process died, the volume service's
check of stuck transitions (``resolve_stuck``), which terminates the backend
connection and rolls the row back (``connecting`` -> reserved,
``reconnecting`` -> error_attaching, ``creating`` -> removed) or forward
(``disconnecting`` -> removed).  ``reserved`` rows hold no connection and are
never reaped, with one exception: a row a compute agent made through the RPC
door and did not complete before its lease lapsed (the agent vanished, or
its call timed out and it never learnt the id) is removed like a delete
(``reap_lapsed_leases``); a REST row left ``attaching`` (connected, at
rest, no lease) as long is completed, not undone, since a host may use its
connection (``complete_unconfirmed``).  A fence that died is finished, not undone
(``fencing`` -> fenced): revoking a host's I/O twice is harmless, and a
fence once asked for must not silently lapse.

A fenced row (``fenced_at`` set) keeps its status, so the volume stays
in-use for the others, but it no longer counts as a writer, and its host
may only delete it: an update or ``os-complete`` is refused
(``refuse_fenced``).

Volumes: ``status``/``attach_status`` of a volume in one of
``ATTACH_DRIVEN`` are always derived from its live attachment rows
(``volume_status``), recomputed in the transaction that changes a row:

    any attached ............... in-use / attached
    else any attaching ......... attaching / attaching
    else any detaching ......... detaching / detaching
    else any reserved .......... reserved / reserved
    else (none, or only error_*) available / detached

So a volume is never shown ``attaching`` while one of its attachments is
attached (Cinder does: reserving and connecting another attachment of an
``in-use`` multiattach volume shows it ``reserved``, then ``attaching``,
until that one completes), and ``reserved`` or
``attaching`` only say "claimed, but no host uses it yet".  None of these
statuses blocks another attachment of a multiattach volume: reservations are
guarded by counters (``ReserveGuard``), not by the volume status.  While a
volume is in another status (extending, retyping, ...) only
``attach_status`` follows the rows; the operation that ends that status
recomputes ``status`` the same way.
"""

from collections.abc import Iterable
from typing import Protocol
from typing import TypeGuard
from typing import TypeVar

from common import constants
from common import exception

VOL = constants.VolumeStatus
ATT = constants.AttachStatus
SNAP = constants.SnapshotStatus
MIG = constants.MigrationStatus
GRP = constants.GroupStatus
GSNAP = constants.GroupSnapshotStatus
BAK = constants.BackupStatus

# -- status sets: the statuses each operation starts from --------------------
# NOTE(ashlar): every set of statuses an operation checks or expects in a
# compare-and-swap is named here, once; the operations and the database
# layer use the names.  The values are Cinder's (``common.constants``).

#: Every volume status: what ``os-reset_status`` may set.
VOLUME_STATUSES = tuple(value for name, value in vars(VOL).items()
                        if name.isupper())

#: A volume may be deleted (not by force) in these, as in Cinder.
VOLUME_DELETABLE = (VOL.AVAILABLE, VOL.ERROR, VOL.ERROR_RESTORING,
                    VOL.ERROR_EXTENDING, VOL.ERROR_MANAGING)


def backend_may_hold(host: str | None) -> TypeGuard[str]:
    """Whether the backend of a volume placed on ``host`` may hold its
    data, so that its delete must go through its volume node: any volume
    ever placed.  (Without a ``provider_location`` it may still: its node
    may have been killed, or the scheduler's sweep may have failed its
    slow create, after the backend made it.)"""
    return host is not None


#: A volume may be extended in these; ``in-use`` from 3.42 (policy
#: ``volume:extend_attached_volume``).
VOLUME_EXTENDABLE = (VOL.AVAILABLE,)
VOLUME_EXTENDABLE_ATTACHED = (VOL.AVAILABLE, VOL.IN_USE)
#: The legacy ``os-reserve`` takes a volume from these to ``attaching``;
#: a multiattach one from either of the second pair, as in Cinder.
VOLUME_LEGACY_RESERVABLE = (VOL.AVAILABLE,)
VOLUME_LEGACY_RESERVABLE_MULTIATTACH = (VOL.AVAILABLE, VOL.IN_USE)
#: A volume may be retyped, or be the source of a copy, in these.
VOLUME_RETYPABLE = (VOL.AVAILABLE, VOL.IN_USE)
VOLUME_COPYABLE = (VOL.AVAILABLE, VOL.IN_USE)
#: A volume may be snapshotted in these (``in-use`` with ``force``, or
#: from 3.66, and always as a member of a group snapshot).
VOLUME_SNAPSHOTTABLE = (VOL.AVAILABLE,)
VOLUME_SNAPSHOTTABLE_FORCED = (VOL.AVAILABLE, VOL.IN_USE)
#: A volume may join a group, or leave one, in these (Cinder's).
VOLUME_GROUP_ADDABLE = (VOL.AVAILABLE, VOL.IN_USE)
VOLUME_GROUP_REMOVABLE = (VOL.AVAILABLE, VOL.IN_USE, VOL.ERROR,
                          VOL.ERROR_DELETING)
#: ``migration_status`` of a volume that is not moving: what Cinder lets
#: deletes, snapshots, retypes and transfers through.
MIGRATION_SETTLED = (None, MIG.ERROR, MIG.SUCCESS)
#: What ``os-reset_status`` may set (Cinder's lists).
VOLUME_RESET_ATTACH_STATUSES = (ATT.ATTACHED, ATT.DETACHED)
VOLUME_RESET_MIGRATION_STATUSES = (MIG.MIGRATING, MIG.ERROR, MIG.SUCCESS,
                                   MIG.COMPLETING, MIG.NONE, MIG.STARTING)

#: Every snapshot status: what ``os-reset_status`` may set.
SNAPSHOT_STATUSES = (SNAP.CREATING, SNAP.AVAILABLE, SNAP.DELETING,
                     SNAP.ERROR, SNAP.ERROR_DELETING, SNAP.RESTORING,
                     SNAP.BACKING_UP)
#: A snapshot is force-deleted in any status but these: a revert or a
#: backup reads it.
SNAPSHOT_BUSY = (SNAP.RESTORING, SNAP.BACKING_UP)
#: A snapshot may be the source of a new volume in these.
SNAPSHOT_COPYABLE = (SNAP.AVAILABLE,)
#: A snapshot may be deleted (not by force) in these.
SNAPSHOT_DELETABLE = (SNAP.AVAILABLE, SNAP.ERROR)
#: ``os-update_snapshot_status``: from a status, the statuses it may set.
SNAPSHOT_STATUS_UPDATES = {
    SNAP.CREATING: (SNAP.CREATING, SNAP.AVAILABLE, SNAP.ERROR),
    SNAP.DELETING: (SNAP.DELETING, SNAP.ERROR_DELETING)}

#: Every group status: what ``os-reset_status`` may set.
GROUP_STATUSES = (GRP.AVAILABLE, GRP.CREATING, GRP.DELETING, GRP.DELETED,
                  GRP.ERROR, GRP.ERROR_DELETING, GRP.IN_USE, GRP.UPDATING)
#: A group may be deleted, without its volumes, in these.
GROUP_DELETABLE = (GRP.AVAILABLE, GRP.ERROR)
#: Every group snapshot status: what ``os-reset_status`` may set.
GROUP_SNAPSHOT_STATUSES = (GSNAP.AVAILABLE, GSNAP.CREATING, GSNAP.DELETING,
                           GSNAP.DELETED, GSNAP.ERROR, GSNAP.ERROR_DELETING,
                           GSNAP.UPDATING)
#: A group snapshot may be deleted in these.
GROUP_SNAPSHOT_DELETABLE = (GSNAP.AVAILABLE, GSNAP.ERROR)

#: Every backup status.
BACKUP_STATUSES = (BAK.CREATING, BAK.AVAILABLE, BAK.DELETING, BAK.RESTORING,
                   BAK.ERROR, BAK.ERROR_DELETING)
#: A volume may be backed up in these (``in-use`` with ``force``), as in
#: Cinder; it is ``backing-up`` meanwhile and goes back after.
VOLUME_BACKUPABLE = (VOL.AVAILABLE,)
VOLUME_BACKUPABLE_FORCED = (VOL.AVAILABLE, VOL.IN_USE)
#: A snapshot may be backed up in these; it is ``backing-up`` meanwhile.
SNAPSHOT_BACKUPABLE = (SNAP.AVAILABLE,)
#: A backup may be deleted, or be the parent of an incremental one, or be
#: restored, in these.
BACKUP_DELETABLE = (BAK.AVAILABLE, BAK.ERROR)
BACKUP_USABLE = (BAK.AVAILABLE,)
#: What ``os-reset_status`` may set on a backup (Cinder's list).
BACKUP_RESET_STATUSES = (BAK.AVAILABLE, BAK.ERROR)
#: A backup is force-deleted in any status but these: a restore is reading
#: it (a ``creating`` one is cancelled: its service stops reading).
BACKUP_BUSY = (BAK.RESTORING,)
#: An existing volume may be restored into in these (Cinder's).
VOLUME_RESTORABLE = (VOL.AVAILABLE,)
#: A backup service resumes its backups found in these as it starts (each
#: step rewrites what it wrote: chunk files replaced whole, metadata last).
BACKUP_IN_FLIGHT = (BAK.CREATING, BAK.RESTORING, BAK.DELETING)

# -- attachments ---------------------------------------------------------------

#: Volume statuses that are a function of the attachment rows.
ATTACH_DRIVEN = frozenset([VOL.AVAILABLE, VOL.RESERVED, VOL.ATTACHING,
                           VOL.IN_USE, VOL.DETACHING])
#: A volume may take a new attachment only in these statuses.
RESERVABLE = ATTACH_DRIVEN

#: Precedence of live attachment statuses when deriving the volume's.
_PRECEDENCE = ((ATT.ATTACHED, VOL.IN_USE), (ATT.ATTACHING, VOL.ATTACHING),
               (ATT.DETACHING, VOL.DETACHING), (ATT.RESERVED, VOL.RESERVED))

#: Attachment statuses of a row not yet complete, which a lapsed lease
#: reaps (with no transition in flight and no fence).
UNCOMPLETED = frozenset([ATT.RESERVED, ATT.ATTACHING])
#: Attachment statuses whose row may hold a backend connection.
CONNECTED = frozenset([ATT.ATTACHING, ATT.ATTACHED])
#: Attach modes; ``null`` (the string) means "not said", treated as rw.
MODE_NULL = "null"
MODE_RW = "rw"
MODE_RO = "ro"



class Transition:
    """Values of ``volume_attachment.transition``: the operation in flight."""

    CREATING = "creating"          # create with connector, until connected
    CONNECTING = "connecting"      # update of a reserved row
    RECONNECTING = "reconnecting"  # update of a connected row (same host)
    DISCONNECTING = "disconnecting"  # delete of a row with a connection
    FENCING = "fencing"            # the backend is revoking the host's I/O

    CONNECT = frozenset([CREATING, CONNECTING, RECONNECTING])


#: Marker result: the row is to be removed.
DESTROY = "destroy"
#: Marker result: the fence is to be finished.
FENCE = "fence"


class InvalidTransition(exception.Conflict):
    """The attachment is not in a status the operation starts from."""

    msg_fmt = ("Attachment %(id)s is %(status)s; cannot %(operation)s it "
               "now.")


# -- volume status ----------------------------------------------------------

def volume_status(attachment_statuses: Iterable[str],
                  current: str) -> tuple[str, str]:
    """Derive ``(status, attach_status)`` from the live attachment rows.

    :param attachment_statuses: ``attach_status`` of every live row.
    :param current: the volume's status now; kept when not attach-driven.
    """
    present = set(attachment_statuses)
    attach_status = ATT.DETACHED
    derived = VOL.AVAILABLE
    for att_status, vol_status in _PRECEDENCE:
        if att_status in present:
            attach_status, derived = att_status, vol_status
            break
    if current not in ATTACH_DRIVEN:
        return current, attach_status
    return derived, attach_status


#: Rank of an attachment status in ``volume_status``'s precedence (0: it
#: does not count, as ``detached`` or an error status).
RANK = {att: len(_PRECEDENCE) - i for i, (att, _vol) in enumerate(_PRECEDENCE)}
#: The volume status a top-ranked attachment status makes.
STATUS_OF = dict(_PRECEDENCE)


def raises(old: str | None, new: str) -> bool:
    """Whether a row going from ``old`` (None: a new row) to ``new`` can
    only raise what ``volume_status`` derives, so that the volume's new
    ``attach_status`` is the higher-ranked of its current one and ``new``,
    whatever the other rows are.

    (Were ``old`` the top-ranked status, ``new`` ranks at least as high; were
    it not, the top stays present.)
    """
    return old is None or RANK.get(new, 0) >= RANK.get(old, 0)


def is_writer(mode: str) -> bool:
    """Whether an attach mode counts against single-writer mode."""
    return mode != MODE_RO


def counts_as_writer(mode: str, fenced_at: object) -> bool:
    """Whether a row counts in its volume's writer count: a writer's mode,
    not fenced."""
    return is_writer(mode) and fenced_at is None


# -- attachment transitions ---------------------------------------------------

def on_reserve(with_connector: bool) -> tuple[str, str | None]:
    """Status and transition of a new row."""
    if with_connector:
        return ATT.ATTACHING, Transition.CREATING
    return ATT.RESERVED, None


def _busy(att_id: str, status: str, transition: str | None,
          operation: str) -> InvalidTransition:
    shown = "%s (%s)" % (status, transition) if transition else status
    return InvalidTransition(id=att_id, status=shown, operation=operation)


def on_connect(att_id: str, status: str,
               transition: str | None) -> tuple[str, str]:
    """Begin an update with a connector.

    :raises InvalidTransition: in flight, detaching, or error_detaching.
    """
    if transition is None:
        if status in (ATT.RESERVED, ATT.ERROR_ATTACHING):
            return ATT.ATTACHING, Transition.CONNECTING
        if status in CONNECTED:
            return status, Transition.RECONNECTING
    raise _busy(att_id, status, transition, "update")


def on_connect_failed(status: str, transition: str) -> str:
    """Roll back a failed or abandoned connect: a status, or ``DESTROY``."""
    if transition == Transition.CREATING:
        return DESTROY
    if transition == Transition.CONNECTING:
        return ATT.RESERVED
    return ATT.ERROR_ATTACHING


def on_complete(att_id: str, status: str, transition: str | None) -> str:
    """``os-complete``: reserved (no connector, e.g. shelved) or attaching
    becomes attached; attached stays attached.

    :raises InvalidTransition: in flight, detaching or in error.
    """
    if transition is None and status in (ATT.RESERVED, ATT.ATTACHING,
                                         ATT.ATTACHED):
        return ATT.ATTACHED
    raise _busy(att_id, status, transition, "complete")


def on_delete(status: str, transition: str | None,
              has_connector: bool) -> tuple[str, str]:
    """Begin a delete: ``(DESTROY, '')`` when no backend connection can
    exist, else ``(status, disconnecting)``: the status stays.

    Any row may be deleted.  A row already being deleted is driven again
    (after a timeout, say); a row being connected is taken over: the
    volume service's own compare-and-swap then fails and it terminates the
    connection it made, under the same (volume, host) lock as the delete.
    """
    if not has_connector and transition is None:
        return DESTROY, ""
    return status, Transition.DISCONNECTING


def holds_connection(status: str, transition: str | None) -> bool:
    """Whether a row uses (or is about to use) its host's backend
    connection: connected or connecting, and not being deleted."""
    return status in CONNECTED and transition != Transition.DISCONNECTING


def resolve_stuck(status: str, transition: str) -> str:
    """What the volume service does with a row whose operation died.

    ``FENCE``: the fence is finished.  Otherwise the backend connection is
    terminated first.
    """
    if transition == Transition.FENCING:
        return FENCE
    if transition == Transition.DISCONNECTING:
        return DESTROY
    return on_connect_failed(status, transition)


# -- fencing ----------------------------------------------------------------

def refuse_fenced(att_id: str, fenced_at: object) -> None:
    """:raises Fenced: the row is fenced."""
    if fenced_at is not None:
        raise exception.Fenced(id=att_id, at=fenced_at)


def on_fence(att_id: str, status: str, transition: str | None) -> str:
    """Begin a fence: the row goes in the ``fencing`` transition.

    :raises InvalidTransition: another operation is in flight on the row
        (the caller retries once it settles).
    """
    if transition is None:
        return Transition.FENCING
    raise _busy(att_id, status, transition, "fence")


class _Writes(Protocol):
    """What ``fenced_by_takeover`` reads of an attachment row."""

    @property
    def id(self) -> str: ...

    @property
    def attach_mode(self) -> str: ...

    @property
    def fenced_at(self) -> object: ...


_Row = TypeVar("_Row", bound=_Writes)


def fenced_by_takeover(rows: Iterable[_Row], taker_id: str) -> list[_Row]:
    """The rows a takeover by ``taker_id`` fences: every other row of the
    volume that may write and is not fenced yet."""
    return [row for row in rows if row.id != taker_id
            and counts_as_writer(row.attach_mode, row.fenced_at)]


# -- group snapshots ------------------------------------------------------------

def group_snapshot_follows(status: str | None,
                           members: set[str]) -> str | None:
    """The status a group snapshot in ``status`` (None: gone) takes once
    its member snapshots are in ``members`` (their statuses):
    ``available`` once all are, ``error`` if one failed,
    ``error_deleting`` if a delete failed; ``DESTROY`` once a deleting one
    has none left; None: it stays as it is."""
    if status == GSNAP.CREATING and (members <= {SNAP.AVAILABLE}
                                     or SNAP.ERROR in members):
        return GSNAP.ERROR if SNAP.ERROR in members else GSNAP.AVAILABLE
    if status == GSNAP.DELETING and SNAP.ERROR_DELETING in members:
        return GSNAP.ERROR_DELETING
    if status == GSNAP.DELETING and not members:
        return DESTROY
    return None

