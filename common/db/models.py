"""SQLAlchemy models: the only source of truth for Ashlar's state.

Tables: services, volume types (+ extra specs, project access), volumes
(+ metadata), attachments (+ attachment specs: the connector as key/value
rows, one row per key), quota limits of projects and classes, and one
lock row per project that the quota checks serialise on; snapshots of
volumes (+ metadata); user messages (why an asynchronous request
failed, for the project that made it); generic volume groups, their
group types and group snapshots.  Status columns
hold the strings of ``common.constants``; every change to them is a
compare-and-swap in ``common/db/api``.
"""

import datetime
from typing import TYPE_CHECKING
from typing import ClassVar

from oslo_db.sqlalchemy import models as oslo_models
from oslo_utils import timeutils
from sqlalchemy import Boolean
from sqlalchemy import DateTime
from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import MetaData
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import Text
from sqlalchemy import UniqueConstraint
from sqlalchemy import orm
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "uq": "uniq_%(table_name)s0%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


#: A DateTime that keeps microseconds on MySQL/MariaDB as elsewhere.
PRECISE_DATETIME = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql",
                                           "mariadb")


class _Base(oslo_models.TimestampMixin, oslo_models.ModelBase):
    """oslo.db's timestamp columns and dict-style access."""

    if TYPE_CHECKING:
        # NOTE(ashlar): oslo.db is untyped: its TimestampMixin's columns
        # as the type checker is to see them (models may redefine them).
        created_at: Mapped[datetime.datetime | None]
        updated_at: Mapped[datetime.datetime | None]


class BASE(_Base, orm.DeclarativeBase):
    """The declarative base of every model; constraints named by
    ``NAMING``."""

    metadata = MetaData(naming_convention=NAMING)

    if TYPE_CHECKING:
        #: Every model maps a table of its own (SQLAlchemy types it as
        #: any ``FromClause``).
        __table__: ClassVar[Table]


class Service(BASE):
    """A scheduler or volume process; ``heartbeat_at`` says it is alive."""

    __tablename__ = "services"
    __table_args__ = (UniqueConstraint("host", "binary"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False, unique=True)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    binary: Mapped[str] = mapped_column(String(255), nullable=False)
    topic: Mapped[str] = mapped_column(String(255), nullable=False)
    availability_zone: Mapped[str] = mapped_column(String(255), nullable=False)
    disabled: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(String(255))
    heartbeat_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    #: The release the service runs (set as it starts; NULL before 0.2).
    version: Mapped[str | None] = mapped_column(String(64))
    #: ``cluster@backend`` of the cluster this member belongs to; NULL: a
    #: service alone.
    cluster_name: Mapped[str | None] = mapped_column(String(255), index=True)


class Cluster(BASE):
    """A cluster of volume services (``[DEFAULT] cluster``): its members'
    rows name it; it is enabled or disabled as a whole, as Cinder's."""

    __tablename__ = "clusters"
    __table_args__ = (UniqueConstraint("name", "binary"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    #: ``cluster@backend``.
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    binary: Mapped[str] = mapped_column(String(255), nullable=False)
    disabled: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(String(255))


class VolumeType(BASE):
    __tablename__ = "volume_types"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), nullable=False, unique=True)
    description: Mapped[str | None] = mapped_column(String(255))
    is_public: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=True)
    #: The QoS specs associated with the type, if any.
    qos_specs_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("qos_specs.id"))
    extra_specs: Mapped[list["VolumeTypeExtraSpec"]] = orm.relationship(
        "VolumeTypeExtraSpec", lazy="selectin", cascade="all, delete-orphan")


class VolumeTypeExtraSpec(BASE):
    __tablename__ = "volume_type_extra_specs"
    __table_args__ = (UniqueConstraint("volume_type_id", "key"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    volume_type_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volume_types.id"), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))


class VolumeTypeProject(BASE):
    """Projects that may use a private volume type."""

    __tablename__ = "volume_type_projects"
    __table_args__ = (UniqueConstraint("volume_type_id", "project_id"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    volume_type_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volume_types.id"), nullable=False)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)


class Volume(BASE):
    __tablename__ = "volumes"
    __table_args__ = (Index("ix_volumes_project_created", "project_id",
                            "created_at"),
                      # NOTE: an all_tenants page reads its rows in order.
                      Index("ix_volumes_created", "created_at", "id"),
                      # NOTE: the reads of rows in flight (migration 0018).
                      Index("ix_volumes_status", "status"))

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    display_name: Mapped[str | None] = mapped_column(String(255))
    display_description: Mapped[str | None] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    status: Mapped[str] = mapped_column(String(255), nullable=False)
    previous_status: Mapped[str | None] = mapped_column(String(255))
    attach_status: Mapped[str] = mapped_column(String(255), nullable=False)
    migration_status: Mapped[str | None] = mapped_column(String(255))
    host: Mapped[str | None] = mapped_column(String(255))
    #: The cluster the volume's pool belongs to (``cluster@backend``, the
    #: part of ``host`` before ``#``), shown to admins from 3.61.
    cluster_name: Mapped[str | None] = mapped_column(String(255))
    availability_zone: Mapped[str | None] = mapped_column(String(255))
    volume_type_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volume_types.id"), nullable=False)
    multiattach: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    bootable: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    readonly: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    encrypted: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)
    provider_location: Mapped[str | None] = mapped_column(String(255))
    service_uuid: Mapped[str | None] = mapped_column(String(36))
    #: Why the volume is in an error status, for operators (users get a
    #: user message in Cinder's words instead).
    error_reason: Mapped[str | None] = mapped_column(Text)
    #: Live attachment rows, and those of them whose mode is not ``ro``.
    #: Reservations change them with one conditional UPDATE, which is what
    #: makes "at most N attachments" hold under races on every database.
    attachment_count: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0")
    writer_count: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0")
    #: The size an extend in flight grows to, and the type a retype in
    #: flight moves to: counted by the quota checks until the volume
    #: service settles them (NULL at rest).
    pending_size: Mapped[int | None] = mapped_column(Integer)
    pending_type_id: Mapped[str | None] = mapped_column(String(36))
    #: What the volume was made from, if anything (no foreign keys: a
    #: source may go before the volumes made from it).
    snapshot_id: Mapped[str | None] = mapped_column(String(36))
    source_volid: Mapped[str | None] = mapped_column(String(36))
    #: Live snapshot rows of the volume, changed by conditional UPDATEs
    #: only (``common/db/api/snapshots.py``), as ``attachment_count``: a
    #: delete that expects 0 can never pass a snapshot being created.
    snapshot_count: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0")
    #: The generic volume group the volume belongs to, if any.
    group_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("groups.id"), index=True)
    volume_type: Mapped["VolumeType"] = orm.relationship(
        "VolumeType", lazy="joined")
    volume_metadata: Mapped[list["VolumeMetadata"]] = orm.relationship(
        "VolumeMetadata", lazy="selectin", cascade="all, delete-orphan")
    attachments: Mapped[list["VolumeAttachment"]] = orm.relationship(
        "VolumeAttachment", lazy="selectin", viewonly=True)


class VolumeMetadata(BASE):
    __tablename__ = "volume_metadata"
    __table_args__ = (UniqueConstraint("volume_id", "key"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    volume_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volumes.id"), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))


class VolumeAttachment(BASE):
    __tablename__ = "volume_attachment"

    #: Microseconds on MySQL too: the latest snapshot of a volume (the one
    #: a revert may go to) is told by it.
    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volumes.id"), nullable=False, index=True)
    instance_uuid: Mapped[str | None] = mapped_column(String(36))
    attached_host: Mapped[str | None] = mapped_column(String(255))
    mountpoint: Mapped[str | None] = mapped_column(String(255))
    attach_status: Mapped[str] = mapped_column(String(255), nullable=False)
    attach_mode: Mapped[str] = mapped_column(
        String(36), nullable=False, default="null")
    connection_info: Mapped[str | None] = mapped_column(Text)
    attach_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    detach_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    #: The operation in flight (``common.states.Transition``), NULL at rest.
    transition: Mapped[str | None] = mapped_column(String(36), index=True)
    #: When the backend revoked this host's I/O (``fence``); NULL if never.
    fenced_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    #: JSON list of the backend clients the fence revoked (for ``unfence``).
    fenced_clients: Mapped[str | None] = mapped_column(Text)
    #: JSON list of the backend clients the host registered as using the
    #: volume through this attachment (``os-complete`` from its agent).
    clients: Mapped[str | None] = mapped_column(Text)
    #: Until when the compute agent that made this row through the RPC door
    #: may leave it uncompleted; NULL once completed, or if made over REST.
    lease_expires_at: Mapped[datetime.datetime | None] = mapped_column(
        DateTime, index=True)
    #: True: a compute agent made this row for its own host, which then
    #: may not take the volume over through it; NULL (every row of an
    #: earlier release) or False: made over REST, the project's consent.
    agent_made: Mapped[bool | None] = mapped_column(Boolean)
    specs: Mapped[list["AttachmentSpec"]] = orm.relationship(
        "AttachmentSpec", lazy="selectin", cascade="all, delete-orphan")


class AttachmentSpec(BASE):
    """One key of an attachment's connector."""

    __tablename__ = "attachment_specs"
    __table_args__ = (UniqueConstraint("attachment_id", "key"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    attachment_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volume_attachment.id", ondelete="CASCADE"),
        nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(Text)


class _Limit:
    """One resource's limit (``hard_limit``, -1 unlimited)."""

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    resource: Mapped[str] = mapped_column(String(300), nullable=False)
    hard_limit: Mapped[int] = mapped_column(Integer, nullable=False)


class Quota(_Limit, BASE):
    """A project's own limit for one resource (``os-quota-sets``)."""

    __tablename__ = "quotas"
    __table_args__ = (UniqueConstraint("project_id", "resource"),)

    project_id: Mapped[str] = mapped_column(String(255), nullable=False)


class QuotaClass(_Limit, BASE):
    """A quota class's limit for one resource; class ``default`` holds the
    defaults of every project (``os-quota-class-sets``)."""

    __tablename__ = "quota_classes"
    __table_args__ = (UniqueConstraint("class_name", "resource"),)

    class_name: Mapped[str] = mapped_column(String(255), nullable=False)


class ProjectLock(BASE):
    """One row per project: quota checks lock it (``FOR UPDATE``) before
    they count what the project has, so two creates of one project are
    counted one after the other."""

    __tablename__ = "project_locks"

    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)


class Snapshot(BASE):
    """A snapshot of a volume; the volume stays while it has any (its
    ``snapshot_count``)."""

    __tablename__ = "snapshots"
    __table_args__ = (Index("ix_snapshots_project_created", "project_id",
                            "created_at"),
                      Index("ix_snapshots_status", "status"))

    #: Microseconds on MySQL too: the latest snapshot of a volume (the one
    #: a revert may go to) is told by it.
    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volumes.id"), nullable=False, index=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(255), nullable=False)
    progress: Mapped[str | None] = mapped_column(String(255))
    #: The volume's size in GiB when it was snapshotted (counted by the
    #: ``gigabytes`` quotas).
    volume_size: Mapped[int] = mapped_column(Integer, nullable=False)
    display_name: Mapped[str | None] = mapped_column(String(255))
    display_description: Mapped[str | None] = mapped_column(String(255))
    provider_location: Mapped[str | None] = mapped_column(String(255))
    #: Why the snapshot is in an error status, for operators (users get a
    #: user message in Cinder's words instead).
    error_reason: Mapped[str | None] = mapped_column(Text)
    #: The group snapshot the snapshot was taken for, if any.
    group_snapshot_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("group_snapshots.id"), index=True)
    volume: Mapped["Volume"] = orm.relationship(
        "Volume", lazy="joined", viewonly=True)
    snapshot_metadata: Mapped[list["SnapshotMetadata"]] = orm.relationship(
        "SnapshotMetadata", lazy="selectin", cascade="all, delete-orphan",
        passive_deletes=True)


class SnapshotMetadata(BASE):
    __tablename__ = "snapshot_metadata"
    __table_args__ = (UniqueConstraint("snapshot_id", "key"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    snapshot_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("snapshots.id", ondelete="CASCADE"),
        nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))


class Message(BASE):
    """A user message (Cinder's ``/messages``): an event of Cinder's
    catalog (``common.messages``) about one resource, kept for its project
    until ``expires_at``."""

    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_project_created", "project_id",
                            "created_at"),)

    #: Microseconds on MySQL too: messages of one request are told apart
    #: by it in the default order.
    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    #: The request that started the failed work (``req-<uuid>``).
    request_id: Mapped[str] = mapped_column(String(255), nullable=False)
    resource_type: Mapped[str | None] = mapped_column(String(255))
    resource_uuid: Mapped[str | None] = mapped_column(String(36))
    #: ``VOLUME_<resource_type>_<action_id>_<detail_id>``.
    event_id: Mapped[str] = mapped_column(String(255), nullable=False)
    action_id: Mapped[str] = mapped_column(String(10), nullable=False)
    detail_id: Mapped[str] = mapped_column(String(10), nullable=False)
    message_level: Mapped[str] = mapped_column(String(255), nullable=False)
    #: When the message may be deleted (``guaranteed_until``): exactly
    #: ``created_at`` plus ``[DEFAULT] message_ttl``.
    expires_at: Mapped[datetime.datetime] = mapped_column(
        PRECISE_DATETIME, nullable=False, index=True)


class Transfer(BASE):
    """A volume offered to another project (Cinder's volume transfer):
    whoever gives its ``auth_key`` takes the volume; only the key's salted
    hash is kept.  The row goes once the transfer is accepted or
    cancelled (the volume is ``awaiting-transfer`` while it exists)."""

    __tablename__ = "transfers"
    __table_args__ = (Index("ix_transfers_project_created", "project_id",
                            "created_at"),
                      UniqueConstraint("volume_id"))

    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volumes.id"), nullable=False)
    #: The volume's project when it was offered (``source_project_id``).
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    display_name: Mapped[str | None] = mapped_column(String(255))
    salt: Mapped[str] = mapped_column(String(255), nullable=False)
    crypt_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    #: The volume's snapshots stay with the giver (3.55+).
    no_snapshots: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False)


class QoSSpecs(BASE):
    """Cinder's QoS specs: limits for the hypervisor (``front-end``), the
    backend (``back-end``) or ``both``, associated with volume types."""

    __tablename__ = "qos_specs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), nullable=False, unique=True)
    consumer: Mapped[str] = mapped_column(String(255), nullable=False)
    #: The keys and values, as a JSON object.
    specs: Mapped[str] = mapped_column(Text, nullable=False)


class Backup(BASE):
    """A backup of a volume, kept by a backup service's driver (Cinder's
    columns, no soft delete).  An incremental backup names its
    ``parent_id``; the parent counts it in ``num_dependent_backups`` and is
    deleted only at 0."""

    __tablename__ = "backups"
    __table_args__ = (Index("ix_backups_project_created", "project_id",
                            "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    #: No foreign key: a backup outlives its volume.
    volume_id: Mapped[str] = mapped_column(String(36), nullable=False,
                                           index=True)
    snapshot_id: Mapped[str | None] = mapped_column(String(36))
    #: The backup service that holds it (its ``host``).
    host: Mapped[str | None] = mapped_column(String(255))
    availability_zone: Mapped[str | None] = mapped_column(String(255))
    display_name: Mapped[str | None] = mapped_column(String(255))
    display_description: Mapped[str | None] = mapped_column(String(255))
    container: Mapped[str | None] = mapped_column(String(255))
    #: The driver that wrote it.
    service: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(255), nullable=False)
    fail_reason: Mapped[str | None] = mapped_column(Text)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    object_count: Mapped[int | None] = mapped_column(Integer)
    parent_id: Mapped[str | None] = mapped_column(String(36), index=True)
    num_dependent_backups: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0")
    #: The volume a restore in progress writes.
    restore_volume_id: Mapped[str | None] = mapped_column(String(36))
    #: Microseconds on MySQL too: compared with a snapshot's created_at.
    data_timestamp: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME)
    backup_metadata: Mapped[list["BackupMetadata"]] = orm.relationship(
        "BackupMetadata", lazy="selectin", cascade="all, delete-orphan",
        passive_deletes=True)


class BackupMetadata(BASE):
    """A backup's key/value metadata (3.43)."""

    __tablename__ = "backup_metadata"
    __table_args__ = (UniqueConstraint("backup_id", "key"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    backup_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("backups.id", ondelete="CASCADE"),
        nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))


class GroupType(BASE):
    """Cinder's group type: what a generic volume group is (its
    ``group_specs``, a JSON object)."""

    __tablename__ = "group_types"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), nullable=False, unique=True)
    description: Mapped[str | None] = mapped_column(String(255))
    is_public: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=True)
    group_specs: Mapped[str] = mapped_column(Text, nullable=False)


class Group(BASE):
    """A generic volume group: volumes of a project, of the group's volume
    types, snapshotted together (``GroupSnapshot``).  Nothing of it lives
    on a backend: its volumes and their snapshots do."""

    __tablename__ = "groups"
    __table_args__ = (Index("ix_groups_project_created", "project_id",
                            "created_at"),)

    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(255), nullable=False)
    availability_zone: Mapped[str | None] = mapped_column(String(255))
    group_type_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("group_types.id"), nullable=False)
    #: What the group was made from, if anything (no foreign keys: a
    #: source may go first).
    group_snapshot_id: Mapped[str | None] = mapped_column(String(36))
    source_group_id: Mapped[str | None] = mapped_column(String(36))
    volume_types: Mapped[list["GroupVolumeType"]] = orm.relationship(
        "GroupVolumeType", lazy="selectin", cascade="all, delete-orphan",
        passive_deletes=True)


class GroupVolumeType(BASE):
    """One volume type a group's volumes may have."""

    __tablename__ = "group_volume_types"
    __table_args__ = (UniqueConstraint("group_id", "volume_type_id"),)

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=True)
    group_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("groups.id", ondelete="CASCADE"),
        nullable=False)
    volume_type_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("volume_types.id"), nullable=False)


class GroupSnapshot(BASE):
    """A snapshot of every volume of a group, taken together: one
    ``Snapshot`` per volume carries its id."""

    __tablename__ = "group_snapshots"
    __table_args__ = (Index("ix_group_snapshots_project_created",
                            "project_id", "created_at"),)

    created_at: Mapped[datetime.datetime | None] = mapped_column(
        PRECISE_DATETIME, default=lambda: timeutils.utcnow())
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    group_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("groups.id"), nullable=False, index=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(255), nullable=False)
    group_type_id: Mapped[str] = mapped_column(String(36), nullable=False)
