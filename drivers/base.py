"""The volume driver interface: what the volume service may ask of a backend.

The volume service (``services/volume/``) is the only caller.  For each entry
of ``enabled_backends`` it loads a driver class by short name with
:func:`load_driver`, registers the driver's options in the backend's group
with ``cls.register_opts(conf, group)``, and builds
``cls(conf[group], backend_name, host)``.  It then calls :meth:`do_setup` and
:meth:`check_for_setup_error` once; only when both return does it send any
other call, and it never sends two calls for the same volume at once.

Drivers never see database rows: each call carries a :class:`DriverVolume`.
Model updates a driver returns are saved on the volume row by the service.
"""

import abc
import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import units
from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exception

from common import exception
from drivers import sparse_copy

LOG = logging.getLogger(__name__)

#: ``write(offset, data)`` of a copy being made
#: (:meth:`VolumeDriver._write_copy`).
Writer = Callable[[int, bytes], object]
#: Opens a copy source's ``connection`` read only: a context manager of a
#: handle with ``read(offset, length)`` (the hosts' data path).
CopyReader = Callable[[dict[str, Any]], contextlib.AbstractContextManager[Any]]

#: Entry-point group that maps a driver's short name to its class.
DRIVER_NAMESPACE = "ashlar.volume.drivers"

#: Group name under which ``list_opts`` shows backend options in samples; the
#: real groups are the names listed in ``enabled_backends``.
SAMPLE_GROUP = "backend"

VENDOR_NAME = "Ashlar"

BACKEND_OPTS = [
    cfg.StrOpt(
        "volume_backend_name",
        help="Backend name reported to the scheduler and matched by the "
        "volume_backend_name extra spec. Defaults to the name of this "
        "backend's section.",
    ),
    cfg.IntOpt(
        "reserved_percentage",
        default=0,
        min=0,
        max=100,
        help="Percentage of the backend's capacity that the scheduler "
        "keeps free.",
    ),
    cfg.FloatOpt(
        "max_over_subscription_ratio",
        default=20.0,
        min=1.0,
        help="Ratio of provisioned to real capacity that the scheduler "
        "allows on thin-provisioned pools.",
    ),
]


@dataclasses.dataclass(frozen=True)
class DriverVolume:
    """What a driver knows of a volume.

    :ivar id: The volume's id (a UUID in practice).
    :ivar size: Size in GiB.
    :ivar name: The user's display name, for logs only.
    :ivar provider_location: What the driver returned under that key from
        :meth:`VolumeDriver.create_volume`, or ``None``.
    :ivar multiattach: Whether the volume's type lets several hosts attach
        it at once.
    :ivar attached: Whether a host is (or may be) attached to it: its
        ``attach_status`` is not ``detached``.
    """

    id: str
    size: int
    name: str | None = None
    provider_location: str | None = None
    multiattach: bool = False
    attached: bool = False


@dataclasses.dataclass(frozen=True)
class DriverSnapshot:
    """What a driver knows of a snapshot.

    :ivar id: The snapshot's id (a UUID in practice).
    :ivar volume: The snapshotted volume.
    :ivar size: Size in GiB: the volume's size when it was snapshotted.
    :ivar provider_location: What the driver returned under that key from
        :meth:`VolumeDriver.create_snapshot`, or ``None``.
    """

    id: str
    volume: DriverVolume        # the snapshotted volume
    size: int                   # GiB: the volume's size when snapshotted
    provider_location: str | None = None


@dataclasses.dataclass(frozen=True)
class FenceTarget:
    """One host's use of a volume, whose I/O :meth:`VolumeDriver.fence`
    revokes.

    :ivar host: The connector's host name.
    :ivar ip: The connector's address when it tells this host's clients
        apart (no other host attached to the volume has it), else None.
    :ivar clients: Backend client ids the host registered as using the
        volume through the attachment (its agent's ``os-complete``).
    :ivar connected: The attachment was given a connector (the host may
        hold a connection).
    """

    host: str
    ip: str | None = None
    clients: tuple[str, ...] = ()
    connected: bool = True


def validate_size(size: int) -> None:
    """Check that ``size`` is a usable volume size.

    :raises InvalidInput: ``size`` is not a positive integer (GiB).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise exception.InvalidInput(
            reason=f"Volume size {size!r} must be a positive number of GiB.")


def validate_new_size(volume: DriverVolume, new_size: int) -> None:
    """Check that ``new_size`` grows ``volume``.

    :raises InvalidInput: ``new_size`` is not an integer larger than
        ``volume.size``.
    """
    validate_size(new_size)
    if new_size <= volume.size:
        raise exception.InvalidInput(
            reason=f"New size {new_size} GiB must be larger than the "
            f"current size {volume.size} GiB of volume {volume.id}.")


def validate_clone_size(volume: DriverVolume, source_size: int) -> None:
    """Check that ``volume`` can hold a copy of ``source_size`` GiB.

    :raises InvalidInput: ``volume.size`` is not a size, or is smaller than
        ``source_size`` (a snapshot's or source volume's size).
    """
    validate_size(volume.size)
    if volume.size < source_size:
        raise exception.InvalidInput(
            reason=f"Volume size {volume.size} GiB is smaller than the "
            f"size {source_size} GiB of its source.")


class VolumeDriver(abc.ABC):
    """A volume backend, one instance per configured backend.

    :param conf: The backend's option group (``conf[backend_name]``) after
        :meth:`register_opts` registered this driver's options in it.
    :param backend_name: Name of the backend's config section.
    :param host: The volume service's ``host@backend`` name.
    """

    #: Version reported as ``driver_version``.
    VERSION: str
    #: Reported as ``storage_protocol``.
    STORAGE_PROTOCOL: str
    #: This driver's own options, registered besides :data:`BACKEND_OPTS`.
    driver_opts: tuple[cfg.Opt, ...] = ()

    #: Whether :meth:`fence` works (the pools' ``fencing`` capability).
    FENCING = False
    #: How this node opens another backend's volume to copy it (set by
    #: the volume service: the hosts' data path); None: it cannot.
    copy_reader: CopyReader | None = None

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str) -> None:
        self.conf = conf
        self.backend_name = backend_name
        self.host = host

    @classmethod
    def register_opts(cls, conf: cfg.ConfigOpts, group: str) -> None:
        """Register :data:`BACKEND_OPTS` and this driver's options.

        :param conf: The service's configuration.
        :param group: The backend's section name.
        """
        conf.register_opts([*BACKEND_OPTS, *cls.driver_opts], group=group)

    @classmethod
    def list_opts(cls) -> list[tuple[str, list[cfg.Opt]]]:
        """Return the options for oslo-config-generator."""
        return [(SAMPLE_GROUP, [*BACKEND_OPTS, *cls.driver_opts])]

    @property
    def volume_backend_name(self) -> str:
        """The backend name reported to the scheduler."""
        return self.conf.volume_backend_name or self.backend_name

    @abc.abstractmethod
    def do_setup(self) -> None:
        """Prepare the backend; called once, before any other method.

        :raises VolumeBackendAPIException: The backend cannot be prepared.
        """

    @abc.abstractmethod
    def check_for_setup_error(self) -> None:
        """Check that the backend can serve; called once after do_setup.

        :raises DriverNotInitialized: The backend is not usable; the service
            keeps the driver out of service.
        """

    def close(self) -> None:
        """Release what :meth:`do_setup` opened (connections, their
        threads); the driver is not used afterwards.

        For callers that build drivers in-process and outlive them (tools,
        tests); a volume node's drivers last as long as its process.
        A driver that opens nothing to release has nothing to do.
        """
        return None

    @abc.abstractmethod
    def get_volume_stats(self, refresh: bool = False) -> dict[str, Any]:
        """Return the capability report for the scheduler.

        Called on every capability-report timer tick and after changes.
        An unreachable backend is reported with ``backend_state`` ``'down'``
        rather than by raising.

        :param refresh: Measure the backend again; otherwise the last report
            may be returned (a first call always measures).
        :returns: Backend-level keys ``volume_backend_name``, ``vendor_name``,
            ``driver_version`` and ``storage_protocol``, and ``pools``: a list
            of dicts with ``pool_name``, ``total_capacity_gb``,
            ``free_capacity_gb``, ``allocated_capacity_gb``,
            ``provisioned_capacity_gb`` (floats, GiB),
            ``reserved_percentage`` (int), ``max_over_subscription_ratio``
            (float), ``thin_provisioning_support``,
            ``thick_provisioning_support``, ``multiattach`` (bools),
            ``backend_state`` (``'up'`` or ``'down'``) and ``total_volumes``
            (int), plus any capability of the driver's own (such as
            ``online_extend_support``).  Backend-level keys apply to every
            pool that does not set them itself.
        """

    @abc.abstractmethod
    def create_volume(self, volume: DriverVolume) -> dict[str, Any]:
        """Create an empty volume of ``volume.size`` GiB.

        Called once the scheduler placed the volume on this backend.  A
        volume with this id that exists already is adopted, never
        overwritten: the call returns its model update (the service
        resumes a create whose node died after the backend made the
        volume and before its row said so).

        :returns: A model update for the volume row, such as
            ``{'provider_location': ...}``; may be empty.
        :raises InvalidInput: The size is not a positive integer, or the id
            is not one this backend can store.
        :raises VolumeBackendAPIException: The backend failed; nothing is
            left behind.
        """

    @abc.abstractmethod
    def delete_volume(self, volume: DriverVolume) -> None:
        """Delete a volume and its data.

        Idempotent: a volume the backend does not have is not an error.
        Volumes cloned from it keep their data.  The service deletes a
        volume's snapshots first.

        :raises VolumeBackendAPIException: The backend failed, or the
            volume still has snapshots.
        """

    @abc.abstractmethod
    def extend_volume(self, volume: DriverVolume, new_size: int) -> None:
        """Grow a volume to ``new_size`` GiB, keeping its data.

        ``volume.size`` is the size before the call.  Repeating a call that
        completed is harmless.

        :raises InvalidInput: ``new_size`` is not larger than ``volume.size``.
        :raises VolumeNotFound: The backend does not have the volume.
        :raises VolumeBackendAPIException: The backend cannot grow it.
        """

    @abc.abstractmethod
    def create_snapshot(self, snapshot: DriverSnapshot) -> dict[str, Any]:
        """Make a point-in-time copy of ``snapshot.volume``.

        Also called while the volume is attached (the API's ``force``).

        :returns: A model update for the snapshot row; may be empty.
        :raises VolumeNotFound: The backend does not have the volume.
        :raises VolumeBackendAPIException: A snapshot with this id exists,
            or the backend failed; nothing is left behind.
        """

    @abc.abstractmethod
    def delete_snapshot(self, snapshot: DriverSnapshot) -> None:
        """Delete a snapshot, also one that volumes were created from
        (they keep their data).

        Idempotent: a snapshot (or volume) the backend does not have is
        not an error.

        :raises VolumeBackendAPIException: The backend failed.
        """

    @abc.abstractmethod
    def create_volume_from_snapshot(self, volume: DriverVolume,
                                    snapshot: DriverSnapshot
                                    ) -> dict[str, Any]:
        """Create a volume holding the snapshot's data, grown to
        ``volume.size`` GiB, shared or not as ``volume.multiattach`` says
        (as :meth:`create_volume`, which also says why a volume with this
        id that exists is adopted).

        :returns: A model update for the volume row; may be empty.
        :raises InvalidInput: ``volume.size`` is not a size, or is smaller
            than ``snapshot.size``.
        :raises SnapshotNotFound: The backend does not have the snapshot.
        :raises VolumeBackendAPIException: The backend failed; nothing is
            left behind.
        """

    @abc.abstractmethod
    def create_cloned_volume(self, volume: DriverVolume,
                             source: DriverVolume) -> dict[str, Any]:
        """Create a volume holding the data of the live volume ``source``,
        grown to ``volume.size`` GiB, as :meth:`create_volume_from_snapshot`
        does.

        :returns: A model update for the volume row; may be empty.
        :raises InvalidInput: ``volume.size`` is smaller than
            ``source.size``.
        :raises VolumeNotFound: The backend does not have ``source``.
        :raises VolumeBackendAPIException: The backend failed; nothing is
            left behind.
        """

    @abc.abstractmethod
    def revert_to_snapshot(self, volume: DriverVolume,
                           snapshot: DriverSnapshot) -> None:
        """Make the volume's content the snapshot's; the volume keeps
        ``volume.size`` (grown back when the snapshot is smaller).

        Called on an available (detached) volume.

        :raises VolumeNotFound: The backend does not have the volume.
        :raises SnapshotNotFound: The backend does not have the snapshot.
        :raises VolumeBackendAPIException: The backend failed.
        """

    def copy_source(self, volume: DriverVolume) -> dict[str, Any]:
        """Where another backend's driver may read the volume's data to
        make its copy when the volume moves (:meth:`create_volume_from_copy`),
        as plain JSON values with a ``protocol`` key.

        The default: ``connection``, what :meth:`copy_connection` gives,
        which any backend reads through the hosts' data path.

        :raises VolumeNotFound: The backend does not have the volume.
        :raises VolumeBackendAPIException: The volume cannot be copied from.
        """
        return {"protocol": self.STORAGE_PROTOCOL,
                "connection": self.copy_connection(volume)}

    def copy_connection(self, volume: DriverVolume) -> dict[str, Any]:
        """The volume as another volume node opens it to copy it: a
        connection_info flattened as the hosts' data path takes it
        (``driver_volume_type`` beside ``data``'s keys), read only.

        The default: :meth:`initialize_connection` for no host (drivers
        whose connections bind hosts override it).
        """
        info = self.initialize_connection(volume, {"host": None})
        return dict(info.get("data") or {}, access_mode="ro",
                    driver_volume_type=info.get("driver_volume_type"))

    def create_volume_from_copy(self, volume: DriverVolume,
                                source: dict[str, Any]) -> dict[str, Any]:
        """Create a volume holding the data another backend's driver
        described with :meth:`copy_source` (a volume moving here), as
        :meth:`create_cloned_volume` does.

        A volume with this id that exists already is refused, not adopted:
        it may be a stale copy the volume left here when it moved away
        earlier.

        The default: the generic copy (:func:`drivers.sparse_copy.stream`):
        the source's ``connection`` opened with :attr:`copy_reader` (the
        hosts' data path), its blocks that are not all zeros written
        through :meth:`_write_copy`.  Drivers with a quicker path between
        backends of their own kind take it first.

        :returns: A model update for the volume row; may be empty.
        :raises VolumeBackendAPIException: This backend cannot read
            ``source``, a volume with this id exists, or the backend
            failed; nothing is left behind.
        """
        connection = source.get("connection")
        if not isinstance(connection, dict) or self.copy_reader is None:
            raise exception.VolumeBackendAPIException(
                data="backend %s cannot copy a volume from %s"
                % (self.backend_name, source.get("protocol")))
        if volume.id in self.volume_locations():
            raise exception.VolumeBackendAPIException(
                data="volume %s already exists on backend %s"
                % (volume.id, self.backend_name))
        reader = self.copy_reader
        length = volume.size * units.Gi

        def fill(write: Writer) -> None:
            with reader(connection) as handle:
                sparse_copy.stream(handle.read, write, length)
        update = self._write_copy(volume, fill)
        LOG.info("Copied volume %(id)s here from a %(proto)s backend "
                 "through its %(kind)s connection",
                 {"id": volume.id, "proto": source.get("protocol"),
                  "kind": connection.get("driver_volume_type")})
        return update

    def _write_copy(self, volume: DriverVolume,
                    fill: Callable[[Writer], None]) -> dict[str, Any]:
        """Create the volume raw, sparse, of its size, and let ``fill``
        write its data with a ``write(offset, data)``; a failure leaves
        nothing behind.

        The default: this backend copies from no other.

        :returns: A model update for the volume row.
        """
        raise exception.VolumeBackendAPIException(
            data="backend %s cannot copy a volume from another backend"
            % self.backend_name)

    def volume_locations(self) -> dict[str, str | None]:
        """The volumes this backend holds, by id, with the
        ``provider_location`` each would have: what the service compares
        with the rows to remove copies no row refers to any more (a
        volume's source copy whose ``delete_migrated`` was lost).

        The default: this backend cannot list its volumes (nothing is
        removed).

        :raises VolumeBackendAPIException: The backend failed.
        """
        return {}

    # -- existing storage: manage and unmanage (Cinder's names) --------
    def manageable_volumes(self) -> list[dict[str, Any]]:
        """The backend's objects a volume could be made of, each
        ``{"reference": {"source-name": ...}, "size": GiB rounded up,
        "cinder_id": the volume id its name carries or None,
        "extra_info": str or None, "safe_to_manage": bool,
        "reason_not_safe": str or None}``; the service marks those whose
        ``cinder_id`` has a row as not safe.

        :raises NotSupported: This backend cannot adopt storage.
        """
        raise exception.NotSupported(
            what="Managing existing storage on %s" % self.backend_name)

    def manage_existing_get_size(self, ref: dict[str, Any]) -> int:
        """The size in GiB (rounded up) of what ``ref`` names.

        :raises ManageExistingInvalidReference: ``ref`` names nothing this
            backend could adopt.
        :raises NotSupported: This backend cannot adopt storage.
        """
        raise exception.NotSupported(
            what="Managing existing storage on %s" % self.backend_name)

    def manage_existing(self, volume: DriverVolume,
                        ref: dict[str, Any]) -> dict[str, Any]:
        """Make what ``ref`` names the storage of ``volume`` (renamed as
        the backend names its volumes), its content untouched.

        :returns: a model update, as :meth:`create_volume`.
        :raises ManageExistingInvalidReference: ``ref`` names nothing this
            backend could adopt (any more).
        """
        raise exception.NotSupported(
            what="Managing existing storage on %s" % self.backend_name)

    def unmanage(self, volume: DriverVolume) -> None:
        """Forget ``volume``: its storage stays as it is (the default)."""
        LOG.info("Volume %(id)s unmanaged; %(where)s left as it is",
                 {"id": volume.id, "where": volume.provider_location})

    def manageable_snapshots(self) -> list[dict[str, Any]]:
        """As :meth:`manageable_volumes`, for snapshots; each entry also
        has ``source_reference`` (the volume it was taken of, if known).
        """
        raise exception.NotSupported(
            what="Managing existing snapshots on %s" % self.backend_name)

    def manage_existing_snapshot_get_size(self, ref: dict[str, Any]) -> int:
        """As :meth:`manage_existing_get_size`, for a snapshot."""
        raise exception.NotSupported(
            what="Managing existing snapshots on %s" % self.backend_name)

    def manage_existing_snapshot(self, snapshot: DriverSnapshot,
                                 ref: dict[str, Any]) -> dict[str, Any]:
        """As :meth:`manage_existing`, for a snapshot of
        ``snapshot.volume``."""
        raise exception.NotSupported(
            what="Managing existing snapshots on %s" % self.backend_name)

    def unmanage_snapshot(self, snapshot: DriverSnapshot) -> None:
        """Forget ``snapshot``: its storage stays (the default)."""
        LOG.info("Snapshot %(id)s unmanaged; %(where)s left as it is",
                 {"id": snapshot.id, "where": snapshot.provider_location})

    def retype(self, volume: DriverVolume, multiattach: bool) -> None:
        """Make an available volume fit a new type whose multiattach flag
        differs from ``volume.multiattach``.

        The default does nothing: the backend's volumes serve both.

        :raises VolumeBackendAPIException: The backend cannot change it; the
            volume keeps its type.
        """
        LOG.debug("Volume %(id)s serves multiattach %(ma)s as it is",
                  {"id": volume.id, "ma": multiattach})

    @abc.abstractmethod
    def initialize_connection(self, volume: DriverVolume,
                              connector: dict[str, Any]) -> dict[str, Any]:
        """Give a host access to a volume.

        Called for each attachment that brings a connector, so possibly
        several times for one multiattach volume.

        :param connector: os-brick connector properties of the host
            (``host``, ``initiator``, ...).
        :returns: os-brick ``connection_info``:
            ``{'driver_volume_type': <protocol>, 'data': {...}}``, where
            ``data`` holds at least ``volume_id`` and what the protocol's
            os-brick connector needs.
        :raises VolumeNotFound: The backend does not have the volume.
        :raises VolumeBackendAPIException: The backend failed.
        """

    @abc.abstractmethod
    def terminate_connection(self, volume: DriverVolume,
                             connector: dict[str, Any] | None) -> None:
        """Remove a host's access to a volume.

        Idempotent: a connection that does not exist is not an error.

        :param connector: The connector given to
            :meth:`initialize_connection`, or ``None`` to remove every host's
            access (force detach).
        :raises VolumeBackendAPIException: The backend failed.
        """

    def initialize_connection_snapshot(self, snapshot: DriverSnapshot,
                                       connector: dict[str, Any]
                                       ) -> dict[str, Any]:
        """Give a host read-only access to a snapshot (a backup of it).

        :returns: os-brick ``connection_info``, as
            :meth:`initialize_connection`.
        :raises InvalidSnapshot: the backend cannot (the default).
        """
        raise exception.InvalidSnapshot(
            reason="Backend %s cannot connect snapshot %s for a backup."
            % (self.backend_name, snapshot.id))

    def terminate_connection_snapshot(self, snapshot: DriverSnapshot,
                                      connector: dict[str, Any]) -> None:
        """Remove what :meth:`initialize_connection_snapshot` gave;
        idempotent.  The default does nothing."""
        LOG.debug("Snapshot %(id)s disconnected from %(host)s",
                  {"id": snapshot.id, "host": connector.get("host")})

    def fence(self, volume: DriverVolume, target: FenceTarget) -> list[str]:
        """Revoke ``target``'s I/O to ``volume`` while other hosts go on.

        Returns once the backend refuses the host's next I/O; idempotent.
        A driver that can reports ``fencing`` True (:attr:`FENCING`).

        :returns: the backend client ids revoked (kept for :meth:`unfence`).
        :raises FencingNotSupported: the backend cannot.
        :raises FencingFailed: the backend failed.
        """
        raise exception.FencingNotSupported(backend=self.backend_name)

    def unfence(self, volume: DriverVolume, clients: list[str]) -> None:
        """Lift what :meth:`fence` revoked (``clients`` it returned).

        :raises FencingNotSupported: the backend cannot.
        :raises FencingFailed: the backend failed.
        """
        raise exception.FencingNotSupported(backend=self.backend_name)

    def _capacity_report(self, total: int, free: int, provisioned: int,
                         count: int, state: str, **caps: object
                         ) -> dict[str, Any]:
        """A thin-provisioned pool's report from byte counts; ``caps`` are
        the driver's other capabilities (``multiattach``, ...)."""
        return self._build_stats(
            total_capacity_gb=gib(total),
            free_capacity_gb=gib(free),
            allocated_capacity_gb=gib(provisioned),
            provisioned_capacity_gb=gib(provisioned),
            thin_provisioning_support=True,
            thick_provisioning_support=False,
            backend_state=state,
            total_volumes=count,
            **caps,
        )

    def _build_stats(self, **pool: object) -> dict[str, Any]:
        """Wrap one pool's figures in a report with the backend-level keys."""
        name = self.volume_backend_name
        pool_stats = {
            "pool_name": name,
            "reserved_percentage": self.conf.reserved_percentage,
            "max_over_subscription_ratio":
                self.conf.max_over_subscription_ratio,
            "fencing": self.FENCING,
            **pool,
        }
        return {
            "volume_backend_name": name,
            "vendor_name": VENDOR_NAME,
            "driver_version": self.VERSION,
            "storage_protocol": self.STORAGE_PROTOCOL,
            "pools": [pool_stats],
        }


def gib_up(size_bytes: int) -> int:
    """Bytes as whole GiB, rounded up (Cinder's
    ``manage_existing_get_size``), at least 1."""
    return max(1, -(-size_bytes // units.Gi))


def gib(size_bytes: int) -> float:
    """``size_bytes`` in GiB, rounded to 2 decimals as capability reports
    give them."""
    return round(size_bytes / units.Gi, 2)


def load_driver(name: str) -> type[VolumeDriver]:
    """Return the driver class registered under ``name``.

    :param name: Short name in the ``ashlar.volume.drivers`` entry-point group
        (``file``, ``fake``).
    :raises InvalidInput: No driver class is registered under that name.
    """
    try:
        manager: stevedore_driver.DriverManager[object] = \
            stevedore_driver.DriverManager(DRIVER_NAMESPACE, name)
    except stevedore_exception.NoMatches as exc:
        raise exception.InvalidInput(
            reason=f"No volume driver named {name!r} in {DRIVER_NAMESPACE}."
        ) from exc
    driver_cls = manager.driver
    if not (isinstance(driver_cls, type)
            and issubclass(driver_cls, VolumeDriver)):
        raise exception.InvalidInput(
            reason=f"Entry point {name!r} is not a VolumeDriver class.")
    LOG.debug("Loaded volume driver %(name)s: %(cls)s",
              {"name": name, "cls": driver_cls.__qualname__})
    return driver_cls
