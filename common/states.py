"""The volume and attachment state machines, as pure functions.

This is the one place that says which status follows which.  The database
layer (``common/db/api/attachments.py``) applies these answers with
compare-and-swap updates; the API and the volume service only ask.

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
(``reap_lapsed_leases``).  A fence that died is finished, not undone
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
attached (Cinder does, see cinder-internals §1.4 step 8), and ``reserved`` or
``attaching`` only say "claimed, but no host uses it yet".  None of these
statuses blocks another attachment of a multiattach volume: reservations are
guarded by counters (``ReserveGuard``), not by the volume status.  While a
volume is in another status (extending, retyping, ...) only
``attach_status`` follows the rows; the operation that ends that status
recomputes ``status`` the same way.
"""

import dataclasses
from collections.abc import Iterable, Mapping

from common import constants
from common import exception
from common import extra_specs

VOL = constants.VolumeStatus
ATT = constants.AttachStatus

#: Volume statuses that are a function of the attachment rows.
ATTACH_DRIVEN = frozenset([VOL.AVAILABLE, VOL.RESERVED, VOL.ATTACHING,
                           VOL.IN_USE, VOL.DETACHING])
#: A volume may take a new attachment only in these statuses.
RESERVABLE = ATTACH_DRIVEN

#: Precedence of live attachment statuses when deriving the volume's.
_PRECEDENCE = ((ATT.ATTACHED, VOL.IN_USE), (ATT.ATTACHING, VOL.ATTACHING),
               (ATT.DETACHING, VOL.DETACHING), (ATT.RESERVED, VOL.RESERVED))

#: Attachment statuses whose row may hold a backend connection.
CONNECTED = frozenset([ATT.ATTACHING, ATT.ATTACHED])
#: Attach modes; ``null`` (the string) means "not said", treated as rw.
MODE_NULL = "null"
MODE_RW = "rw"
MODE_RO = "ro"

#: Extra specs (scoped, so the scheduler does not read them as capability
#: requirements) that tune attachments of a type's volumes.
MAX_ATTACHMENTS_SPEC = "ashlar:max_attachments"
SINGLE_WRITER_SPEC = "ashlar:multiattach_single_writer"
#: Any extra spec in this scope marks an encrypting type
#: (``encryption:provider=luks``, mirroring Cinder's encryption fields).
ENCRYPTION_SCOPE = "encryption:"


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


def fenced_by_takeover(rows: Iterable, taker_id: str) -> list:
    """The rows a takeover by ``taker_id`` fences: every other row of the
    volume that may write and is not fenced yet."""
    return [row for row in rows if row.id != taker_id
            and counts_as_writer(row.attach_mode, row.fenced_at)]


# -- reservation ------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ReserveGuard:
    """What a reservation must find on the volume row, atomically.

    :param multiattach: the flag as read (a retype may not flip it between).
    :param limit: most live attachment rows of a multiattach volume.
    :param single_writer: at most one attachment whose mode is not ``ro``.
    :param writer: whether the new row counts as a writer.
    :param instance_uuid: Cinder's live-migration exception: a volume that is
        not multiattach may take a second row for the instance it is
        attached to already (never a third).
    :param first_only: admitted only as the volume's first attachment (a
        bootable multiattach volume, read without attachments, for a caller
        whom ``volume:multiattach_bootable_volume`` does not allow more);
        ``limit`` is then 1.
    """

    multiattach: bool
    limit: int
    single_writer: bool = False
    writer: bool = True
    instance_uuid: str | None = None
    first_only: bool = False


def attach_limits(specs: Mapping[str, str | None],
                  default_limit: int) -> tuple[int, bool]:
    """``(max attachments, single writer)`` for a type's extra specs."""
    limit = default_limit
    raw = specs.get(MAX_ATTACHMENTS_SPEC)
    if raw is not None:
        limit = _parse_limit(raw)
    single = extra_specs.is_true(specs.get(SINGLE_WRITER_SPEC))
    return limit, single


def _parse_limit(raw: str | None) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value < 1:
        raise exception.InvalidInput(
            reason="%s must be a whole number of at least 1, not %r."
            % (MAX_ATTACHMENTS_SPEC, raw))
    return value


def is_encrypted(specs: Mapping[str, str | None]) -> bool:
    """Whether a type's extra specs ask for encryption."""
    return any(key.startswith(ENCRYPTION_SCOPE) for key in specs)


def validate_type_specs(specs: Mapping[str, str | None],
                        multiattach: bool) -> None:
    """Refuse extra specs that cannot work together (type definition).

    :param multiattach: whether the specs make volumes multiattach.
    :raises InvalidInput: encryption with multiattach, or a bad limit.
    """
    if multiattach and is_encrypted(specs):
        raise exception.InvalidInput(
            reason="Multiattach cannot be used with encrypted volume "
                   "types (%s* extra specs)." % ENCRYPTION_SCOPE)
    if MAX_ATTACHMENTS_SPEC in specs:
        _parse_limit(specs[MAX_ATTACHMENTS_SPEC])


def reserve_refusal(volume_id: str, status: str, multiattach: bool,
                    count: int, writers: int, guard: ReserveGuard,
                    same_instance: bool) -> exception.AshlarException:
    """Explain why a reservation's conditional update matched nothing.

    Called with the volume as re-read after the refusal; the first failing
    condition, in the order a user can act on, is named.
    """
    if "error" in status:
        return exception.InvalidVolume(
            reason="Volume attachments can not be created if the volume is "
                   "in an error state. The Volume %s currently has a status "
                   "of: %s " % (volume_id, status))
    if status not in RESERVABLE:
        return exception.InvalidVolume(
            reason="Volume %s status must be available, reserved, attaching, "
                   "in-use or detaching to reserve, but the current status "
                   "is %s." % (volume_id, status))
    if multiattach != guard.multiattach:
        return exception.InvalidVolume(
            reason="Volume %s changed its multiattach setting meanwhile; "
                   "try again." % volume_id)
    if not multiattach:
        if count >= 1 and not (count == 1 and same_instance):
            return exception.InvalidVolume(
                reason="Volume %s is not multiattach and already has an "
                       "attachment; its status is %s." % (volume_id, status))
    elif guard.first_only and count >= 1:
        return exception.PolicyNotAuthorized(
            action="volume:multiattach_bootable_volume")
    elif count >= guard.limit:
        return exception.InvalidVolume(
            reason="Volume %s already has the maximum of %d attachments."
                   % (volume_id, guard.limit))
    if guard.single_writer and guard.writer and writers >= 1:
        return exception.InvalidVolume(
            reason="Volume %s allows only one read/write attachment (its "
                   "type sets %s); attach it with mode ro."
                   % (volume_id, SINGLE_WRITER_SPEC))
    return exception.InvalidVolume(
        reason="Volume %s could not be reserved; try again." % volume_id)


# -- rules ----------------------------------------------------------------

def deletion_allowed(instance_uuid: str | None, has_connection: bool,
                     privileged: bool) -> bool:
    """OSSA-2023-003: only an admin or a service may delete an attachment a
    compute host still holds connected for an instance."""
    return privileged or not (instance_uuid and has_connection)


def check_retype(volume_id: str, status: str, old_multiattach: bool,
                 new_multiattach: bool, new_encrypted: bool,
                 attachments: int, may_migrate: bool) -> None:
    """The multiattach rules of a retype.

    :param may_migrate: the retype may need to move the data.
    :raises InvalidInput: a rule refuses it.
    """
    if new_multiattach and new_encrypted:
        raise exception.InvalidInput(
            reason="Retype requested both encryption and multi-attach, "
                   "which is not supported.")
    if old_multiattach != new_multiattach and status != VOL.AVAILABLE:
        raise exception.InvalidInput(
            reason="Invalid volume_type passed, retypes affecting multiattach "
                   "are only allowed on available volumes, the specified "
                   "volume however currently has a status of: %s." % status)
    if may_migrate:
        check_migration(volume_id, attachments)


def check_migration(volume_id: str, attachments: int) -> None:
    """Refuse to copy a volume that more than one attachment may write.

    :raises InvalidVolume: more than one attachment exists.
    """
    if attachments > 1:
        raise exception.InvalidVolume(
            reason="Volume %s has %d attachments; migrating it (or a retype "
                   "that may migrate it) is refused while more than one "
                   "attachment exists, because a copy cannot follow writes "
                   "from several hosts. Detach all but one first."
                   % (volume_id, attachments))
