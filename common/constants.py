"""Names that every process agrees on: topics, binaries, statuses."""

from typing import overload

# RPC topics (docs/architecture.md, "The bus").
API_TOPIC = "ashlar-api"
#: The exchange of the api's RPC door alone: compute hosts' broker users
#: may publish (and declare) there and on no exchange of the internal bus
#: (deploy/rabbitmq/README.md).
DOOR_EXCHANGE = "ashlar-door"
SCHEDULER_TOPIC = "ashlar-scheduler"
VOLUME_TOPIC = "ashlar-volume"
CAPABILITIES_TOPIC = "ashlar-capabilities"
#: What schedulers relay of the reports to api workers (fanout).
CAPABILITY_VIEW_TOPIC = "ashlar-capability-view"
BACKUP_TOPIC = "ashlar-backup"

# Service binaries as shown by /os-services.  Cinder clients only print them,
# so Ashlar reports its own names.
SCHEDULER_BINARY = "ashlar-scheduler"
#: The api's, for ``[upgrade_levels]`` only (it has no services row).
API_BINARY = "ashlar-api"
VOLUME_BINARY = "ashlar-volume"
BACKUP_BINARY = "ashlar-backup"
#: Each binary as Cinder's REST API names it (os-services, os-hosts):
#: the names Cinder's clients, runbooks and Tempest filter on.  The REST
#: API answers these and takes either.
CINDER_BINARIES = {SCHEDULER_BINARY: "cinder-scheduler",
                   VOLUME_BINARY: "cinder-volume",
                   BACKUP_BINARY: "cinder-backup"}


def cinder_binary(binary: str) -> str:
    """Cinder's name of one of Ashlar's binaries."""
    return CINDER_BINARIES.get(binary, binary)


@overload
def ashlar_binary(name: str) -> str: ...
@overload
def ashlar_binary(name: None) -> None: ...


def ashlar_binary(name: str | None) -> str | None:
    """Ashlar's binary of a name a REST caller gave (Cinder's or Ashlar's)."""
    if name is None:
        return None
    return {v: k for k, v in CINDER_BINARIES.items()}.get(name, name)



class VolumeStatus:
    """Values of ``volumes.status``."""

    CREATING = "creating"
    AVAILABLE = "available"
    RESERVED = "reserved"
    ATTACHING = "attaching"
    IN_USE = "in-use"
    DETACHING = "detaching"
    DELETING = "deleting"
    ERROR = "error"
    ERROR_DELETING = "error_deleting"
    EXTENDING = "extending"
    ERROR_EXTENDING = "error_extending"
    #: Cinder's status of a failed restore: Ashlar never sets it, but a
    #: volume in it may be deleted, as in Cinder.
    ERROR_RESTORING = "error_restoring"
    #: Cinder's internal statuses of a manage (shown as ``creating``), of
    #: a failed one (shown as ``error``) and of an unmanage (shown as
    #: ``deleting``): the sweep of interrupted creates and deletes never
    #: takes them for a create or a delete.
    MANAGING = "managing"
    ERROR_MANAGING = "error_managing"
    UNMANAGING = "unmanaging"
    RETYPING = "retyping"
    REVERTING = "reverting"
    MAINTENANCE = "maintenance"
    #: Offered to another project (a volume transfer).
    AWAITING_TRANSFER = "awaiting-transfer"
    #: Read by a backup (Cinder's), and written by a restore.
    BACKING_UP = "backing-up"
    RESTORING_BACKUP = "restoring-backup"


#: Internal statuses and the status users see instead (Cinder's
#: ``_get_volume_status``; Cinder shows ``unmanaging`` as is): volumes and
#: snapshots alike.
SHOWN_STATUS = {VolumeStatus.MANAGING: VolumeStatus.CREATING,
                VolumeStatus.ERROR_MANAGING: VolumeStatus.ERROR,
                VolumeStatus.UNMANAGING: VolumeStatus.DELETING}


def shown_status(status: str) -> str:
    """The status a volume or snapshot in ``status`` is shown in."""
    return SHOWN_STATUS.get(status, status)


class MigrationStatus:
    """Values of ``volumes.migration_status`` that Ashlar sets (Cinder's):
    a retype that moves the volume to another pool."""

    #: An admin's migrate, until the volume's node takes it up.
    STARTING = "starting"
    MIGRATING = "migrating"
    SUCCESS = "success"
    ERROR = "error"
    #: Accepted by ``os-reset_status`` (Cinder's list), never set here.
    COMPLETING = "completing"
    NONE = "none"


class SnapshotStatus:
    """Values of ``snapshots.status`` (Cinder's)."""

    CREATING = "creating"
    AVAILABLE = "available"
    DELETING = "deleting"
    ERROR = "error"
    ERROR_DELETING = "error_deleting"
    #: While a volume reverts to it.
    RESTORING = "restoring"
    #: A manage in flight (shown as ``creating``) and an unmanage (shown
    #: as ``deleting``), which the sweep never takes for a create or a
    #: delete.
    MANAGING = "managing"
    UNMANAGING = "unmanaging"
    #: Read by a backup (Cinder's).
    BACKING_UP = "backing-up"


class BackupStatus:
    """Values of ``backups.status`` (Cinder's)."""

    CREATING = "creating"
    AVAILABLE = "available"
    DELETING = "deleting"
    RESTORING = "restoring"
    ERROR = "error"
    ERROR_DELETING = "error_deleting"


class GroupStatus:
    """Values of ``groups.status`` (Cinder's generic volume groups)."""

    CREATING = "creating"
    AVAILABLE = "available"
    UPDATING = "updating"
    IN_USE = "in-use"
    DELETING = "deleting"
    DELETED = "deleted"
    ERROR = "error"
    ERROR_DELETING = "error_deleting"


class GroupSnapshotStatus:
    """Values of ``group_snapshots.status`` (Cinder's)."""

    CREATING = "creating"
    AVAILABLE = "available"
    UPDATING = "updating"
    DELETING = "deleting"
    DELETED = "deleted"
    ERROR = "error"
    ERROR_DELETING = "error_deleting"


class AttachStatus:
    """Values of ``volumes.attach_status`` and ``volume_attachment.attach_status``."""

    DETACHED = "detached"
    RESERVED = "reserved"
    ATTACHING = "attaching"
    ATTACHED = "attached"
    DETACHING = "detaching"
    ERROR_ATTACHING = "error_attaching"
    ERROR_DETACHING = "error_detaching"
