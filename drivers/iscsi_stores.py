"""What the ``iscsi`` driver's LUNs are: files or RBD images.

``iscsi_backing`` picks the store: the file driver's raw files
(:class:`FileStore`) or the RBD driver's images (:class:`RbdStore`).  A
store is that driver itself, which creates, deletes, grows, snapshots and
clones the volumes as it does for its own backend; it adds only
:meth:`lun`, what tgt reads and writes for a volume.
"""

from typing import Any

from oslo_config import cfg

from common import exception
from drivers import file as file_driver
from drivers import rbd as rbd_driver
from drivers import rbd_clones
from drivers import tgtadm

ISCSI_BACKING_OPT = cfg.StrOpt(
    "iscsi_backing", default="file",
    choices=[("file", "Raw files in file_volume_dir, tgt's rdwr backing "
              "store."),
             ("rbd", "RBD images in rbd_pool (rbd_user, rbd_ceph_conf), "
              "tgt's rbd backing store (Debian's tgt-rbd).")],
    help="What the volumes' LUNs are: files (the file driver's options) or "
    "RBD images (the rbd driver's options; tgtd opens them as rbd_user "
    "with rbd_ceph_conf, so that file must lead tgtd to the user's "
    "keyring). Give an rbd-backed backend a pool of its own: every "
    "volume-<id> image in rbd_pool is taken as one of its volumes.")


class FileStore(file_driver.FileDriver):
    """The file driver's volumes, always raw (tgt serves the bytes)."""

    #: Copies go between iscsi backends only (a file backend's qcow2
    #: volume is no LUN).
    STORAGE_PROTOCOL = "iSCSI"
    FIXED_FORMAT = "raw"

    def lun(self, volume_id: str) -> tgtadm.Backing | None:
        """The volume's file, or None when there is none."""
        found = self._find(volume_id)
        return tgtadm.Backing(found[0]) if found is not None else None


class RbdStore(rbd_driver.RBDDriver):
    """The RBD driver's images, opened by tgtd through tgt-rbd.

    Its ``copy_source`` and ``create_volume_from_copy`` are the RBD
    driver's: a volume moves between an rbd backend and an rbd-backed
    iscsi backend of the same cluster as between two rbd backends.
    """

    def lun(self, volume_id: str) -> tgtadm.Backing | None:
        """The volume's image (looked up), or None when there is none."""
        name = rbd_driver.NAME_FORMAT % volume_id
        try:
            with rbd_clones.open_image(self._rbd, self._ioctx, name,
                                       read_only=True):
                pass
        except exception.VolumeNotFound:
            return None
        return tgtadm.Backing(
            "%s/%s" % (self.conf.rbd_pool, name), "rbd",
            "conf=%s;id=%s" % (self.conf.rbd_ceph_conf, self.conf.rbd_user))


Store = FileStore | RbdStore


def build(conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
          host: str) -> Store:
    """The store ``iscsi_backing`` names."""
    if conf.iscsi_backing == "rbd":
        return RbdStore(conf, backend_name, host)
    return FileStore(conf, backend_name, host)


def options() -> tuple[cfg.Opt, ...]:
    """The stores' options: the file driver's (but the format) and the
    RBD driver's, and ``iscsi_backing``."""
    return (ISCSI_BACKING_OPT,
            *(opt for opt in file_driver.FILE_OPTS
              if opt.name != "file_volume_format"),
            *rbd_driver.RBD_OPTS)


def iscsi_stats(stats: dict[str, Any], version: str, fencing: bool,
                up: bool) -> dict[str, Any]:
    """A copy of the store's report as the iscsi backend's."""
    pools = [dict(pool, fencing=fencing, **({} if up else {
        "backend_state": "down"})) for pool in stats["pools"]]
    return dict(stats, storage_protocol="iSCSI", driver_version=version,
                pools=pools)

