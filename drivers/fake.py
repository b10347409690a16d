"""In-memory driver for unit tests of the volume service.

It keeps volumes, snapshots and connections in dicts and follows the same contract as a
real backend, so manager tests can assert what reached the driver.  Capacity
and multiattach come from options or constructor keywords.
"""

import os
import threading
import time
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from drivers import base

LOG = logging.getLogger(__name__)

FAKE_OPTS = [
    cfg.FloatOpt(
        "fake_total_capacity_gb",
        default=1000.0,
        min=0.0,
        help="Total capacity the fake backend reports, in GiB.",
    ),
    cfg.BoolOpt(
        "fake_multiattach",
        default=True,
        help="Whether the fake backend reports multiattach support.",
    ),
    cfg.StrOpt(
        "fake_gate",
        help="Tests only: a path. Each create first writes "
             "PATH.<volume id>, then waits until PATH exists: a volume "
             "node stopped in the middle of a create, to be killed.",
    ),
]
#: Seconds between two looks at the gate.
GATE_POLL = 0.05


class FakeDriver(base.VolumeDriver):
    """Volumes as entries of :attr:`volumes`, snapshots of
    :attr:`snapshots`; connections in :attr:`connections`.

    :param total_capacity_gb: Overrides ``fake_total_capacity_gb``.
    :param multiattach: Overrides ``fake_multiattach``.
    """

    VERSION = "1.0.0"
    STORAGE_PROTOCOL = "fake"
    FENCING = True
    driver_opts = tuple(FAKE_OPTS)

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str, total_capacity_gb: float | None = None,
                 multiattach: bool | None = None) -> None:
        super().__init__(conf, backend_name, host)
        self.total_capacity_gb = (conf.fake_total_capacity_gb
                                  if total_capacity_gb is None
                                  else total_capacity_gb)
        self.multiattach = (conf.fake_multiattach if multiattach is None
                            else multiattach)
        #: Volume id -> size in GiB.
        self.volumes: dict[str, int] = {}
        #: Volume id -> connectors given to initialize_connection.
        self.connections: dict[str, list[dict[str, Any]]] = {}
        #: Snapshot id -> (volume id, size in GiB).
        self.snapshots: dict[str, tuple[str, int]] = {}
        #: Volume id -> what it was made from: ("snapshot", "volume" or
        #: "copy" (another backend's volume), id).
        self.origins: dict[str, tuple[str, str]] = {}
        #: (volume id, snapshot id) of each revert, in order.
        self.reverts: list[tuple[str, str]] = []
        #: Volume id -> client ids fenced from it (lifted ones removed).
        self.fenced: dict[str, set[str]] = {}
        #: Storage no volume owns, by name -> size in GiB (manageable).
        self.unmanaged: dict[str, int] = {}
        self._lock = threading.Lock()

    def do_setup(self) -> None:
        """Nothing to prepare."""

    def check_for_setup_error(self) -> None:
        """Nothing can be wrong."""

    def get_volume_stats(self, refresh: bool = False) -> dict[str, Any]:
        """Report the configured capacity minus the volumes' sizes."""
        with self._lock:
            allocated = float(sum(self.volumes.values()))
            count = len(self.volumes)
        return self._build_stats(
            total_capacity_gb=self.total_capacity_gb,
            free_capacity_gb=max(0.0, self.total_capacity_gb - allocated),
            allocated_capacity_gb=allocated,
            provisioned_capacity_gb=allocated,
            thin_provisioning_support=True,
            thick_provisioning_support=False,
            multiattach=self.multiattach,
            snapshot_support=True,
            revert_to_snapshot_support=True,
            backend_state="up",
            total_volumes=count,
        )

    def fence(self, volume: base.DriverVolume,
              target: base.FenceTarget) -> list[str]:
        """Record the target's clients (or its host) as fenced."""
        clients = sorted(target.clients) or ["host:" + target.host]
        with self._lock:
            self.fenced.setdefault(volume.id, set()).update(clients)
        return clients

    def unfence(self, volume: base.DriverVolume, clients: list[str]) -> None:
        with self._lock:
            self.fenced.get(volume.id, set()).difference_update(clients)

    def create_volume(self, volume: base.DriverVolume) -> dict[str, Any]:
        """Record the volume (once past the gate, if one is set); adopt
        one recorded already."""
        base.validate_size(volume.size)
        self._wait_at_gate(volume.id)
        with self._lock:
            self.volumes.setdefault(volume.id, volume.size)
        LOG.info("Created fake volume %(id)s", {"id": volume.id})
        return {"provider_location": self._location(volume.id)}

    def _wait_at_gate(self, volume_id: str) -> None:
        gate = self.conf.fake_gate
        if not gate:
            return
        with open("%s.%s" % (gate, volume_id), "w"):
            pass
        while not os.path.exists(gate):
            time.sleep(GATE_POLL)

    def delete_volume(self, volume: base.DriverVolume) -> None:
        """Forget the volume and its connections; refuse while it has
        snapshots (the service deletes those first)."""
        with self._lock:
            left = sorted(snap for snap, (vol, _size) in self.snapshots.items()
                          if vol == volume.id)
            if left:
                raise exception.VolumeBackendAPIException(
                    data=f"volume {volume.id} still has snapshots {left}")
            self.volumes.pop(volume.id, None)
            self.connections.pop(volume.id, None)
            self.origins.pop(volume.id, None)

    def extend_volume(self, volume: base.DriverVolume, new_size: int) -> None:
        """Record the new size."""
        base.validate_new_size(volume, new_size)
        with self._lock:
            self._require(volume.id)
            self.volumes[volume.id] = new_size

    def create_snapshot(self, snapshot: base.DriverSnapshot
                        ) -> dict[str, Any]:
        """Record the snapshot with its volume's current size."""
        with self._lock:
            self._require(snapshot.volume.id)
            if snapshot.id in self.snapshots:
                raise exception.VolumeBackendAPIException(
                    data=f"snapshot {snapshot.id} already exists")
            self.snapshots[snapshot.id] = (
                snapshot.volume.id, self.volumes[snapshot.volume.id])
        return {"provider_location": f"fake://snapshot/{snapshot.id}"}

    def delete_snapshot(self, snapshot: base.DriverSnapshot) -> None:
        """Forget the snapshot (volumes made from it stay)."""
        with self._lock:
            self.snapshots.pop(snapshot.id, None)

    def create_volume_from_snapshot(self, volume: base.DriverVolume,
                                    snapshot: base.DriverSnapshot
                                    ) -> dict[str, Any]:
        """Record a volume made from a recorded snapshot."""
        base.validate_clone_size(volume, snapshot.size)
        with self._lock:
            if snapshot.id not in self.snapshots:
                raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
            return self._add_copy(volume, ("snapshot", snapshot.id),
                                  adopt=True)

    def create_cloned_volume(self, volume: base.DriverVolume,
                             source: base.DriverVolume) -> dict[str, Any]:
        """Record a volume made from a recorded volume."""
        base.validate_clone_size(volume, source.size)
        with self._lock:
            self._require(source.id)
            return self._add_copy(volume, ("volume", source.id),
                                  adopt=True)

    def revert_to_snapshot(self, volume: base.DriverVolume,
                           snapshot: base.DriverSnapshot) -> None:
        """Record the revert; the volume keeps its size."""
        with self._lock:
            self._require(volume.id)
            if snapshot.id not in self.snapshots:
                raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
            self.reverts.append((volume.id, snapshot.id))

    def copy_source(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The volume's id: another fake backend records a copy of it."""
        with self._lock:
            self._require(volume.id)
        return {"protocol": self.STORAGE_PROTOCOL, "volume_id": volume.id}

    def create_volume_from_copy(self, volume: base.DriverVolume,
                                source: dict[str, Any]) -> dict[str, Any]:
        """Record a volume copied from another fake backend's."""
        if source.get("protocol") != self.STORAGE_PROTOCOL:
            return super().create_volume_from_copy(volume, source)
        with self._lock:
            return self._add_copy(volume, ("copy", source["volume_id"]))

    def _add_copy(self, volume: base.DriverVolume, origin: tuple[str, str],
                  adopt: bool = False) -> dict[str, Any]:
        """Record a copy; one recorded already is adopted when ``adopt``
        (a resumed create), else refused (a stale copy of a move)."""
        if volume.id in self.volumes and adopt:
            return {"provider_location": self._location(volume.id)}
        if volume.id in self.volumes:
            raise exception.VolumeBackendAPIException(
                data=f"volume {volume.id} already exists")
        self.volumes[volume.id] = volume.size
        self.origins[volume.id] = origin
        return {"provider_location": self._location(volume.id)}

    def volume_locations(self) -> dict[str, str | None]:
        """The recorded volumes and their locations."""
        with self._lock:
            return {volume_id: self._location(volume_id)
                    for volume_id in self.volumes}

    def _location(self, volume_id: str) -> str:
        """Where a volume is: on this backend (two fake backends hold
        different copies of a volume that moved)."""
        return f"fake://{self.backend_name}/{volume_id}"

    def initialize_connection(self, volume: base.DriverVolume,
                              connector: dict[str, Any]) -> dict[str, Any]:
        """Record the connector; ``data`` holds only ``volume_id``."""
        with self._lock:
            self._require(volume.id)
            self.connections.setdefault(volume.id, []).append(connector)
        return {"driver_volume_type": "fake",
                "data": {"volume_id": volume.id}}

    def terminate_connection(self, volume: base.DriverVolume,
                             connector: dict[str, Any] | None) -> None:
        """Drop the connections of ``connector``'s host, or all of them."""
        with self._lock:
            if connector is None:
                self.connections.pop(volume.id, None)
                return
            kept = [known for known in self.connections.get(volume.id, [])
                    if known.get("host") != connector.get("host")]
            if kept:
                self.connections[volume.id] = kept
            else:
                self.connections.pop(volume.id, None)

    # -- manage and unmanage ----------------------------------------------
    def manageable_volumes(self) -> list[dict[str, Any]]:
        """:attr:`unmanaged`, and the volumes as ``volume-<id>``."""
        with self._lock:
            named = dict(self.unmanaged, **{
                "volume-" + key: size for key, size in self.volumes.items()})
        return [{"reference": {"source-name": name}, "size": size,
                 "cinder_id": name[len("volume-"):]
                 if name.startswith("volume-") else None,
                 "safe_to_manage": True, "reason_not_safe": None,
                 "extra_info": None} for name, size in named.items()]

    def manage_existing_get_size(self, ref: dict[str, Any]) -> int:
        with self._lock:
            return self.unmanaged[self._unmanaged_name(ref)]

    def manage_existing(self, volume: base.DriverVolume,
                        ref: dict[str, Any]) -> dict[str, Any]:
        """Move ``ref``'s entry of :attr:`unmanaged` to the volumes."""
        with self._lock:
            self.volumes[volume.id] = self.unmanaged.pop(
                self._unmanaged_name(ref))
        return {"provider_location": self._location(volume.id)}

    def unmanage(self, volume: base.DriverVolume) -> None:
        """Move the volume to :attr:`unmanaged` as ``volume-<id>``."""
        with self._lock:
            self._require(volume.id)
            self.unmanaged["volume-" + volume.id] = self.volumes.pop(
                volume.id)

    def manageable_snapshots(self) -> list[dict[str, Any]]:
        """:attr:`unmanaged` named ``snapshot-*``, and the snapshots."""
        with self._lock:
            named = {name: size for name, size in self.unmanaged.items()
                     if name.startswith("snapshot-")}
            named.update({"snapshot-" + key: size for key, (_vol, size)
                          in self.snapshots.items()})
        return [{"reference": {"source-name": name}, "size": size,
                 "cinder_id": name[len("snapshot-"):],
                 "safe_to_manage": True, "reason_not_safe": None,
                 "extra_info": None, "source_reference": None}
                for name, size in named.items()]

    def manage_existing_snapshot_get_size(self, ref: dict[str, Any]) -> int:
        return self.manage_existing_get_size(ref)

    def manage_existing_snapshot(self, snapshot: base.DriverSnapshot,
                                 ref: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.snapshots[snapshot.id] = (snapshot.volume.id,
                                           self.unmanaged.pop(
                                               self._unmanaged_name(ref)))
        return {"provider_location": f"fake://snapshot/{snapshot.id}"}

    def unmanage_snapshot(self, snapshot: base.DriverSnapshot) -> None:
        with self._lock:
            _vol, size = self.snapshots.pop(snapshot.id)
            self.unmanaged["snapshot-" + snapshot.id] = size

    def _unmanaged_name(self, ref: dict[str, Any]) -> str:
        name = ref.get("source-name") if isinstance(ref, dict) else None
        if name not in self.unmanaged:
            raise exception.ManageExistingInvalidReference(
                existing_ref=ref, reason="no such volume")
        return str(name)

    def _require(self, volume_id: str) -> None:
        if volume_id not in self.volumes:
            raise exception.VolumeNotFound(volume_id=volume_id)


register_opts = FakeDriver.register_opts
