"""Backups as RBD images in a Ceph pool (Cinder's Ceph backup driver's
model, on the ``rados``/``rbd`` bindings; nothing shells out).

A backup's pool is its container (``backup_ceph_pool`` for the api's
default container).  Every backup is a snapshot ``backup.<id>.snap.<time>``
of a *base image* ``volume-<volume id>.backup.<id of the chain's first
backup>``, and a metadata key ``ashlar.backup.<id>`` on that image says
what it holds (size, parent, object count, the source snapshot).

* An RBD volume (the source handle carries its librbd image) is
  snapshotted with the same name; a full backup copies the extents the
  snapshot has into a new base image, an incremental one copies only the
  extents changed since the parent's source snapshot (``rbd diff``) into
  the parent's base image.  When the parent's snapshot is gone from the
  source (or its base image from the pool), the backup is a full one into
  a base image of its own.  The source snapshot stays until the backup is
  deleted (the next incremental one diffs from it), as in Cinder.
* Any other volume (a file, iSCSI) is copied whole into a new base image,
  chunk by chunk, zero chunks left sparse.
* A restore reads the base image at the backup's snapshot: into an RBD
  volume, the extents the backup has plus those the volume has (so that
  what the backup lacks reads as zeros); into any other volume, all of it.
* A delete removes the source snapshot, the base image's snapshot and key,
  and the base image once no backup is left on it.
"""

import contextlib
import json
import re
import threading
import time
from typing import TYPE_CHECKING
from typing import Any
from typing import Callable
from typing import Iterator
from typing import NamedTuple

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from drivers.backup.base import BackupRef
from drivers.sparse_copy import is_zero
from services.agent import volume_io

if TYPE_CHECKING:
    import rados

LOG = logging.getLogger(__name__)

SERVICE = "drivers.backup.ceph"
#: A chain's base image: volume id, id of its first backup (Cinder's name).
BASE_FORMAT = "volume-%s.backup.%s"
#: A backup's snapshot, on the source image and on the base image.
SNAP_FORMAT = "backup.%s.snap.%s"
#: Snapshots a backup made (the RBD volume driver removes them with the
#: volume, as Cinder's does).
SNAP_RE = re.compile(r"^backup\.([a-z0-9\-]+?)\.snap\.(.+)$")
#: The base image's metadata key of a backup on it.
META_FORMAT = "ashlar.backup.%s"
#: Seconds between questions whether a backup being written was deleted.
CANCEL_POLL = 1.0
#: What a source's connection ``data`` a delete needs to find it again.
SOURCE_KEYS = ("name", "hosts", "ports", "cluster_name", "auth_username")


class PoolMissing(exception.InvalidBackup):
    """The backup's pool does not exist."""


class Found(NamedTuple):
    """A backup in its pool: its base image, snapshot and record."""

    base: str
    snap: str
    meta: dict[str, Any]


Extent = tuple[int, int]


def is_backup_snap(name: str) -> bool:
    """Whether ``name`` is a snapshot a backup made."""
    return SNAP_RE.match(name) is not None


def _merge(extents: list[Extent]) -> list[Extent]:
    merged: list[list[int]] = []
    for offset, length in sorted(extents):
        if merged and offset <= merged[-1][0] + merged[-1][1]:
            end = max(merged[-1][0] + merged[-1][1], offset + length)
            merged[-1][1] = end - merged[-1][0]
        else:
            merged.append([offset, length])
    return [(offset, length) for offset, length in merged]


def _extents(image: Any, size: int, from_snap: str | None
             ) -> tuple[list[Extent], list[Extent]]:
    """The (data, zeroed) extents of ``image`` (at its snapshot) in
    ``[0, size)`` changed since ``from_snap`` (all data when None)."""
    data: list[Extent] = []
    zeroed: list[Extent] = []

    def collect(offset: int, length: int, exists: bool) -> int:
        (data if exists else zeroed).append((offset, length))
        return 0
    image.diff_iterate(0, size, from_snap, collect)
    return _merge(data), _merge(zeroed)


class CephBackupDriver:
    """Backups as snapshots of base images in a Ceph pool."""

    SERVICE = SERVICE
    SNAPSHOTS_SOURCE = True

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.chunk = conf.backup_ceph_chunk_size
        self._client: "rados.Rados | None" = None
        self._lock = threading.Lock()

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> "CephBackupDriver":
        return cls(conf)

    # -- the cluster ----------------------------------------------------------
    def _bindings(self) -> tuple[Any, Any]:
        try:
            import rados
            import rbd
        except ImportError as exc:
            raise exception.InvalidBackup(
                reason="the rados and rbd python bindings are not installed "
                "on the backup service: %s" % exc) from exc
        return rados, rbd

    def _cluster(self) -> "rados.Rados":
        """The backup cluster's connection, made on first use."""
        rados, _rbd = self._bindings()
        with self._lock:
            if self._client is None:
                conf = self.conf
                client = rados.Rados(
                    rados_id=conf.backup_ceph_user,
                    conffile=conf.backup_ceph_conf,
                    conf=({"keyring": conf.backup_ceph_keyring}
                          if conf.backup_ceph_keyring else {}))
                try:
                    client.connect(timeout=conf.backup_ceph_connect_timeout)
                except rados.Error as exc:
                    client.shutdown()
                    raise exception.InvalidBackup(
                        reason="cannot reach the backup cluster as %s: %s"
                        % (conf.backup_ceph_user, exc)) from exc
                self._client = client
            return self._client

    def pool(self, container: str | None) -> str:
        """The pool of a backup in ``container``."""
        if not container or container == self.conf.backup_container:
            return str(self.conf.backup_ceph_pool)
        return container

    @contextlib.contextmanager
    def _ioctx(self, container: str | None) -> Iterator["rados.Ioctx"]:
        """:raises InvalidBackup: the pool does not exist (or is not
        this user's)."""
        rados, _rbd = self._bindings()
        pool = self.pool(container)
        try:
            ioctx = self._cluster().open_ioctx(pool)
        except rados.ObjectNotFound as exc:
            raise PoolMissing(
                reason="the backup pool %s does not exist." % pool) from exc
        except rados.Error as exc:
            raise exception.InvalidBackup(
                reason="cannot open the backup pool %s: %s"
                % (pool, exc)) from exc
        try:
            yield ioctx
        finally:
            ioctx.close()

    def _find(self, ioctx: "rados.Ioctx", ref: BackupRef) -> Found | None:
        """The base image holding ``ref`` (by its metadata key)."""
        _rados, rbd = self._bindings()
        prefix = BASE_FORMAT % (ref.volume_id, "") if ref.volume_id \
            else "volume-"
        for name in rbd.RBD().list(ioctx):
            if not name.startswith(prefix) or ".backup." not in name:
                continue
            try:
                with rbd.Image(ioctx, name, read_only=True) as image:
                    meta = json.loads(image.metadata_get(META_FORMAT
                                                         % ref.id))
            except (KeyError, rbd.ImageNotFound):
                continue
            return Found(name, meta["snap"], meta)
        return None

    # -- backup ---------------------------------------------------------------
    def backup(self, ref: BackupRef, source: Any, size_bytes: int,
               parent: BackupRef | None = None,
               cancelled: Callable[[], bool] | None = None
               ) -> dict[str, Any]:
        """Back up ``source``: by ``rbd diff`` from the parent's snapshot
        when it is a writable RBD handle, else by a full copy.

        :returns: ``object_count``: the chunks written.
        :raises InvalidBackup: the pool is missing, or the copy failed.
        """
        rbd_image = getattr(source, "rbd_image", None)
        with self._ioctx(ref.container) as ioctx:
            if rbd_image is not None and not source.read_only:
                written = self._backup_rbd(ioctx, ref, source, size_bytes,
                                           parent, cancelled)
            else:
                written = self._backup_copy(ioctx, ref, source, size_bytes,
                                            parent, cancelled)
        return {"object_count": written}

    def _backup_rbd(self, ioctx: "rados.Ioctx", ref: BackupRef, source: Any,
                    size: int, parent: BackupRef | None,
                    cancelled: Callable[[], bool] | None) -> int:
        image = source.rbd_image
        found = self._find(ioctx, parent) if parent else None
        have = {snap["name"] for snap in image.list_snaps()}
        if found is not None and found.snap not in have:
            LOG.info("Source snapshot %(snap)s of backup %(parent)s is gone: "
                     "backup %(id)s is a full one",
                     {"snap": found.snap, "parent": parent, "id": ref.id})
            found = None
        snap = SNAP_FORMAT % (ref.id, "%.6f" % time.time())
        base = found.base if found else BASE_FORMAT % (ref.volume_id, ref.id)
        image.create_snap(snap)
        try:
            image.set_snap(snap)
            try:
                data, zeroed = _extents(image, size,
                                        found.snap if found else None)
                written = self._store(
                    ioctx, ref, base, found is None, size, image, data,
                    zeroed, cancelled,
                    {"snap": snap, "size_bytes": size,
                     "parent_id": parent.id if parent else None,
                     "source": {key: source.connection.get(key)
                                for key in SOURCE_KEYS}})
            finally:
                image.set_snap(None)
        except BaseException:
            with contextlib.suppress(Exception):
                image.remove_snap(snap)
            raise
        LOG.info("Backup %(id)s of %(src)s: %(kind)s, %(n)d chunks into "
                 "%(base)s@%(snap)s",
                 {"id": ref.id, "src": source.connection.get("name"),
                  "kind": "incremental" if found else "full", "n": written,
                  "base": base, "snap": snap})
        return written

    def _backup_copy(self, ioctx: "rados.Ioctx", ref: BackupRef, source: Any,
                     size: int, parent: BackupRef | None,
                     cancelled: Callable[[], bool] | None) -> int:
        """A full copy of a volume that is not RBD (as Cinder's)."""
        snap = SNAP_FORMAT % (ref.id, "%.6f" % time.time())
        base = BASE_FORMAT % (ref.volume_id, ref.id)
        written = self._store(ioctx, ref, base, True, size, source,
                              [(0, size)], [], cancelled,
                              {"snap": snap, "size_bytes": size,
                               "parent_id": parent.id if parent else None,
                               "source": None})
        LOG.info("Backup %(id)s of volume %(vol)s: full copy, %(n)d chunks "
                 "into %(base)s@%(snap)s", {"id": ref.id, "n": written,
                                            "vol": ref.volume_id,
                                            "base": base, "snap": snap})
        return written

    def _store(self, ioctx: "rados.Ioctx", ref: BackupRef, base: str,
               create: bool, size: int, source: Any, data: list[Extent],
               zeroed: list[Extent], cancelled: Callable[[], bool] | None,
               meta: dict[str, Any]) -> int:
        """Write ``data`` extents of ``source`` (and zeros over ``zeroed``)
        into the base image (made first when ``create``), then its
        snapshot and key; a base image made here goes on failure."""
        _rados, rbd = self._bindings()
        if create:
            rbd.RBD().create(ioctx, base, size, old_format=False,
                             features=rbd.RBD_FEATURE_LAYERING)
        try:
            with rbd.Image(ioctx, base) as dest:
                if dest.size() < size:
                    dest.resize(size)
                written = self._copy(source, dest, data, zeroed, not create,
                                     cancelled, ref)
                meta["object_count"] = written
                dest.metadata_set(META_FORMAT % ref.id, json.dumps(meta))
                dest.create_snap(meta["snap"])
        except BaseException:
            with contextlib.suppress(Exception):
                if create:
                    rbd.RBD().remove(ioctx, base)
                else:
                    with rbd.Image(ioctx, base) as dest:
                        dest.metadata_remove(META_FORMAT % ref.id)
            raise
        return written

    def _copy(self, source: Any, dest: Any, data: list[Extent],
              zeroed: list[Extent], zeros_count: bool,
              cancelled: Callable[[], bool] | None, ref: BackupRef) -> int:
        """Copy extents in chunks; zero chunks are written only when
        ``zeros_count`` (the base image had data there).

        :returns: the chunks written.
        """
        written = 0
        asked = time.monotonic()
        for offset, length in data:
            for start in range(offset, offset + length, self.chunk):
                # NOTE(ashlar): a question to the database, so once a
                # second at most, not for each chunk of a whole volume.
                if cancelled is not None and \
                        time.monotonic() - asked >= CANCEL_POLL:
                    asked = time.monotonic()
                    if cancelled():
                        raise exception.InvalidBackup(
                            reason="Backup %s was deleted while it was "
                            "written." % ref.id)
                chunk = source.read(start, min(self.chunk,
                                               offset + length - start))
                if zeros_count or not is_zero(chunk):
                    dest.write(chunk, start)
                    written += 1
        for offset, length in zeroed:
            self._zero(dest, offset, length)
        return written

    def _zero(self, dest: Any, offset: int, length: int) -> None:
        for start in range(offset, offset + length, self.chunk):
            dest.write(bytes(min(self.chunk, offset + length - start)),
                       start)

    # -- restore --------------------------------------------------------------
    def restore(self, ref: BackupRef, target: Any) -> int:
        """Write the backup into ``target``: into an RBD volume the
        extents the backup or the volume has, else all of it.

        :returns: the bytes of the backup.
        :raises InvalidBackup: the pool or the backup is missing.
        """
        _rados, rbd = self._bindings()
        with self._ioctx(ref.container) as ioctx:
            found = self._require(ioctx, ref)
            size = int(found.meta["size_bytes"])
            with rbd.Image(ioctx, found.base, snapshot=found.snap,
                           read_only=True) as src:
                dest = getattr(target, "rbd_image", None)
                if dest is not None:
                    have, _ = _extents(src, size, None)
                    old, _ = _extents(dest, min(size, dest.size()), None)
                    ranges = _merge(have + old)
                    for offset, length in ranges:
                        for start in range(offset, offset + length,
                                           self.chunk):
                            dest.write(src.read(start, min(
                                self.chunk, offset + length - start)), start)
                    dest.flush()
                else:
                    for start in range(0, size, self.chunk):
                        target.write(start, src.read(
                            start, min(self.chunk, size - start)))
        LOG.info("Restored backup %(id)s from %(base)s@%(snap)s",
                 {"id": ref.id, "base": found.base, "snap": found.snap})
        return size

    def _require(self, ioctx: "rados.Ioctx", ref: BackupRef) -> Found:
        found = self._find(ioctx, ref)
        if found is None:
            raise exception.InvalidBackup(
                reason="Backup %s is not in pool %s."
                % (ref.id, self.pool(ref.container)))
        return found

    # -- import ---------------------------------------------------------------
    def check_import(self, ref: BackupRef, size_bytes: int,
                     object_count: int | None,
                     parent_id: str | None) -> None:
        """:raises InvalidBackup: the pool has no such backup, or its
        record differs."""
        with self._ioctx(ref.container) as ioctx:
            found = self._require(ioctx, ref)
        for name, have, want in (
                ("size", found.meta.get("size_bytes"), size_bytes),
                ("parent_id", found.meta.get("parent_id"), parent_id),
                ("object_count", found.meta.get("object_count"),
                 object_count)):
            if have != want:
                raise exception.InvalidBackup(
                    reason="Backup %s in pool %s has %s %r, the record %r."
                    % (ref.id, self.pool(ref.container), name, have, want))

    # -- delete ---------------------------------------------------------------
    def delete(self, ref: BackupRef) -> None:
        """Remove the source snapshot, the backup's snapshot and key, and
        the base image once no backup is left on it; a backup (or pool)
        already gone is not an error."""
        try:
            with self._ioctx(ref.container) as ioctx:
                self._delete_in(ioctx, ref)
        except PoolMissing:
            LOG.info("Backup %s: its pool is gone; nothing to delete", ref.id)

    def _delete_in(self, ioctx: "rados.Ioctx", ref: BackupRef) -> None:
        _rados, rbd = self._bindings()
        found = self._find(ioctx, ref)
        if found is None:
            return
        self._drop_source_snap(found)
        with rbd.Image(ioctx, found.base) as image:
            if found.snap in {snap["name"] for snap in image.list_snaps()}:
                image.remove_snap(found.snap)
            image.metadata_remove(META_FORMAT % ref.id)
            left = [key for key, _value in image.metadata_list()
                    if key.startswith(META_FORMAT % "")]
        if not left:
            rbd.RBD().remove(ioctx, found.base)
        LOG.info("Deleted backup %(id)s (%(base)s %(what)s)",
                 {"id": ref.id, "base": found.base,
                  "what": "kept" if left else "removed"})

    def _drop_source_snap(self, found: Found) -> None:
        """Remove the snapshot the backup left on its RBD source, through
        the data path it was read by; a volume gone is not an error."""
        source = found.meta.get("source")
        if not source:
            return
        _rados, rbd = self._bindings()
        attachment = {"id": "backup-delete-%s" % found.snap,
                      "connection_info": dict(source,
                                              driver_volume_type="rbd",
                                              access_mode="rw")}
        try:
            with volume_io.open_volume(self.conf, attachment) as handle:
                handle.rbd_image.remove_snap(found.snap)
        except rbd.ImageNotFound:
            LOG.info("Source snapshot %(snap)s of %(name)s is gone already",
                     {"snap": found.snap, "name": source.get("name")})
