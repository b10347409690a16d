"""The rules that keep a shared volume safe: how many attachments a volume
takes and who may write, which type specs go together, why a reservation
was refused, and what a retype or a move may do to an attached volume.

``common.states`` says which status follows which; this module says what
the multiattach settings of a volume's type allow.  The database layer
applies ``ReserveGuard`` atomically with the reservation
(``common/db/api/attachments/reserve.py``); the API and the volume service
ask the rest.
"""

import dataclasses
from collections.abc import Mapping

from common import constants
from common import exception
from common import extra_specs
from common import states

VOL = constants.VolumeStatus

#: Extra specs (scoped, so the scheduler does not read them as capability
#: requirements) that tune attachments of a type's volumes.
MAX_ATTACHMENTS_SPEC = "ashlar:max_attachments"
SINGLE_WRITER_SPEC = "ashlar:multiattach_single_writer"
#: Any extra spec in this scope marks an encrypting type
#: (``encryption:provider=luks``, mirroring Cinder's encryption fields).
ENCRYPTION_SCOPE = "encryption:"


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
    if status not in states.RESERVABLE:
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
