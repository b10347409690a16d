"""The shapes of the rows the database API returns, for type checkers.

The hot reads return rows read with Core: a ``Record``
(``common.db.api.execution``, a SimpleNamespace), SQLAlchemy's ``Row``, or
the named tuple of a prebuilt statement run on the driver's cursor
(``common.db.api.direct``).  None of them says its columns to a type
checker, so each shape has a Protocol here, and the functions returning
one say so: a caller reading ``volume.status`` or ``row.host`` is
checked against the columns the row really has.  The ORM models
(``common.db.models``) fit the shapes of their table, so a function
taking a ``VolumeRow`` takes a ``models.Volume`` too.

Members are read-only properties: a row read with Core is read-only, as
a detached ORM row is.  Nothing here runs: the rows stay what they are.

- ``VolumeRow``: a volume with its type's name, its metadata and its
  attachments (``volumes.volume_get``, ``volume_create``);
- ``VolumeBrief``: the volume columns attachment work reads
  (``attachments.volume_brief``, ``attachment_with_volume``,
  ``volume_and_specs``, ``attachment_reserve``, ``attachment_change``);
- ``AttachmentRow``: an attachment (``attachments.attachment_get``, a
  volume's ``attachments``, ``Destroyed``'s ``remaining``) and
  ``AttachmentWithConnector`` (``attachment_with_volume``,
  ``attachment_change``); ``AttachmentStatus`` (``disconnect_state``);
- ``Destroyed``: what removing an attachment leaves
  (``attachments.attachment_destroy``);
- ``VolumeState``: the volume's statuses as its lock tells them
  (``attachments.volume_status.lock_volume``);
- ``FencedRow`` (``fencing.fenced_row_of_host``), ``ServiceLiveness``
  (``services.service_liveness``), ``Heartbeat`` (``services.is_up``),
  ``ResolvedType`` (``types.type_resolve``).
"""

import datetime
from collections.abc import Sequence
from typing import Protocol
from typing import TypedDict


class MetadataItem(Protocol):
    """One key of a volume's metadata."""

    @property
    def key(self) -> str: ...

    @property
    def value(self) -> str | None: ...


class TypeName(Protocol):
    """A volume's type as ``volume_get`` reads it (its extra specs come
    with ``types.type_resolve``)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


class ResolvedType(TypeName, Protocol):
    """A volume type as ``types.type_resolve`` finds it."""

    @property
    def description(self) -> str | None: ...

    @property
    def is_public(self) -> bool: ...


class AttachmentStatus(Protocol):
    """An attachment's status: ``attach_status`` plus the operation in
    flight (``common.states.Transition``, None at rest)."""

    @property
    def id(self) -> str: ...

    @property
    def attach_status(self) -> str: ...

    @property
    def transition(self) -> str | None: ...


class AttachmentRow(AttachmentStatus, Protocol):
    """Every column of a ``volume_attachment`` row."""

    @property
    def created_at(self) -> datetime.datetime | None: ...

    @property
    def updated_at(self) -> datetime.datetime | None: ...

    @property
    def volume_id(self) -> str: ...

    @property
    def instance_uuid(self) -> str | None: ...

    @property
    def attached_host(self) -> str | None: ...

    @property
    def mountpoint(self) -> str | None: ...

    @property
    def attach_mode(self) -> str: ...

    @property
    def connection_info(self) -> str | None: ...

    @property
    def attach_time(self) -> datetime.datetime | None: ...

    @property
    def detach_time(self) -> datetime.datetime | None: ...

    @property
    def fenced_at(self) -> datetime.datetime | None: ...

    @property
    def fenced_clients(self) -> str | None: ...

    @property
    def clients(self) -> str | None: ...

    @property
    def lease_expires_at(self) -> datetime.datetime | None: ...

    @property
    def agent_made(self) -> bool | None: ...


class AttachmentWithConnector(AttachmentRow, Protocol):
    """An attachment row and whether it has connector rows."""

    @property
    def has_connector(self) -> bool: ...


class VolumeState(Protocol):
    """A volume's statuses and live attachment count (``STATE`` of
    ``common.db.api.attachments.statements``)."""

    @property
    def status(self) -> str: ...

    @property
    def attach_status(self) -> str: ...

    @property
    def attachment_count(self) -> int: ...


class _VolumeColumns(VolumeState, Protocol):
    """The volume columns both ``VolumeBrief`` and ``VolumeRow`` have."""

    @property
    def id(self) -> str: ...

    @property
    def project_id(self) -> str: ...

    @property
    def host(self) -> str | None: ...

    @property
    def size(self) -> int: ...

    @property
    def display_name(self) -> str | None: ...

    @property
    def provider_location(self) -> str | None: ...

    @property
    def multiattach(self) -> bool: ...

    @property
    def bootable(self) -> bool: ...

    @property
    def readonly(self) -> bool: ...

    @property
    def encrypted(self) -> bool: ...

    @property
    def volume_type_id(self) -> str: ...

    @property
    def migration_status(self) -> str | None: ...

    @property
    def writer_count(self) -> int: ...


class VolumeBrief(_VolumeColumns, Protocol):
    """The volume columns attachment work reads (``BRIEF`` of
    ``common.db.api.attachments.statements``)."""

    @property
    def front_end_qos(self) -> str | None:
        """The QoS specs (JSON) of its type that a compute host applies,
        None when there are none."""


class VolumeRow(_VolumeColumns, Protocol):
    """Every column of a volume, its type's id and name, its metadata and
    its attachments."""

    @property
    def created_at(self) -> datetime.datetime | None: ...

    @property
    def updated_at(self) -> datetime.datetime | None: ...

    @property
    def user_id(self) -> str | None: ...

    @property
    def display_description(self) -> str | None: ...

    @property
    def previous_status(self) -> str | None: ...

    @property
    def availability_zone(self) -> str | None: ...

    @property
    def service_uuid(self) -> str | None: ...

    @property
    def cluster_name(self) -> str | None: ...

    @property
    def error_reason(self) -> str | None: ...

    @property
    def pending_size(self) -> int | None: ...

    @property
    def pending_type_id(self) -> str | None: ...

    @property
    def snapshot_id(self) -> str | None: ...

    @property
    def source_volid(self) -> str | None: ...

    @property
    def snapshot_count(self) -> int: ...

    @property
    def group_id(self) -> str | None: ...

    @property
    def volume_type(self) -> TypeName | None: ...

    @property
    def volume_metadata(self) -> Sequence[MetadataItem]: ...

    @property
    def attachments(self) -> Sequence[AttachmentRow]: ...


class Destroyed(TypedDict):
    """What removing an attachment leaves, as it stands in the
    transaction that removed it."""

    volume_id: str
    #: The volume's live rows left.
    remaining: list[AttachmentRow]
    #: The ids of those that use the removed row's host connection.
    shared: list[str]


class FencedRow(Protocol):
    """A fenced attachment: its id and when its host's I/O was revoked."""

    @property
    def id(self) -> str: ...

    @property
    def fenced_at(self) -> datetime.datetime: ...


class Heartbeat(Protocol):
    """A service row's last heartbeat (None: stopped)."""

    @property
    def heartbeat_at(self) -> datetime.datetime | None: ...


class ServiceLiveness(Heartbeat, Protocol):
    """What a capability check reads of a service."""

    @property
    def host(self) -> str: ...

    @property
    def disabled(self) -> bool: ...
