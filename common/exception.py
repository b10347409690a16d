"""Domain exceptions.

Each class carries a ``msg_fmt`` formatted from keyword arguments and a
``code`` hint that the REST layer maps to an HTTP status once, in
``services/api/errors.py``.  They cross RPC ``call`` with their class intact
because this module is listed in ``common.rpc.ALLOWED_EXMODS``.
"""


class AshlarException(Exception):
    """Base class: ``msg_fmt % kwargs`` becomes the message."""

    msg_fmt = "An unknown exception occurred."
    code = 500
    #: Cinder prefixes some messages with a phrase ("Invalid volume: ").
    prefix = ""
    #: A 5xx whose message a caller may read (else Cinder's generic text).
    safe = False

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        self.msg = message
        super().__init__(message)

    def user_message(self) -> str:
        """Return the text shown to a REST caller."""
        return self.prefix + self.msg


class Invalid(AshlarException):
    msg_fmt = "Unacceptable parameters."
    code = 400


class InvalidInput(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid input received: "


class ValidationError(Invalid):
    """A request body or query failed its schema."""

    msg_fmt = "%(detail)s"


class MalformedRequestBody(Invalid):
    msg_fmt = "Malformed request body"


class InvalidHost(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid host: "


class InvalidVolume(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid volume: "


class InvalidSnapshot(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid snapshot: "


class InvalidAvailabilityZone(Invalid):
    msg_fmt = "Availability zone '%(az)s' is invalid."


class InvalidTypeAvailabilityZones(Invalid):
    """None of the zones a type's ``RESKEY:availability_zones`` names has a
    volume service."""

    msg_fmt = ("Volume type is only supported in these availability zones: "
               "%(az)s")


class InvalidBackup(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid backup: "


class InvalidVolumeType(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid volume type: "


class VolumeTypeInUse(Invalid):
    msg_fmt = "Volume Type is currently in use."


class InvalidGroup(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid Group: "


class InvalidGroupType(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid group type: "


class InvalidGroupSnapshot(Invalid):
    msg_fmt = "%(reason)s"
    prefix = "Invalid GroupSnapshot: "


class GroupTypeInUse(Invalid):
    msg_fmt = ("Group Type %(group_type_id)s deletion is not allowed with "
               "groups present with the type.")


class UnsatisfiableVolumeType(Invalid):
    """No fresh pool can satisfy the type's capability extra specs."""

    msg_fmt = ("No backend can satisfy volume type %(type)s: "
               "%(unsatisfied)s.")


class UnsatisfiableVolumeSize(Invalid):
    """No fresh pool could hold the size even if it were empty."""

    msg_fmt = ("No backend can hold a volume of %(size)s GiB: it is larger "
               "than any pool, even an empty one.")


class UnsatisfiableSource(Invalid):
    """The pool that holds a clone's source cannot take the new volume."""

    msg_fmt = ("A volume made from %(source)s is made where that source "
               "is, and that backend cannot take it: %(unsatisfied)s.")


class NotSupported(Invalid):
    msg_fmt = "%(what)s is not supported by Ashlar yet."


class ManageExistingInvalidReference(Invalid):
    """A manage's ``ref`` names nothing the backend could adopt (Cinder's
    words)."""

    msg_fmt = ("Manage existing volume failed due to invalid backend "
               "reference %(existing_ref)s: %(reason)s")


class FencingNotSupported(Invalid):
    msg_fmt = ("Backend %(backend)s cannot fence a host (it reports no "
               "fencing capability); use a volume type that requires "
               "fencing=\"<is> True\" to place such volumes on one that "
               "can.")


class FencingFailed(AshlarException):
    msg_fmt = "The backend could not %(what)s: %(reason)s"


class NotAuthenticated(AshlarException):
    """No verified identity (keystone or http_basic mode)."""

    msg_fmt = "The request you have made requires authentication."
    code = 401


class NoAuthNotLoopback(AshlarException):
    msg_fmt = ("auth_strategy noauth makes every caller an administrator: "
               "it serves on loopback addresses only, not on %(host)s "
               "(set [api] noauth_allow_remote = true for a throwaway lab, "
               "or choose keystone or http_basic).")


class NotAuthorized(AshlarException):
    msg_fmt = "Not authorized."
    code = 403


class PolicyNotAuthorized(NotAuthorized):
    msg_fmt = "Policy doesn't allow %(action)s to be performed."


class TakeoverNeedsConsent(NotAuthorized):
    """A compute agent's takeover through an attachment it made itself."""

    msg_fmt = ("Attachment %(id)s was made by the compute agent of host "
               "%(host)s itself: an agent may take a volume over only "
               "through an attachment the volume's project made for its "
               "host (over REST; the agent holds it with 'ashlar-agent hold "
               "VOLUME --attachment ID'), or a member of the project takes "
               "over.")


class ProjectScopeRequired(NotAuthorized):
    """A token without a project asked for a project's resources."""

    msg_fmt = ("This request needs a project-scoped token; the token used "
               "names no project.")


class NotFound(AshlarException):
    msg_fmt = "Resource could not be found."
    code = 404


class VolumeNotFound(NotFound):
    msg_fmt = "Volume %(volume_id)s could not be found."


class SnapshotNotFound(NotFound):
    msg_fmt = "Snapshot %(snapshot_id)s could not be found."


class BackupNotFound(NotFound):
    msg_fmt = "Backup %(backup_id)s could not be found."


class VolumeMetadataNotFound(NotFound):
    msg_fmt = ("Volume %(volume_id)s has no metadata with key "
               "%(metadata_key)s.")


class SnapshotMetadataNotFound(NotFound):
    msg_fmt = ("Snapshot %(snapshot_id)s has no metadata with key "
               "%(metadata_key)s.")


class GroupTypeNotFound(NotFound):
    msg_fmt = "Group type %(group_type_id)s could not be found."


class GroupTypeSpecsNotFound(NotFound):
    msg_fmt = ("Group Type %(group_type_id)s has no specs with key "
               "%(group_specs_key)s.")


class GroupNotFound(NotFound):
    msg_fmt = "Group %(group_id)s could not be found."


class GroupSnapshotNotFound(NotFound):
    msg_fmt = "GroupSnapshot %(group_snapshot_id)s could not be found."


class QoSSpecsNotFound(NotFound):
    msg_fmt = "No such QoS spec %(specs_id)s."


class QoSSpecsKeyNotFound(NotFound):
    msg_fmt = "QoS spec %(specs_id)s has no spec with key %(specs_key)s."


class QoSSpecsInUse(Invalid):
    msg_fmt = "QoS Specs %(specs_id)s is still associated with entities."


class TransferNotFound(NotFound):
    msg_fmt = "Transfer %(transfer_id)s could not be found."


class InvalidAuthKey(Invalid):
    msg_fmt = "Invalid auth key: %(reason)s"


class MessageNotFound(NotFound):
    msg_fmt = "Message %(message_id)s could not be found."


class VolumeTypeNotFound(NotFound):
    msg_fmt = "Volume type %(volume_type_id)s could not be found."


class VolumeTypeNotFoundByName(VolumeTypeNotFound):
    msg_fmt = "Volume type with name %(volume_type_name)s could not be found."


class VolumeTypeExtraSpecsNotFound(NotFound):
    msg_fmt = ("Volume Type %(volume_type_id)s has no extra specs with "
               "key %(extra_specs_key)s.")


class AttachmentNotFound(NotFound):
    msg_fmt = ("Volume attachment could not be found with filter: "
               "attachment_id = %(attachment_id)s.")


class ServiceNotFound(NotFound):
    msg_fmt = "Service %(service_id)s could not be found."


class HostNotFound(NotFound):
    msg_fmt = "Can't find service: %(host)s"


class QuotaError(AshlarException):
    """Over quota: 413, the message prefixed with the class's name as
    Cinder prefixes its "safe" exceptions."""

    msg_fmt = "Quota exceeded."
    code = 413

    def user_message(self) -> str:
        return "%s: %s" % (type(self).__name__, self.msg)


class VolumeLimitExceeded(QuotaError):
    msg_fmt = ("Maximum number of volumes allowed (%(allowed)d) exceeded for "
               "quota '%(name)s'.")


class GroupLimitExceeded(QuotaError):
    msg_fmt = "Maximum number of groups allowed (%(allowed)d) exceeded"


class BackupLimitExceeded(QuotaError):
    msg_fmt = "Maximum number of backups allowed (%(allowed)d) exceeded"


class VolumeBackupSizeExceedsAvailableQuota(QuotaError):
    msg_fmt = ("Requested backup exceeds allowed Backup gigabytes quota. "
               "Requested %(requested)sG, quota is %(quota)sG and "
               "%(consumed)sG has been consumed.")


class SnapshotLimitExceeded(QuotaError):
    msg_fmt = "Maximum number of snapshots allowed (%(allowed)d) exceeded"


class VolumeSizeExceedsAvailableQuota(QuotaError):
    msg_fmt = ("Requested volume or snapshot exceeds allowed %(name)s quota. "
               "Requested %(requested)sG, quota is %(quota)sG and "
               "%(consumed)sG has been consumed.")


class VolumeSizeExceedsLimit(QuotaError):
    msg_fmt = ("Requested volume size %(size)dG is larger than maximum "
               "allowed limit %(limit)dG.")


class Conflict(AshlarException):
    msg_fmt = "Conflict."
    code = 409


class Fenced(Conflict):
    msg_fmt = ("Attachment %(id)s is fenced (its host's I/O to the volume "
               "was revoked at %(at)s); its host may only delete it and "
               "attach anew.")


class VolumeTypeExists(Conflict):
    msg_fmt = "Volume Type %(name)s already exists."


class GroupTypeExists(Conflict):
    msg_fmt = "Group Type %(id)s already exists."


class QoSSpecsExists(Conflict):
    msg_fmt = "QoS Specs %(specs_id)s already exists."


class VolumeTypeAccessExists(Conflict):
    msg_fmt = ("Volume type access for %(volume_type_id)s / %(project_id)s "
               "combination already exists.")


class VolumeTypeAccessNotFound(NotFound):
    msg_fmt = ("Volume type access not found for %(volume_type_id)s / "
               "%(project_id)s combination.")


class NoValidBackend(AshlarException):
    msg_fmt = "No valid backend was found. %(reason)s"


class DriverNotInitialized(AshlarException):
    msg_fmt = "Volume driver not ready."


class VolumeBackendAPIException(AshlarException):
    msg_fmt = "Bad or unexpected response from the storage backend: %(data)s"


class ServiceUnavailable(AshlarException):
    msg_fmt = "Service is unavailable at this time: %(reason)s"
    code = 503


class AuthenticationUnavailable(ServiceUnavailable):
    """Credentials cannot be checked now (the http_basic user file is gone
    or unreadable): nobody is refused for it, nobody is let in."""

    msg_fmt = "Authentication is unavailable; try again later."
    safe = True


class LockServiceUnavailable(ServiceUnavailable):
    """A member of a cluster cannot reach its lock service (tooz): it did
    nothing, and the request may be asked again."""

    msg_fmt = "The volume service cannot take its locks now; try again."
    safe = True


class ConnectUnanswered(ServiceUnavailable):
    """A connect the volume service did not answer: the caller learns the
    attachment's id and what becomes of it (no host names)."""

    msg_fmt = ("The volume service did not answer in time; attachment "
               "%(id)s %(fate)s.")
    safe = True
