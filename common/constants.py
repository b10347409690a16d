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
BACKUP_TOPIC = "ashlar-backup"

# Service binaries as shown by /os-services.  Cinder clients only print them,
# so Ashlar reports its own names.
SCHEDULER_BINARY = "ashlar-scheduler"
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
    #: Cinder's statuses of a failed restore and a failed manage: Ashlar
    #: sets neither, but a volume in one may be deleted, as in Cinder.
    ERROR_RESTORING = "error_restoring"
    ERROR_MANAGING = "error_managing"
    RETYPING = "retyping"
    REVERTING = "reverting"
    MAINTENANCE = "maintenance"
    #: Offered to another project (a volume transfer).
    AWAITING_TRANSFER = "awaiting-transfer"
    #: Read by a backup (Cinder's), and written by a restore.
    BACKING_UP = "backing-up"
    RESTORING_BACKUP = "restoring-backup"


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
