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

Snapshots and clones follow Cinder's names too: a snapshot is
``volume-<volume id>@snapshot-<id>``, protected; a volume made from it is a
copy-on-write clone of it.  A clone of a live volume hangs from a hidden
snapshot ``volume-<source id>@volume-<new id>.clone_snap``.  Deleting an
image or a snapshot first flattens the clones that hang from it.  That
machinery is in :mod:`drivers.rbd_clones`.

Existing images are adopted by a rename (:mod:`drivers.rbd_manage`).

A host is fenced by blocklisting its client instances of the image
(:mod:`drivers.rbd_fence`), so pools report ``fencing``.
"""

import contextlib
import json
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import units

from common import exception
from drivers import base
from drivers import rbd_clones
from drivers import rbd_fence
from drivers import rbd_manage
from drivers.backup import ceph as ceph_backup

if TYPE_CHECKING:
    # NOTE(ashlar): the bindings are optional: do_setup imports them.
    import rados
    import rbd

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
    cfg.BoolOpt("rbd_flatten_volume_from_snapshot", default=False,
                help="Flatten volumes created from snapshots, so that they "
                "do not depend on the snapshot."),
    cfg.IntOpt("rbd_max_clone_depth", default=5, min=0,
               help="Longest chain of clones (a clone of a clone ...) that a "
               "new clone may end; a clone that would be deeper is "
               "flattened. 0 flattens every clone. Lowering it does not "
               "change existing volumes."),
    cfg.IntOpt("rbd_fence_expiry", default=86400, min=60,
               help="Seconds a fenced host's client instances stay on the "
               "OSD blocklist. Past that, an instance that was only paused "
               "could write again: stop the fenced host's instances (or "
               "reboot it) within this time."),
]

#: Image name of a volume; Cinder's, so images move between the two.
NAME_FORMAT = "volume-%s"
#: Snapshot name of a volume snapshot (on the volume's image); Cinder's.
SNAP_FORMAT = "snapshot-%s"
#: Suffix of the hidden snapshot ``volume-<clone id>.clone_snap`` that a
#: clone of a live volume hangs from; Cinder's.
CLONE_SNAP_SUFFIX = ".clone_snap"


def _features(rbd_mod: types.ModuleType, multiattach: bool) -> int:
    """The features of a new image: without the lock-based ones for a
    shared volume."""
    features = rbd_mod.RBD_FEATURE_LAYERING | rbd_mod.RBD_FEATURE_DEEP_FLATTEN
    if not multiattach:
        features |= (rbd_mod.RBD_FEATURE_EXCLUSIVE_LOCK
                     | rbd_mod.RBD_FEATURE_OBJECT_MAP
                     | rbd_mod.RBD_FEATURE_FAST_DIFF)
    return features


def _lock_features(rbd_mod: types.ModuleType) -> int:
    """The features a shared image must not have (librbd changes them
    together in one call, dependencies included)."""
    return (rbd_mod.RBD_FEATURE_EXCLUSIVE_LOCK | rbd_mod.RBD_FEATURE_OBJECT_MAP
            | rbd_mod.RBD_FEATURE_FAST_DIFF | rbd_mod.RBD_FEATURE_JOURNALING)


class RBDDriver(rbd_manage.RBDManage, base.VolumeDriver):
    """Volumes as RBD images in ``rbd_pool``; existing images are managed
    as :mod:`drivers.rbd_manage` says."""

    VERSION = "1.0.0"
    STORAGE_PROTOCOL = "ceph"
    FENCING = True
    driver_opts = tuple(RBD_OPTS)

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str) -> None:
        super().__init__(conf, backend_name, host)
        #: The bindings, the cluster connection, and the clones and the
        #: fencer on it: set by ``do_setup``.
        self._rados: types.ModuleType
        self._rbd: types.ModuleType
        self._client: "rados.Rados"
        self._clones: rbd_clones.Clones
        self._fencer: rbd_fence.Fencer
        #: The pool's I/O context, None until ``do_setup`` opened it.
        self._ioctx: "rados.Ioctx | None" = None
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
        self._clones = rbd_clones.Clones(rbd, rados, client, self._ioctx,
                                         self.conf.rbd_pool,
                                         self._remove_image)
        self._fencer = rbd_fence.Fencer(
            rados, rbd, client, self._ioctx, self.conf.rbd_pool,
            self.conf.rbd_fence_expiry, self.conf.rados_connect_timeout)
        self._monitors = self._read_monitors()
        self._sizes = self._read_sizes()
        LOG.info("RBD backend %(name)s: pool %(pool)s, %(count)d volumes, "
                 "monitors %(mons)s",
                 {"name": self.backend_name, "pool": self.conf.rbd_pool,
                  "count": len(self._sizes), "mons": self._monitors[0]})

    def close(self) -> None:
        """Close the pool and shut the cluster connection down (its
        threads and sockets go with it)."""
        ioctx, self._ioctx = self._ioctx, None
        if ioctx is not None:
            ioctx.close()
            self._client.shutdown()

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
        """Create the image, with the features its sharing allows; adopt
        the volume's image if it exists already."""
        base.validate_size(volume.size)
        adopted = self._adopt(volume)
        if adopted is not None:
            return adopted
        name = NAME_FORMAT % volume.id
        size = volume.size * units.Gi
        try:
            self._rbd.RBD().create(
                self._ioctx, name, size, order=self._order(), old_format=False,
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
        return self._location(volume)

    def delete_volume(self, volume: base.DriverVolume) -> None:
        """Remove the image; one that is already gone is not an error.

        The clones hanging from its hidden clone snapshots are flattened
        and those snapshots removed first; other snapshots make it fail.
        The hidden snapshot it hangs from itself, if any, goes after it.
        """
        name = NAME_FORMAT % volume.id
        try:
            image = self._rbd.Image(self._ioctx, name)
        except self._rbd.ImageNotFound:
            image = None
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open image %s: %s" % (name, exc)) from exc
        parent = None
        if image is not None:
            with image, self._failing("delete image %s" % name):
                self._drop_clone_snaps(image, name)
                parent = self._clones.parent(image)
        self._remove_image(name)
        if parent is not None and parent[2] == name + CLONE_SNAP_SUFFIX:
            self._clones.drop_snap_quietly(*parent)

    def _remove_image(self, name: str) -> None:
        try:
            self._rbd.RBD().remove(self._ioctx, name)
        except self._rbd.ImageNotFound:
            LOG.info("Image %s not found; nothing to delete", name)
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot delete image %s: %s" % (name, exc)) from exc
        self._set_size(name, None)
        LOG.info("Deleted image %s", name)

    def _drop_clone_snaps(self, image: "rbd.Image", name: str) -> None:
        """Remove the image's hidden clone snapshots (flattening their
        clones) and the snapshots Ceph backups left on it (as Cinder's
        driver does: the backups stay whole in their pool), refusing while
        it has other snapshots."""
        snaps = [snap["name"] for snap in image.list_snaps()]
        kept = [snap for snap in snaps
                if not snap.endswith(CLONE_SNAP_SUFFIX)
                and not ceph_backup.is_backup_snap(snap)]
        if kept:
            raise exception.VolumeBackendAPIException(
                data="image %s still has snapshots %s" % (name, kept))
        for snap in snaps:
            self._clones.remove_snap(image, name, snap)

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

    # -- snapshots and clones ---------------------------------------------
    def create_snapshot(self, snapshot: base.DriverSnapshot
                        ) -> dict[str, Any]:
        """Snapshot the volume's image as ``snapshot-<id>``, protected so
        that volumes can be cloned from it (also while it is attached)."""
        name = NAME_FORMAT % snapshot.volume.id
        with self._image(name) as image:
            self._clones.protected_snap(image, name,
                                        SNAP_FORMAT % snapshot.id)
        LOG.info("Created snapshot %(name)s@%(snap)s",
                 {"name": name, "snap": SNAP_FORMAT % snapshot.id})
        return {}

    def delete_snapshot(self, snapshot: base.DriverSnapshot) -> None:
        """Flatten the clones made from the snapshot, then unprotect and
        remove it; a snapshot or image already gone is not an error."""
        name = NAME_FORMAT % snapshot.volume.id
        snap = SNAP_FORMAT % snapshot.id
        try:
            image = self._image(name)
        except exception.VolumeNotFound:
            LOG.info("Image %s not found; no snapshot to delete", name)
            return
        with image:
            removed = self._clones.remove_snap(image, name, snap)
        LOG.info("%(what)s snapshot %(name)s@%(snap)s",
                 {"what": "Deleted" if removed else "No", "name": name,
                  "snap": snap})

    def create_volume_from_snapshot(self, volume: base.DriverVolume,
                                    snapshot: base.DriverSnapshot
                                    ) -> dict[str, Any]:
        """Clone the snapshot, grown to the volume's size; flattened when
        ``rbd_flatten_volume_from_snapshot`` is set or the chain of clones
        would pass ``rbd_max_clone_depth``.  The volume's image that exists
        already is adopted."""
        base.validate_clone_size(volume, snapshot.size)
        adopted = self._adopt(volume)
        if adopted is not None:
            return adopted
        parent = NAME_FORMAT % snapshot.volume.id
        snap = SNAP_FORMAT % snapshot.id
        try:
            with self._rbd.Image(self._ioctx, parent, snapshot=snap,
                                 read_only=True) as image:
                depth = self._clones.clone_depth(image)
        except self._rbd.ImageNotFound as exc:
            raise exception.SnapshotNotFound(snapshot_id=snapshot.id) from exc
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open %s@%s: %s" % (parent, snap, exc)) from exc
        self._clone(volume, parent, snap, flatten=(
            self.conf.rbd_flatten_volume_from_snapshot
            or depth >= self.conf.rbd_max_clone_depth))
        return self._location(volume)

    def create_cloned_volume(self, volume: base.DriverVolume,
                             source: base.DriverVolume) -> dict[str, Any]:
        """Clone the source through the hidden snapshot
        ``volume-<new id>.clone_snap``, grown to the volume's size.  A clone
        that would pass ``rbd_max_clone_depth`` is flattened and the hidden
        snapshot removed again.  The volume's image (or hidden snapshot)
        that exists already is adopted."""
        base.validate_clone_size(volume, source.size)
        adopted = self._adopt(volume)
        if adopted is not None:
            return adopted
        parent = NAME_FORMAT % source.id
        snap = NAME_FORMAT % volume.id + CLONE_SNAP_SUFFIX
        with self._image(parent) as image:
            with self._failing("inspect image %s" % parent):
                depth = self._clones.clone_depth(image)
            self._clones.protected_snap(image, parent, snap, adopt=True)
        flatten = depth >= self.conf.rbd_max_clone_depth
        try:
            self._clone(volume, parent, snap, flatten)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._clones.drop_snap_quietly(self.conf.rbd_pool, parent,
                                               snap)
        if flatten:
            self._clones.drop_snap_quietly(self.conf.rbd_pool, parent, snap)
        return self._location(volume)

    def copy_source(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The image, by cluster and pool, which an RBD backend of the
        same cluster whose user may read this pool copies; and its
        ``connection``, which any other backend reads."""
        name = NAME_FORMAT % volume.id
        with self._image(name):
            pass
        return {"protocol": self.STORAGE_PROTOCOL,
                "fsid": self._client.get_fsid(),
                "pool": self.conf.rbd_pool, "image": name,
                "connection": self.copy_connection(volume)}

    def create_volume_from_copy(self, volume: base.DriverVolume,
                                source: dict[str, Any]) -> dict[str, Any]:
        """Copy another pool's image of this volume, of this cluster, into
        a flat image here (``rbd cp``: no parent, no snapshots); else the
        generic copy."""
        name = NAME_FORMAT % volume.id
        if (source.get("protocol") != self.STORAGE_PROTOCOL
                or source.get("fsid") != self._client.get_fsid()
                or source.get("image") != name
                or source.get("pool") in (None, self.conf.rbd_pool)):
            return super().create_volume_from_copy(volume, source)
        with self._failing("read pool %s" % source["pool"]):
            ioctx = self._client.open_ioctx(source["pool"])
        try:
            with rbd_clones.open_image(self._rbd, ioctx, name,
                                       read_only=True) as image:
                self._copy_image(image, name, volume.multiattach)
        finally:
            ioctx.close()
        self._set_size(name, volume.size * units.Gi)
        LOG.info("Copied %(pool)s/%(name)s here (multiattach %(ma)s)",
                 {"pool": source["pool"], "name": name,
                  "ma": volume.multiattach})
        return self._location(volume)

    def _write_copy(self, volume: base.DriverVolume,
                    fill: Callable[[base.Writer], None]) -> dict[str, Any]:
        """A new image (sparse: only what ``fill`` writes is allocated);
        removed again when ``fill`` fails."""
        update = self.create_volume(volume)
        name = NAME_FORMAT % volume.id
        try:
            with rbd_clones.open_image(self._rbd, self._ioctx, name) as image:
                fill(lambda offset, data: image.write(data, offset))
                image.flush()
        except Exception:
            with excutils.save_and_reraise_exception():
                self._remove_image(name)
        return update

    def _copy_image(self, image: "rbd.Image", name: str,
                    multiattach: bool) -> None:
        """Copy an open image of another pool here as ``name``; a partial
        copy is removed, an image already there is left alone."""
        try:
            image.copy(self._ioctx, name, features=_features(
                self._rbd, multiattach), order=self._order())
        except self._rbd.ImageExists as exc:
            raise exception.VolumeBackendAPIException(
                data="image %s already exists" % name) from exc
        except self._rbd.Error as exc:
            self._remove_image(name)
            raise exception.VolumeBackendAPIException(
                data="cannot copy image %s: %s" % (name, exc)) from exc

    def revert_to_snapshot(self, volume: base.DriverVolume,
                           snapshot: base.DriverSnapshot) -> None:
        """Roll the image back to the snapshot, then grow it back to the
        volume's size."""
        name = NAME_FORMAT % volume.id
        snap = SNAP_FORMAT % snapshot.id
        with self._image(name) as image, self._failing(
                "revert image %s to %s" % (name, snap)):
            if not image.snap_exists(snap):
                raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
            image.rollback_to_snap(snap)
            if image.size() < volume.size * units.Gi:
                image.resize(volume.size * units.Gi)
            self._set_size(name, image.size())
        LOG.info("Reverted image %(name)s to %(snap)s",
                 {"name": name, "snap": snap})

    def _clone(self, volume: base.DriverVolume, parent: str, snap: str,
               flatten: bool) -> None:
        """Clone ``parent@snap`` as the volume's image, flatten it if asked
        and grow it to the volume's size; remove it again on failure."""
        name = NAME_FORMAT % volume.id
        self._clones.clone(
            parent, snap, name, volume.size * units.Gi,
            features=_features(self._rbd, volume.multiattach),
            order=self._order(), flatten=flatten)
        self._set_size(name, volume.size * units.Gi)
        LOG.info("Cloned %(parent)s@%(snap)s as %(name)s of %(size)s GiB "
                 "(flattened %(flat)s, multiattach %(ma)s)",
                 {"parent": parent, "snap": snap, "name": name,
                  "size": volume.size, "flat": flatten,
                  "ma": volume.multiattach})

    def _adopt(self, volume: base.DriverVolume) -> dict[str, Any] | None:
        """The model update of the volume's image if it exists already (a
        create resumed after its node died between making the image and
        saying so), grown to the volume's size; None when it does not.

        NOTE(ashlar): a clone made before the node died may not be
        flattened as asked; it stays a clone, which reads the same.
        """
        name = NAME_FORMAT % volume.id
        try:
            image = self._rbd.Image(self._ioctx, name)
        except self._rbd.ImageNotFound:
            return None
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open image %s: %s" % (name, exc)) from exc
        with image, self._failing("adopt image %s" % name):
            if image.size() < volume.size * units.Gi:
                image.resize(volume.size * units.Gi)
            self._set_size(name, image.size())
        LOG.info("Image %(pool)s/%(name)s exists; adopting it",
                 {"pool": self.conf.rbd_pool, "name": name})
        return self._location(volume)

    def volume_locations(self) -> dict[str, str | None]:
        """This pool's volume images, by volume id."""
        prefix = NAME_FORMAT % ""
        with self._failing("list pool %s" % self.conf.rbd_pool):
            names = self._rbd.RBD().list(self._ioctx)
        return {name[len(prefix):]: "%s/%s" % (self.conf.rbd_pool, name)
                for name in names if name.startswith(prefix)}

    def _failing(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Turn librbd errors into VolumeBackendAPIException."""
        return rbd_clones.failing(self._rbd, what)

    def _order(self) -> int:
        """log2 of the object size of new images."""
        return (self.conf.rbd_store_chunk_size * units.Mi).bit_length() - 1

    def _image(self, name: str) -> "rbd.Image":
        return rbd_clones.open_image(self._rbd, self._ioctx, name)

    def _location(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The model update of a made image: ``provider_location`` names
        it."""
        return {"provider_location": "%s/%s" % (self.conf.rbd_pool,
                                                NAME_FORMAT % volume.id)}

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

    # -- fencing ----------------------------------------------------------
    def fence(self, volume: base.DriverVolume,
              target: base.FenceTarget) -> list[str]:
        """Blocklist the host's client instances of the image; return once
        every OSD refuses them (see :mod:`drivers.rbd_fence`)."""
        try:
            return self._fencer.fence(NAME_FORMAT % volume.id, target)
        except self._rados.Error as exc:
            raise exception.FencingFailed(what="fence %s" % target.host,
                                          reason=str(exc)) from exc

    def unfence(self, volume: base.DriverVolume, clients: list[str]) -> None:
        """Take the instances a fence blocklisted off the blocklist."""
        try:
            self._fencer.unfence(clients)
        except self._rados.Error as exc:
            raise exception.FencingFailed(what="lift a fence",
                                          reason=str(exc)) from exc

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
            online_extend_support=True,
            snapshot_support=True,
            revert_to_snapshot_support=True)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Options for oslo-config-generator (namespace ashlar.drivers.rbd)."""
    return RBDDriver.list_opts()
