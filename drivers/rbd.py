"""Ceph RBD backend: each volume is a format-2 image ``volume-<id>`` in one pool.

The driver talks to the cluster through the ``rados`` and ``rbd`` python
bindings (librados, librbd), on one cluster connection held for the life of
the volume service; no call shells out to the ``rbd`` or ``ceph`` commands.
Multiattach volumes are made with ``layering`` and ``deep-flatten`` only:
with exclusive-lock, writers on two hosts would pass the lock back and
forth on every write (object-map, fast-diff and journaling need it), as
Cinder's RBD driver does.  Hosts reach images through os-brick's ``rbd``
connector (``connection_info`` in Cinder's ``rbd`` format); the cephx key
is never sent in it: a host reads its keyring from its own files.
"""

import json
import threading
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import units

from common import exception
from drivers import base

LOG = logging.getLogger(__name__)

RBD_OPTS = [
    cfg.StrOpt("rbd_pool", default="volumes",
               help="The RADOS pool that holds the volumes' images."),
    cfg.StrOpt("rbd_user", default="cinder",
               help="The cephx user (without ``client.``) that the volume "
               "service and the compute hosts use."),
    cfg.StrOpt("rbd_ceph_conf", default="/etc/ceph/ceph.conf",
               help="ceph.conf of the cluster: monitors and, unless "
               "rbd_keyring is set, where the user's keyring lies."),
    cfg.StrOpt("rbd_keyring",
               help="Keyring of rbd_user for the volume service; by default "
               "the one ceph.conf names (e.g. "
               "/etc/ceph/ceph.client.cinder.keyring)."),
    cfg.StrOpt("rbd_cluster_name", default="ceph",
               help="Cluster name, sent to hosts so they find "
               "/etc/ceph/<cluster>.client.<user>.keyring."),
    cfg.StrOpt("rbd_secret_uuid",
               help="UUID of the libvirt secret that holds rbd_user's key on "
               "the compute hosts, passed in connection_info."),
    cfg.IntOpt("rbd_store_chunk_size", default=4, min=1, max=32,
               help="Object size of new images, in MiB (a power of two)."),
    cfg.IntOpt("rados_connect_timeout", default=10, min=1,
               help="Seconds to wait for the cluster when connecting."),
    cfg.BoolOpt("rbd_multiattach", default=True,
                help="Report the backend as multiattach capable."),
]

#: Image name of a volume; Cinder's, so images move between the two.
NAME_FORMAT = "volume-%s"


def _features(rbd_mod: Any, multiattach: bool) -> int:
    """The features of a new image: without the lock-based ones for a
    shared volume."""
    features = rbd_mod.RBD_FEATURE_LAYERING | rbd_mod.RBD_FEATURE_DEEP_FLATTEN
    if not multiattach:
        features |= (rbd_mod.RBD_FEATURE_EXCLUSIVE_LOCK
                     | rbd_mod.RBD_FEATURE_OBJECT_MAP
                     | rbd_mod.RBD_FEATURE_FAST_DIFF)
    return features


def _lock_features(rbd_mod: Any) -> int:
    """The features a shared image must not have (librbd changes them
    together in one call, dependencies included)."""
    return (rbd_mod.RBD_FEATURE_EXCLUSIVE_LOCK | rbd_mod.RBD_FEATURE_OBJECT_MAP
            | rbd_mod.RBD_FEATURE_FAST_DIFF | rbd_mod.RBD_FEATURE_JOURNALING)


class RBDDriver(base.VolumeDriver):
    """Volumes as RBD images in ``rbd_pool``."""

    VERSION = "1.0.0"
    STORAGE_PROTOCOL = "ceph"
    driver_opts = tuple(RBD_OPTS)

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str) -> None:
        super().__init__(conf, backend_name, host)
        self._rados: Any = None
        self._rbd: Any = None
        self._client: Any = None
        self._ioctx: Any = None
        self._monitors: tuple[list[str], list[str]] = ([], [])
        #: Sizes (bytes) of this pool's volume images, kept as we change them.
        self._sizes: dict[str, int] = {}
        self._sizes_lock = threading.Lock()
        self._stats: dict[str, Any] | None = None

    # -- set-up -----------------------------------------------------------
    def do_setup(self) -> None:
        """Import the bindings, connect, open the pool, learn the monitors
        and the sizes of the images already there."""
        try:
            import rados
            import rbd
        except ImportError as exc:
            raise exception.VolumeBackendAPIException(
                data="the rados and rbd python bindings are not installed "
                "(Debian: python3-rados python3-rbd): %s" % exc) from exc
        self._rados, self._rbd = rados, rbd
        conf_overrides = ({"keyring": self.conf.rbd_keyring}
                          if self.conf.rbd_keyring else {})
        client = rados.Rados(rados_id=self.conf.rbd_user,
                             clustername=self.conf.rbd_cluster_name,
                             conffile=self.conf.rbd_ceph_conf,
                             conf=conf_overrides)
        try:
            client.connect(timeout=self.conf.rados_connect_timeout)
            self._ioctx = client.open_ioctx(self.conf.rbd_pool)
        except rados.Error as exc:
            client.shutdown()
            raise exception.VolumeBackendAPIException(
                data="cannot use pool %s of cluster %s as %s: %s" % (
                    self.conf.rbd_pool, self.conf.rbd_ceph_conf,
                    self.conf.rbd_user, exc)) from exc
        self._client = client
        self._monitors = self._read_monitors()
        self._sizes = self._read_sizes()
        LOG.info("RBD backend %(name)s: pool %(pool)s, %(count)d volumes, "
                 "monitors %(mons)s",
                 {"name": self.backend_name, "pool": self.conf.rbd_pool,
                  "count": len(self._sizes), "mons": self._monitors[0]})

    def check_for_setup_error(self) -> None:
        """Check that do_setup connected."""
        if self._ioctx is None:
            raise exception.DriverNotInitialized()

    def _read_monitors(self) -> tuple[list[str], list[str]]:
        """The monitors' hosts and ports from the monmap (msgr1 address
        when a monitor has one: os-brick writes ``mon_host = host:port``)."""
        dump = self._mon_command("mon dump")
        hosts, ports = [], []
        for mon in dump["mons"]:
            addrs = mon.get("public_addrs", {}).get("addrvec", [])
            chosen = next((a for a in addrs if a["type"] == "v1"),
                          addrs[0] if addrs else None)
            if chosen is None:
                continue
            host, _, port = chosen["addr"].rpartition(":")
            hosts.append(host.strip("[]"))
            ports.append(port)
        return hosts, ports

    def _read_sizes(self) -> dict[str, int]:
        sizes = {}
        for name in self._rbd.RBD().list(self._ioctx):
            if not name.startswith(NAME_FORMAT % ""):
                continue
            try:
                with self._rbd.Image(self._ioctx, name,
                                     read_only=True) as image:
                    sizes[name] = image.size()
            except self._rbd.ImageNotFound:
                continue
        return sizes

    def _mon_command(self, prefix: str) -> dict[str, Any]:
        ret, out, err = self._client.mon_command(
            json.dumps({"prefix": prefix, "format": "json"}), b"",
            timeout=self.conf.rados_connect_timeout)
        if ret:
            raise exception.VolumeBackendAPIException(
                data="ceph %s failed (%d): %s" % (prefix, ret, err))
        return json.loads(out)

    # -- volumes ----------------------------------------------------------
    def create_volume(self, volume: base.DriverVolume) -> dict[str, Any]:
        """Create the image, with the features its sharing allows."""
        base.validate_size(volume.size)
        name = NAME_FORMAT % volume.id
        size = volume.size * units.Gi
        order = (self.conf.rbd_store_chunk_size * units.Mi).bit_length() - 1
        try:
            self._rbd.RBD().create(
                self._ioctx, name, size, order=order, old_format=False,
                features=_features(self._rbd, volume.multiattach))
        except self._rbd.ImageExists as exc:
            raise exception.VolumeBackendAPIException(
                data="image %s already exists" % name) from exc
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot create image %s: %s" % (name, exc)) from exc
        self._set_size(name, size)
        LOG.info("Created image %(pool)s/%(name)s of %(size)s GiB "
                 "(multiattach %(ma)s)",
                 {"pool": self.conf.rbd_pool, "name": name,
                  "size": volume.size, "ma": volume.multiattach})
        return {}

    def delete_volume(self, volume: base.DriverVolume) -> None:
        """Remove the image; one that is already gone is not an error."""
        name = NAME_FORMAT % volume.id
        try:
            self._rbd.RBD().remove(self._ioctx, name)
        except self._rbd.ImageNotFound:
            LOG.info("Image %s not found; nothing to delete", name)
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot delete image %s: %s" % (name, exc)) from exc
        self._set_size(name, None)
        LOG.info("Deleted image %s", name)

    def extend_volume(self, volume: base.DriverVolume, new_size: int) -> None:
        """Resize the image (also while hosts have it open)."""
        base.validate_new_size(volume, new_size)
        name = NAME_FORMAT % volume.id
        with self._image(name) as image:
            try:
                image.resize(new_size * units.Gi)
            except self._rbd.Error as exc:
                raise exception.VolumeBackendAPIException(
                    data="cannot resize image %s: %s" % (name, exc)) from exc
        self._set_size(name, new_size * units.Gi)
        LOG.info("Extended image %(name)s to %(size)s GiB",
                 {"name": name, "size": new_size})

    def retype(self, volume: base.DriverVolume, multiattach: bool) -> None:
        """Drop or add the lock-based features as the volume becomes shared
        or not (journaling is never added back: new images lack it too);
        the object map of an image that gains one is rebuilt."""
        name = NAME_FORMAT % volume.id
        with self._image(name) as image:
            have = image.features()
            try:
                if multiattach:
                    drop = have & _lock_features(self._rbd)
                    if drop:
                        image.update_features(drop, False)
                else:
                    add = (_features(self._rbd, False)
                           & ~have & _lock_features(self._rbd))
                    if add:
                        image.update_features(add, True)
                    if add & self._rbd.RBD_FEATURE_OBJECT_MAP:
                        image.rebuild_object_map()
            except self._rbd.Error as exc:
                raise exception.VolumeBackendAPIException(
                    data="cannot change the features of image %s: %s"
                    % (name, exc)) from exc
        LOG.info("Image %(name)s now %(what)s",
                 {"name": name, "what": "shared (no exclusive-lock)"
                  if multiattach else "single-host (exclusive-lock)"})

    def _image(self, name: str) -> Any:
        try:
            return self._rbd.Image(self._ioctx, name)
        except self._rbd.ImageNotFound as exc:
            raise exception.VolumeNotFound(volume_id=name) from exc
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open image %s: %s" % (name, exc)) from exc

    def _set_size(self, name: str, size: int | None) -> None:
        with self._sizes_lock:
            if size is None:
                self._sizes.pop(name, None)
            else:
                self._sizes[name] = size

    # -- connections ------------------------------------------------------
    def initialize_connection(self, volume: base.DriverVolume,
                              connector: dict[str, Any]) -> dict[str, Any]:
        """Cinder's ``rbd`` connection: pool/image, monitors, the cephx
        user (its key stays on the host), cluster name."""
        hosts, ports = self._monitors
        return {
            "driver_volume_type": "rbd",
            "data": {
                "name": "%s/%s" % (self.conf.rbd_pool,
                                   NAME_FORMAT % volume.id),
                "hosts": list(hosts),
                "ports": list(ports),
                "cluster_name": self.conf.rbd_cluster_name,
                "auth_enabled": True,
                "auth_username": self.conf.rbd_user,
                "secret_type": "ceph",
                "secret_uuid": self.conf.rbd_secret_uuid,
                "volume_id": volume.id,
                "discard": True,
            },
        }

    def terminate_connection(self, volume: base.DriverVolume,
                             connector: dict[str, Any] | None) -> None:
        """Do nothing: an RBD image has no per-host export to remove."""

    # -- capabilities -----------------------------------------------------
    def get_volume_stats(self, refresh: bool = False) -> dict[str, Any]:
        """The pool's capacity from the cluster (``df``): free is what the
        pool can still store, total that plus what it stores."""
        if refresh or self._stats is None:
            self._stats = self._collect_stats()
        return self._stats

    def _collect_stats(self) -> dict[str, Any]:
        with self._sizes_lock:
            provisioned = sum(self._sizes.values())
            count = len(self._sizes)
        try:
            pool = next(p["stats"] for p in self._mon_command("df")["pools"]
                        if p["name"] == self.conf.rbd_pool)
            free, stored = pool["max_avail"], pool.get("stored", 0)
            state = "up"
        except (exception.VolumeBackendAPIException, StopIteration,
                KeyError, self._rados.Error) as exc:
            LOG.warning("Backend %(name)s is down: %(err)s",
                        {"name": self.backend_name, "err": exc})
            free = stored = 0
            state = "down"
        return self._capacity_report(
            free + stored, free, provisioned, count, state,
            multiattach=self.conf.rbd_multiattach,
            online_extend_support=True)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Options for oslo-config-generator (namespace ashlar.drivers.rbd)."""
    return RBDDriver.list_opts()
