"""Client side of the volume service's RPC API."""

import datetime
import types
from typing import Any, TypedDict

from common import constants
from common import rpc
from common.context import RequestContext

#: The columns of an attachment row and of its volume that the volume
#: service needs to connect or disconnect it: sent along, so that it
#: need not read them again.
SNAPSHOT_ROW = ("id", "volume_id", "attach_status", "transition",
                "attach_mode", "attached_host")
SNAPSHOT_VOLUME = ("id", "size", "display_name", "provider_location",
                   "readonly", "encrypted", "multiattach", "front_end_qos")


class AttachmentSnapshot(TypedDict):
    """:func:`snapshot`'s dict: column -> value of the row (``SNAPSHOT_ROW``)
    and of its volume (``SNAPSHOT_VOLUME``), and the connector."""

    attachment: dict[str, object]
    volume: dict[str, object]
    connector: dict[str, Any]


class ConnectAnswer(TypedDict):
    """What ``attachment_connect`` wrote, as it answers it."""

    attach_status: str
    connection_info: str        # JSON
    attach_time: str            # ISO 8601


class FenceAnswer(TypedDict):
    """What ``attachment_fence`` recorded, as it answers it."""

    fenced_at: str              # ISO 8601
    fenced_clients: list[str]


def snapshot(row: object, volume: object,
             connector: dict[str, Any] | None = None) -> AttachmentSnapshot:
    """An attachment as the API just wrote it, for the volume service."""
    return {"attachment": {key: getattr(row, key) for key in SNAPSHOT_ROW},
            "volume": {key: getattr(volume, key) for key in SNAPSHOT_VOLUME},
            "connector": connector or {}}


def unpack(snap: AttachmentSnapshot) -> tuple[
        types.SimpleNamespace, types.SimpleNamespace, dict[str, Any]]:
    """``snapshot``'s ``(row, volume, connector)``, attribute access; an
    older api's snapshot has no ``multiattach`` (False) nor
    ``front_end_qos`` (None)."""
    return (types.SimpleNamespace(**snap["attachment"]),
            types.SimpleNamespace(**{"multiattach": False,
                                     "front_end_qos": None,
                                     **snap["volume"]}),
            snap["connector"])


def connected(row: object, done: ConnectAnswer) -> types.SimpleNamespace:
    """``row`` with what ``attachment_connect`` answered applied."""
    return types.SimpleNamespace(**dict(
        vars(row), transition=None, attach_status=done["attach_status"],
        connection_info=done["connection_info"],
        attach_time=datetime.datetime.fromisoformat(done["attach_time"])))


def backend_of(host: str) -> str:
    """``host@backend#pool`` -> ``host@backend`` (the RPC server name)."""
    return host.partition("#")[0]


class VolumeAPI(rpc.RPCAPI):
    """Client of ``ashlar-volume`` servers named ``host@backend``.

    API version history::

        1.0 - Initial version: create_volume, delete_volume,
              publish_service_capabilities.
        1.1 - attachment_connect, attachment_disconnect (calls);
              extend_volume, retype_volume (casts).
        1.2 - attachment_connect, attachment_disconnect take the
              ``snapshot`` of the row; attachment_connect answers the
              values it wrote.
        1.3 - create_snapshot, delete_snapshot, revert_to_snapshot
              (casts); create_volume makes a volume from its
              ``snapshot_id`` or ``source_volid``.
        1.4 - attachment_fence, attachment_unfence (calls).
        1.5 - delete_volume deletes the volume's ``deleting`` snapshots
              first (a cascade).
        1.6 - migrate_volume, migrate_volume_in, delete_migrated (casts):
              a retype or an admin's migrate that moves the volume to
              another pool (``common.migration``).
        1.7 - do_cleanup (cast, to a node or a cluster): resume now the
              work the periodic sweep resumes (``POST /workers/cleanup``).
        1.8 - backup_connect, backup_disconnect (calls): a backup service
              reads (or a restore writes) a ``backing-up`` (or
              ``restoring-backup``) volume through its connection.
        1.9 - get_manageable_volumes, get_manageable_snapshots,
              manage_existing_get_size (calls); manage_existing,
              manage_existing_snapshot, unmanage_volume,
              unmanage_snapshot (casts): adopt or forget existing storage.
        1.10 - backup_connect_snapshot, backup_disconnect_snapshot (calls):
              a backup service reads a ``backing-up`` snapshot.
    """

    TOPIC = constants.VOLUME_TOPIC
    BINARY = constants.VOLUME_BINARY
    RPC_API_VERSION = "1.10"
    #: What a backup or a restore needs of the volume's node.
    BACKUP_VERSION = "1.8"
    #: What a backup of a snapshot needs of the volume's node.
    SNAPSHOT_BACKUP_VERSION = "1.10"
    #: A delete that takes the volume's snapshots along.
    CASCADE_VERSION = "1.5"

    def create_volume(self, ctxt: RequestContext, volume_id: str,
                      host: str) -> None:
        self._prepare(server=backend_of(host), version="1.0").cast(
            ctxt, "create_volume", volume_id=volume_id)

    def delete_volume(self, ctxt: RequestContext, volume_id: str, host: str,
                      cascade: bool = False) -> None:
        """``cascade``: the volume's snapshots are ``deleting`` too (the
        caller checked ``require(CASCADE_VERSION)`` before changing them)."""
        self._prepare(server=backend_of(host),
                      version=self.CASCADE_VERSION if cascade else "1.0").cast(
            ctxt, "delete_volume", volume_id=volume_id)

    def publish_service_capabilities(self, ctxt: RequestContext) -> None:
        """Ask every volume backend to report now (fanout cast)."""
        self._prepare(fanout=True, version="1.0").cast(
            ctxt, "publish_service_capabilities")

    @rpc.assert_min_rpc_version("1.2")
    def attachment_connect(self, ctxt: RequestContext, host: str,
                           attachment_id: str, snap: AttachmentSnapshot
                           ) -> ConnectAnswer:
        """Connect an attachment in flight (``snap``: its ``snapshot``).

        A call, bounded by ``rpc_call_timeout``.

        :returns: ``{"attach_status", "connection_info" (JSON),
            "attach_time" (ISO 8601)}`` as written.
        """
        done: ConnectAnswer = self._prepare(
            server=backend_of(host), version="1.2").call(
            ctxt, "attachment_connect", attachment_id=attachment_id,
            snapshot=snap)
        return done

    @rpc.assert_min_rpc_version("1.2")
    def attachment_disconnect(self, ctxt: RequestContext, host: str,
                              attachment_id: str,
                              snap: AttachmentSnapshot) -> None:
        """Terminate the connection of an attachment being deleted (call)."""
        self._prepare(server=backend_of(host), version="1.2").call(
            ctxt, "attachment_disconnect", attachment_id=attachment_id,
            snapshot=snap)

    #: The version fences need (``require`` it before starting one).
    FENCE_VERSION = "1.4"

    @rpc.assert_min_rpc_version("1.4")
    def attachment_fence(self, ctxt: RequestContext, host: str,
                         attachment_id: str, snap: AttachmentSnapshot
                         ) -> FenceAnswer:
        """Revoke the host's I/O of an attachment the api put in the
        ``fencing`` transition, then record the fence (call).

        :returns: ``{"fenced_at" (ISO 8601), "fenced_clients": [...]}``.
        """
        done: FenceAnswer = self._prepare(
            server=backend_of(host), version="1.4").call(
            ctxt, "attachment_fence", attachment_id=attachment_id,
            snapshot=snap)
        return done

    @rpc.assert_min_rpc_version("1.4")
    def attachment_unfence(self, ctxt: RequestContext, host: str,
                           volume_id: str, clients: list[str]) -> None:
        """Lift what a fence of ``volume_id`` revoked (call)."""
        self._prepare(server=backend_of(host), version="1.4").call(
            ctxt, "attachment_unfence", volume_id=volume_id, clients=clients)

    @rpc.assert_min_rpc_version("1.1")
    def extend_volume(self, ctxt: RequestContext, volume_id: str, host: str,
                      new_size: int) -> None:
        self._prepare(server=backend_of(host), version="1.1").cast(
            ctxt, "extend_volume", volume_id=volume_id, new_size=new_size)

    @rpc.assert_min_rpc_version("1.1")
    def retype_volume(self, ctxt: RequestContext, volume_id: str, host: str,
                      new_type_id: str, migration_policy: str) -> None:
        self._prepare(server=backend_of(host), version="1.1").cast(
            ctxt, "retype_volume", volume_id=volume_id,
            new_type_id=new_type_id, migration_policy=migration_policy)

    @rpc.assert_min_rpc_version("1.3")
    def create_volume_from_source(self, ctxt: RequestContext, volume_id: str,
                                  host: str) -> None:
        """``create_volume`` of a row with a ``snapshot_id`` or
        ``source_volid`` (an older node would make it blank)."""
        self._prepare(server=backend_of(host), version="1.3").cast(
            ctxt, "create_volume", volume_id=volume_id)

    @rpc.assert_min_rpc_version("1.3")
    def create_snapshot(self, ctxt: RequestContext, snapshot_id: str,
                        host: str) -> None:
        self._prepare(server=backend_of(host), version="1.3").cast(
            ctxt, "create_snapshot", snapshot_id=snapshot_id)

    @rpc.assert_min_rpc_version("1.3")
    def delete_snapshot(self, ctxt: RequestContext, snapshot_id: str,
                        host: str) -> None:
        self._prepare(server=backend_of(host), version="1.3").cast(
            ctxt, "delete_snapshot", snapshot_id=snapshot_id)

    @rpc.assert_min_rpc_version("1.3")
    def revert_to_snapshot(self, ctxt: RequestContext, volume_id: str,
                           host: str, snapshot_id: str) -> None:
        self._prepare(server=backend_of(host), version="1.3").cast(
            ctxt, "revert_to_snapshot", volume_id=volume_id,
            snapshot_id=snapshot_id)

    #: The version a retype that moves a volume needs.
    MIGRATION_VERSION = "1.6"

    @rpc.assert_min_rpc_version("1.6")
    def migrate_volume(self, ctxt: RequestContext, volume_id: str, host: str,
                       dest_host: str) -> None:
        """Ask the node of pool ``host`` to move the volume to pool (or
        backend) ``dest_host``, with its type: an admin's migrate."""
        self._prepare(server=backend_of(host), version="1.6").cast(
            ctxt, "migrate_volume", volume_id=volume_id, host=dest_host)

    @rpc.assert_min_rpc_version("1.6")
    def migrate_volume_in(self, ctxt: RequestContext, volume_id: str,
                          host: str, source_host: str, source: dict[str, Any],
                          new_type_id: str) -> None:
        """Ask pool ``host`` to copy the volume from ``source`` (what
        ``source_host``'s driver said of it) and take it, of the new type."""
        self._prepare(server=backend_of(host), version="1.6").cast(
            ctxt, "migrate_volume_in", volume_id=volume_id, host=host,
            source_host=source_host, source=source, new_type_id=new_type_id)

    @rpc.assert_min_rpc_version("1.6")
    def delete_migrated(self, ctxt: RequestContext, volume_id: str, host: str,
                        size: int, provider_location: str | None) -> None:
        """Remove the copy a volume left on pool ``host`` when it moved."""
        self._prepare(server=backend_of(host), version="1.6").cast(
            ctxt, "delete_migrated", volume_id=volume_id, size=size,
            provider_location=provider_location)

    @rpc.assert_min_rpc_version("1.7")
    def do_cleanup(self, ctxt: RequestContext, server: str) -> None:
        """Ask ``server`` (``host@backend``, or ``cluster@backend``: any
        live member) to run its sweep of interrupted work now."""
        self._prepare(server=server, version="1.7").cast(ctxt, "do_cleanup")

    @rpc.assert_min_rpc_version("1.8")
    def backup_connect(self, ctxt: RequestContext, host: str, volume_id: str,
                       connector: dict[str, Any]) -> dict[str, Any]:
        """The driver's connection to a volume being backed up or
        restored, for the backup service's ``connector`` (call)."""
        info: dict[str, Any] = self._prepare(
            server=backend_of(host), version="1.8").call(
            ctxt, "backup_connect", volume_id=volume_id, connector=connector)
        return info

    @rpc.assert_min_rpc_version("1.8")
    def backup_disconnect(self, ctxt: RequestContext, host: str,
                          volume_id: str, connector: dict[str, Any]) -> None:
        """End what ``backup_connect`` made (call)."""
        self._prepare(server=backend_of(host), version="1.8").call(
            ctxt, "backup_disconnect", volume_id=volume_id,
            connector=connector)

    #: Manage and unmanage (``require`` it before changing a row).
    MANAGE_VERSION = "1.9"

    @rpc.assert_min_rpc_version("1.9")
    def get_manageable_volumes(self, ctxt: RequestContext,
                               host: str) -> list[dict[str, Any]]:
        """What the backend holds that a volume could adopt (call): each
        entry as ``drivers.base.VolumeDriver.manageable_volumes``."""
        found: list[dict[str, Any]] = self._prepare(
            server=backend_of(host), version="1.9").call(
            ctxt, "get_manageable_volumes")
        return found

    @rpc.assert_min_rpc_version("1.9")
    def get_manageable_snapshots(self, ctxt: RequestContext,
                                 host: str) -> list[dict[str, Any]]:
        """As :meth:`get_manageable_volumes`, for snapshots (call)."""
        found: list[dict[str, Any]] = self._prepare(
            server=backend_of(host), version="1.9").call(
            ctxt, "get_manageable_snapshots")
        return found

    @rpc.assert_min_rpc_version("1.9")
    def manage_existing_get_size(self, ctxt: RequestContext, host: str,
                                 ref: dict[str, Any],
                                 snapshot: bool = False) -> int:
        """The size in GiB of what ``ref`` names (call).

        :raises ManageExistingInvalidReference: nothing to adopt there.
        """
        size: int = self._prepare(server=backend_of(host), version="1.9").call(
            ctxt, "manage_existing_get_size", ref=ref, snapshot=snapshot)
        return size

    @rpc.assert_min_rpc_version("1.9")
    def manage_existing(self, ctxt: RequestContext, volume_id: str,
                        host: str, ref: dict[str, Any]) -> None:
        """Adopt ``ref`` as the ``managing`` volume (cast)."""
        self._prepare(server=backend_of(host), version="1.9").cast(
            ctxt, "manage_existing", volume_id=volume_id, ref=ref)

    @rpc.assert_min_rpc_version("1.9")
    def manage_existing_snapshot(self, ctxt: RequestContext,
                                 snapshot_id: str, host: str,
                                 ref: dict[str, Any]) -> None:
        """Adopt ``ref`` as the ``managing`` snapshot (cast)."""
        self._prepare(server=backend_of(host), version="1.9").cast(
            ctxt, "manage_existing_snapshot", snapshot_id=snapshot_id,
            ref=ref)

    @rpc.assert_min_rpc_version("1.9")
    def unmanage_volume(self, ctxt: RequestContext, volume_id: str,
                        host: str) -> None:
        """Forget the ``unmanaging`` volume, its storage left (cast)."""
        self._prepare(server=backend_of(host), version="1.9").cast(
            ctxt, "unmanage_volume", volume_id=volume_id)

    @rpc.assert_min_rpc_version("1.9")
    def unmanage_snapshot(self, ctxt: RequestContext, snapshot_id: str,
                          host: str) -> None:
        """Forget the ``unmanaging`` snapshot, its storage left (cast)."""
        self._prepare(server=backend_of(host), version="1.9").cast(
            ctxt, "unmanage_snapshot", snapshot_id=snapshot_id)
    @rpc.assert_min_rpc_version("1.10")
    def backup_connect_snapshot(self, ctxt: RequestContext, host: str,
                                snapshot_id: str,
                                connector: dict[str, Any]) -> dict[str, Any]:
        """The driver's read-only connection to a snapshot being backed
        up, for the backup service's ``connector`` (call)."""
        info: dict[str, Any] = self._prepare(
            server=backend_of(host), version="1.10").call(
            ctxt, "backup_connect_snapshot", snapshot_id=snapshot_id,
            connector=connector)
        return info

    @rpc.assert_min_rpc_version("1.10")
    def backup_disconnect_snapshot(self, ctxt: RequestContext, host: str,
                                   snapshot_id: str,
                                   connector: dict[str, Any]) -> None:
        """End what ``backup_connect_snapshot`` made (call)."""
        self._prepare(server=backend_of(host), version="1.10").call(
            ctxt, "backup_disconnect_snapshot", snapshot_id=snapshot_id,
            connector=connector)
