"""File backend: each volume is a sparse file in one local directory.

A volume is ``<file_volume_dir>/volume-<id>.<format>``, where the format is
``raw`` (a sparse file the size of the volume) or ``qcow2`` (a minimal qcow2
v3 image, written by :mod:`drivers.qcow2` without qemu-img).  The suffix
records the format, so volumes keep theirs when ``file_volume_format``
changes, and a raw volume's content is never probed.  Hosts reach the
files through os-brick's ``local`` connector.

A snapshot is ``<file_volume_dir>/snapshot-<id>.<format>``, a whole copy of
its volume in the volume's format; volumes made from snapshots or other
volumes are whole copies too.  Copies are reflinks where the file system
shares blocks (``FICLONE``: btrfs, XFS), else sparse copies that keep holes
(:mod:`drivers.sparse_copy`).
"""

import contextlib
import os
import re
import tempfile
from collections.abc import Callable
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import units

from common import exception
from drivers import base
from drivers import file_manage
from drivers import qcow2
from drivers import sparse_copy

LOG = logging.getLogger(__name__)

FILE_OPTS = [
    cfg.StrOpt(
        "file_volume_dir",
        default="$state_path/volumes",
        help="Directory that holds the volume files.",
    ),
    cfg.StrOpt(
        "file_volume_format",
        default="raw",
        choices=[
            ("raw", "Sparse raw files; several hosts may open one at once."),
            ("qcow2", ("qcow2 v3 images; one writer locks an image, so "
                       "volumes are never multiattach.")),
        ],
        help="Format of new volumes.",
    ),
    cfg.BoolOpt(
        "file_multiattach",
        default=True,
        help="Report raw volumes as multiattach capable. Set to False to "
        "refuse shared volumes; qcow2 volumes never are.",
    ),
]

_NAME_RE = re.compile(
    r"^(?P<kind>volume|snapshot)-(?P<id>[A-Za-z0-9][A-Za-z0-9_-]{0,127})"
    r"\.(?P<fmt>raw|qcow2)$")
_FORMATS = ("raw", "qcow2")
_TMP_PREFIX = ".volume-"
_TMP_SUFFIX = ".tmp"
# NOTE(ashlar): the service user and its group (the hypervisor's, on a
# compute host) read and write volumes; nobody else.
_FILE_MODE = 0o660


class FileDriver(file_manage.FileManage, base.VolumeDriver):
    """Volumes as sparse files under ``file_volume_dir``; existing files
    are managed as :mod:`drivers.file_manage` says."""

    VERSION = "1.0.0"
    STORAGE_PROTOCOL = "local"
    driver_opts = tuple(FILE_OPTS)
    #: The format of new volumes when a subclass fixes it (then it need
    #: not register ``file_volume_format``); None: that option.
    FIXED_FORMAT: str | None = None
    name_re = _NAME_RE

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str) -> None:
        super().__init__(conf, backend_name, host)
        self.volume_dir: str = conf.file_volume_dir
        self.volume_format: str = (self.FIXED_FORMAT
                                   or conf.file_volume_format)
        self._stats: dict[str, Any] | None = None

    def do_setup(self) -> None:
        """Create the volume directory and drop half-created files."""
        try:
            os.makedirs(self.volume_dir, exist_ok=True)
            self._remove_partial_files()
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot prepare {self.volume_dir}: {exc}") from exc

    def check_for_setup_error(self) -> None:
        """Check that the volume directory is a writable directory."""
        if not (os.path.isdir(self.volume_dir)
                and os.access(self.volume_dir, os.W_OK | os.X_OK)):
            raise exception.DriverNotInitialized(
                f"Volume directory {self.volume_dir} is not a writable "
                f"directory.")

    def get_volume_stats(self, refresh: bool = False) -> dict[str, Any]:
        """Report capacity from the file system holding the directory.

        Total and free capacity come from ``statvfs``; allocated and
        provisioned capacity are the virtual sizes of the volume files.
        """
        if refresh or self._stats is None:
            self._stats = self._collect_stats()
        return self._stats

    def create_volume(self, volume: base.DriverVolume) -> dict[str, Any]:
        """Create a volume file in ``file_volume_format``.

        The file is written under a hidden temporary name and hard-linked
        into place, which fails rather than replaces an existing volume; a
        volume's file that exists already (in either format) is adopted.

        :raises InvalidInput: Bad size or id (a file name needs 1-128
            letters, digits, ``-`` or ``_``).
        """
        base.validate_size(volume.size)
        existing = self._find(volume.id)
        if existing is not None:
            return _adopted(volume.id, existing[0])
        path = self._path(volume.id, self.volume_format)
        size_bytes = volume.size * units.Gi
        self._write_atomically(
            path, lambda fd: _WRITERS[self.volume_format](fd, size_bytes))
        LOG.info("Created %(fmt)s volume %(id)s of %(size)s GiB at %(path)s",
                 {"fmt": self.volume_format, "id": volume.id,
                  "size": volume.size, "path": path})
        return {"provider_location": path}

    def delete_volume(self, volume: base.DriverVolume) -> None:
        """Remove the volume's file, if any."""
        found = self._find(volume.id)
        if found is None:
            LOG.info("Volume %(id)s has no file; nothing to delete",
                     {"id": volume.id})
            return
        if _unlink(found[0]):
            LOG.info("Deleted volume %(id)s", {"id": volume.id})

    def extend_volume(self, volume: base.DriverVolume, new_size: int) -> None:
        """Grow the file (raw) or the image's virtual size (qcow2).

        A qcow2 image grows within the clusters its L1 table already holds
        (4 TiB per cluster); beyond that the call fails.
        """
        base.validate_new_size(volume, new_size)
        path, fmt = self._require(volume.id)
        try:
            with open(path, "r+b") as image:
                _EXTENDERS[fmt](image.fileno(), path, new_size * units.Gi)
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot extend {path}: {exc}") from exc
        LOG.info("Extended volume %(id)s to %(size)s GiB",
                 {"id": volume.id, "size": new_size})

    # -- snapshots and clones ---------------------------------------------
    def create_snapshot(self, snapshot: base.DriverSnapshot
                        ) -> dict[str, Any]:
        """Copy the volume's file to ``snapshot-<id>.<format>``.

        NOTE(ashlar): a reflink is instantaneous; a sparse copy of a volume
        that a host writes meanwhile is not a point in time, no more than
        any snapshot taken without the guest's help is consistent.
        """
        existing = self._find(snapshot.id, "snapshot")
        if existing is not None:
            raise exception.VolumeBackendAPIException(
                data=f"snapshot {snapshot.id} already exists at "
                f"{existing[0]}")
        source, fmt = self._require(snapshot.volume.id)
        path = self._path(snapshot.id, fmt, "snapshot")
        self._copy_atomically(source, path, fmt)
        LOG.info("Created snapshot %(id)s of volume %(vol)s at %(path)s",
                 {"id": snapshot.id, "vol": snapshot.volume.id,
                  "path": path})
        return {"provider_location": path}

    def delete_snapshot(self, snapshot: base.DriverSnapshot) -> None:
        """Remove the snapshot's file, if any (volumes made from it are
        copies of their own)."""
        found = self._find(snapshot.id, "snapshot")
        if found is None:
            LOG.info("Snapshot %(id)s has no file; nothing to delete",
                     {"id": snapshot.id})
            return
        if _unlink(found[0]):
            LOG.info("Deleted snapshot %(id)s", {"id": snapshot.id})

    def create_volume_from_snapshot(self, volume: base.DriverVolume,
                                    snapshot: base.DriverSnapshot
                                    ) -> dict[str, Any]:
        """Copy the snapshot's file to a new volume in its format."""
        base.validate_clone_size(volume, snapshot.size)
        found = self._find(snapshot.id, "snapshot")
        if found is None:
            raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
        return self._create_copy(volume, *found, adopt=True)

    def create_cloned_volume(self, volume: base.DriverVolume,
                             source: base.DriverVolume) -> dict[str, Any]:
        """Copy the source volume's file to a new volume in its format.

        NOTE(ashlar): as for create_snapshot, only a reflink copies an
        attached volume at one point in time.
        """
        base.validate_clone_size(volume, source.size)
        return self._create_copy(volume, *self._require(source.id),
                                 adopt=True)

    def copy_source(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The volume's file, which another backend of this kind that
        sees it (on this host, or sharing the folder) copies; and its
        ``connection``, which any other backend reads."""
        path, fmt = self._require(volume.id)
        return {"protocol": self.STORAGE_PROTOCOL, "path": path,
                "format": fmt, "connection": self.copy_connection(volume)}

    def create_volume_from_copy(self, volume: base.DriverVolume,
                                source: dict[str, Any]) -> dict[str, Any]:
        """Copy the file of this volume another backend of this kind
        gives, if this host sees it; else the generic copy (raw)."""
        path, fmt = source.get("path") or "", source.get("format")
        if (source.get("protocol") != self.STORAGE_PROTOCOL
                or fmt not in _FORMATS or not os.path.isfile(path)
                or os.path.basename(path) != f"volume-{volume.id}.{fmt}"):
            return super().create_volume_from_copy(volume, source)
        return self._create_copy(volume, path, fmt)

    def _write_copy(self, volume: base.DriverVolume,
                    fill: Callable[[base.Writer], None]) -> dict[str, Any]:
        """A raw sparse file (whatever ``file_volume_format``) that
        ``fill`` writes before it is linked into place."""
        path = self._path(volume.id, "raw")

        def write_file(fd: int) -> None:
            os.ftruncate(fd, volume.size * units.Gi)
            fill(lambda offset, data: sparse_copy.write_all(
                lambda at, view: os.pwrite(fd, view, at), offset, data,
                "the file"))
        self._write_atomically(path, write_file)
        return {"provider_location": path}

    def revert_to_snapshot(self, volume: base.DriverVolume,
                           snapshot: base.DriverSnapshot) -> None:
        """Replace the volume's file by a copy of the snapshot's, grown to
        ``volume.size``, in one rename."""
        path, fmt = self._require(volume.id)
        found = self._find(snapshot.id, "snapshot")
        if found is None:
            raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
        if found[1] != fmt:
            raise exception.VolumeBackendAPIException(
                data=f"snapshot {snapshot.id} is {found[1]}, volume "
                f"{volume.id} is {fmt}")
        self._copy_atomically(found[0], path, fmt, volume.size * units.Gi,
                              replace=True)
        LOG.info("Reverted volume %(id)s to snapshot %(snap)s",
                 {"id": volume.id, "snap": snapshot.id})

    def _create_copy(self, volume: base.DriverVolume, source: str,
                     fmt: str, adopt: bool = False) -> dict[str, Any]:
        """Make volume ``volume`` a copy of the file ``source``, grown to
        its size; a raw copy stays raw, so it may be shared.  A volume's
        file that exists already is adopted when ``adopt`` (a resumed
        create), else refused (a stale copy a move left here).

        NOTE(ashlar): a qcow2 copy is whole too; a qcow2 overlay on a
        backing file would be cheaper, once chains are tracked.
        """
        existing = self._find(volume.id)
        if existing is not None and adopt:
            return _adopted(volume.id, existing[0])
        if existing is not None:
            raise exception.VolumeBackendAPIException(
                data=f"volume {volume.id} already exists at {existing[0]}")
        if volume.multiattach and fmt != "raw":
            raise exception.VolumeBackendAPIException(
                data=f"a copy of {source} would be {fmt}, which cannot be "
                f"shared, but volume {volume.id} is multiattach")
        path = self._path(volume.id, fmt)
        self._copy_atomically(source, path, fmt, volume.size * units.Gi)
        LOG.info("Created %(fmt)s volume %(id)s of %(size)s GiB from "
                 "%(src)s", {"fmt": fmt, "id": volume.id,
                             "size": volume.size, "src": source})
        return {"provider_location": path}

    def _copy_atomically(self, source: str, path: str, fmt: str,
                         size_bytes: int | None = None,
                         replace: bool = False) -> None:
        """Copy ``source`` to ``path`` (grown to ``size_bytes``) through a
        temporary file; see :meth:`_write_atomically`."""
        def fill(fd: int) -> None:
            with open(source, "rb") as source_file:
                sparse_copy.copy(source_file.fileno(), fd)
            if size_bytes is not None:
                _EXTENDERS[fmt](fd, path, size_bytes)
        self._write_atomically(path, fill, replace=replace)

    def volume_locations(self) -> dict[str, str | None]:
        """The volume files in ``file_volume_dir``, by volume id."""
        found: dict[str, str | None] = {}
        try:
            with os.scandir(self.volume_dir) as entries:
                for entry in entries:
                    match = _NAME_RE.match(entry.name)
                    if match is not None and match["kind"] == "volume":
                        found[match["id"]] = entry.path
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot list {self.volume_dir}: {exc}") from exc
        return found

    def initialize_connection(self, volume: base.DriverVolume,
                              connector: dict[str, Any]) -> dict[str, Any]:
        """Return the file's path for os-brick's ``local`` connector.

        ``data`` carries ``device_path`` (all that os-brick needs),
        ``volume_id`` and ``format`` (``raw`` or ``qcow2``), which tells
        the consumer how to open the file.
        """
        path, fmt = self._require(volume.id)
        LOG.debug("Connecting volume %(id)s to %(host)s",
                  {"id": volume.id, "host": connector.get("host")})
        return {
            "driver_volume_type": "local",
            "data": {"device_path": path, "volume_id": volume.id,
                     "format": fmt},
        }

    def terminate_connection(self, volume: base.DriverVolume,
                             connector: dict[str, Any] | None) -> None:
        """Do nothing: a local file has no export to revoke."""
        LOG.debug("Disconnecting volume %(id)s from %(host)s",
                  {"id": volume.id,
                   "host": connector.get("host") if connector else "all"})

    def initialize_connection_snapshot(self, snapshot: base.DriverSnapshot,
                                       connector: dict[str, Any]
                                       ) -> dict[str, Any]:
        """The snapshot's file for os-brick's ``local`` connector (the
        reader opens it read only).

        :raises SnapshotNotFound: the backend has no file for it.
        """
        found = self._find(snapshot.id, "snapshot")
        if found is None:
            raise exception.SnapshotNotFound(snapshot_id=snapshot.id)
        return {"driver_volume_type": "local",
                "data": {"device_path": found[0], "volume_id": snapshot.id,
                         "format": found[1]}}

    def _collect_stats(self) -> dict[str, Any]:
        try:
            fs = os.statvfs(self.volume_dir)
            count, provisioned = self._provisioned_bytes()
        except OSError as exc:
            LOG.warning("Backend %(name)s is down: %(err)s",
                        {"name": self.backend_name, "err": exc})
            return self._pool_stats(0, 0, 0, 0, "down")
        return self._pool_stats(fs.f_blocks * fs.f_frsize,
                                fs.f_bavail * fs.f_frsize,
                                provisioned, count, "up")

    def _pool_stats(self, total: int, free: int, provisioned: int,
                    count: int, state: str) -> dict[str, Any]:
        return self._capacity_report(
            total, free, provisioned, count, state,
            multiattach=(self.volume_format == "raw"
                         and self.conf.file_multiattach),
            snapshot_support=True,
            revert_to_snapshot_support=True,
            # NOTE(ashlar): a running qemu caches the qcow2 header, so an
            # attached qcow2 volume must not be extended under it.
            online_extend_support=self.volume_format == "raw")

    def _provisioned_bytes(self) -> tuple[int, int]:
        """Return the number of volumes and the sum of their virtual sizes."""
        count = total = 0
        with os.scandir(self.volume_dir) as entries:
            for entry in entries:
                match = _NAME_RE.match(entry.name)
                if (match is None or match["kind"] != "volume"
                        or not entry.is_file()):
                    continue
                try:
                    total += _virtual_size(entry.path, match["fmt"])
                except FileNotFoundError:
                    continue  # deleted while we were counting
                count += 1
        return count, total

    def _path(self, object_id: str, fmt: str, kind: str = "volume") -> str:
        """The file of volume (or snapshot, by ``kind``) ``object_id``."""
        name = f"{kind}-{object_id}.{fmt}"
        if not _NAME_RE.match(name):
            raise exception.InvalidInput(
                reason=f"{kind.capitalize()} id {object_id!r} is not a "
                f"valid identifier.")
        return os.path.join(self.volume_dir, name)

    def _find(self, object_id: str, kind: str = "volume"
              ) -> tuple[str, str] | None:
        """Return the path and format of a volume's (or snapshot's) file,
        or None."""
        for fmt in _FORMATS:
            path = self._path(object_id, fmt, kind)
            if os.path.lexists(path):
                return path, fmt
        return None

    def _require(self, volume_id: str) -> tuple[str, str]:
        found = self._find(volume_id)
        if found is None:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return found

    def _write_atomically(self, path: str, fill: Callable[[int], None],
                          replace: bool = False) -> None:
        """Let ``fill`` write a hidden temporary file, then put it at
        ``path``: hard-linked, which never overwrites, or renamed over
        ``path`` when ``replace``.  Nothing is left behind on failure.

        :raises VolumeBackendAPIException: ``path`` exists (unless
            ``replace``), or a file operation failed.
        """
        fd, tmp = tempfile.mkstemp(
            dir=self.volume_dir, prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX)
        try:
            with os.fdopen(fd, "r+b") as tmp_file:
                fill(tmp_file.fileno())
                os.fchmod(tmp_file.fileno(), _FILE_MODE)
                os.fsync(tmp_file.fileno())
            if replace:
                os.replace(tmp, path)
            else:
                os.link(tmp, path)
            _fsync_dir(self.volume_dir)
        except FileExistsError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"{path} already exists") from exc
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot create {path}: {exc}") from exc
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _remove_partial_files(self) -> None:
        with os.scandir(self.volume_dir) as entries:
            for entry in entries:
                if (entry.name.startswith(_TMP_PREFIX)
                        and entry.name.endswith(_TMP_SUFFIX)):
                    LOG.warning("Removing %(path)s, left by an interrupted "
                                "create", {"path": entry.path})
                    os.unlink(entry.path)


def _adopted(volume_id: str, path: str) -> dict[str, Any]:
    """The model update of a volume's file made before (a create resumed
    after its node died between making the file and saying so)."""
    LOG.info("Volume %(id)s exists at %(path)s; adopting it",
             {"id": volume_id, "path": path})
    return {"provider_location": path}


def _unlink(path: str) -> bool:
    """Remove ``path``; False when it was gone already.

    :raises VolumeBackendAPIException: It cannot be removed.
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise exception.VolumeBackendAPIException(
            data=f"cannot delete {path}: {exc}") from exc
    return True


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _virtual_size(path: str, fmt: str) -> int:
    """Return the size a volume file presents to its user, in bytes."""
    if fmt == "raw":
        return os.stat(path).st_size
    with open(path, "rb") as image:
        try:
            return qcow2.read_header(image.fileno()).size
        except exception.VolumeBackendAPIException:
            LOG.warning("%(path)s is not a qcow2 image; counting its file "
                        "size", {"path": path})
            return os.fstat(image.fileno()).st_size


def _write_raw(fd: int, size_bytes: int) -> None:
    os.ftruncate(fd, size_bytes)


def _extend_raw(fd: int, path: str, size_bytes: int) -> None:
    """Grow the open raw file ``fd`` (``path``, for messages)."""
    current = os.fstat(fd).st_size
    if current > size_bytes:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is {current} bytes; refusing to shrink it to "
            f"{size_bytes}")
    if current < size_bytes:
        os.ftruncate(fd, size_bytes)


_WRITERS = {"raw": _write_raw, "qcow2": qcow2.write}
_EXTENDERS = {"raw": _extend_raw, "qcow2": qcow2.extend}

register_opts = FileDriver.register_opts
list_opts = FileDriver.list_opts

