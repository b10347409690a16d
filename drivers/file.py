"""File backend: each volume is a sparse file in one local directory.

A volume is ``<file_volume_dir>/volume-<id>.<format>``, where the format is
``raw`` (a sparse file the size of the volume) or ``qcow2`` (a minimal qcow2
v3 image, written here without qemu-img).  The suffix records the format, so
volumes keep theirs when ``file_volume_format`` changes, and a raw volume's
content is never probed.  Hosts reach the files through os-brick's ``local``
connector.
"""

import os
import re
import struct
import tempfile
import typing
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import units

from common import exception
from drivers import base

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
    r"^volume-(?P<id>[A-Za-z0-9][A-Za-z0-9_-]{0,127})\.(?P<fmt>raw|qcow2)$")
_FORMATS = ("raw", "qcow2")
_TMP_PREFIX = ".volume-"
_TMP_SUFFIX = ".tmp"
# NOTE(ashlar): the service user and its group (the hypervisor's, on a
# compute host) read and write volumes; nobody else.
_FILE_MODE = 0o660

# qcow2 layout, from qemu docs/interop/qcow2.txt.  Images are written as
# header | refcount table | refcount block | L1 table, one 64 KiB cluster
# each (the L1 table may take more), with no L2 table: every guest cluster is
# unallocated and reads as zeros.
_QCOW2_MAGIC = b"QFI\xfb"
_QCOW2_VERSION = 3
_QCOW2_HEADER = struct.Struct(">4sIQIIQIIQQIIQQQQII")
_QCOW2_CLUSTER_BITS = 16
_QCOW2_REFCOUNT_ORDER = 4
_QCOW2_REFCOUNT = struct.Struct(">H")
_QCOW2_TABLE_ENTRY = struct.Struct(">Q")
# NOTE(ashlar): qemu refuses L1 tables above 32 MiB, which caps a qcow2
# image with 64 KiB clusters at 2 PiB.
_QCOW2_MAX_L1_BYTES = 32 * units.Mi
# Offset of the size field; crypt_method and l1_size follow it.
_QCOW2_SIZE_OFFSET = 24
_QCOW2_SIZE_FIELDS = struct.Struct(">QII")


class Qcow2Header(typing.NamedTuple):
    """The qcow2 v3 header fields, in file order."""

    magic: bytes
    version: int
    backing_file_offset: int
    backing_file_size: int
    cluster_bits: int
    size: int
    crypt_method: int
    l1_size: int
    l1_table_offset: int
    refcount_table_offset: int
    refcount_table_clusters: int
    nb_snapshots: int
    snapshots_offset: int
    incompatible_features: int
    compatible_features: int
    autoclear_features: int
    refcount_order: int
    header_length: int


class FileDriver(base.VolumeDriver):
    """Volumes as sparse files under ``file_volume_dir``."""

    VERSION = "1.0.0"
    STORAGE_PROTOCOL = "local"
    driver_opts = tuple(FILE_OPTS)

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str) -> None:
        super().__init__(conf, backend_name, host)
        self.volume_dir: str = conf.file_volume_dir
        self.volume_format: str = conf.file_volume_format
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
        into place, which fails rather than replaces an existing volume.

        :raises InvalidInput: Bad size or id (a file name needs 1-128
            letters, digits, ``-`` or ``_``).
        """
        base.validate_size(volume.size)
        existing = self._find(volume.id)
        if existing is not None:
            raise exception.VolumeBackendAPIException(
                data=f"volume {volume.id} already exists at {existing[0]}")
        path = self._path(volume.id, self.volume_format)
        self._write_atomically(path, volume.size * units.Gi)
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
        try:
            os.unlink(found[0])
        except FileNotFoundError:
            return
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot delete {found[0]}: {exc}") from exc
        LOG.info("Deleted volume %(id)s", {"id": volume.id})

    def extend_volume(self, volume: base.DriverVolume, new_size: int) -> None:
        """Grow the file (raw) or the image's virtual size (qcow2).

        A qcow2 image grows within the clusters its L1 table already holds
        (4 TiB per cluster); beyond that the call fails.
        """
        base.validate_new_size(volume, new_size)
        path, fmt = self._require(volume.id)
        try:
            _EXTENDERS[fmt](path, new_size * units.Gi)
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot extend {path}: {exc}") from exc
        LOG.info("Extended volume %(id)s to %(size)s GiB",
                 {"id": volume.id, "size": new_size})

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
            # NOTE(ashlar): a running qemu caches the qcow2 header, so an
            # attached qcow2 volume must not be extended under it.
            online_extend_support=self.volume_format == "raw")

    def _provisioned_bytes(self) -> tuple[int, int]:
        """Return the number of volumes and the sum of their virtual sizes."""
        count = total = 0
        with os.scandir(self.volume_dir) as entries:
            for entry in entries:
                match = _NAME_RE.match(entry.name)
                if match is None or not entry.is_file():
                    continue
                try:
                    total += _virtual_size(entry.path, match["fmt"])
                except FileNotFoundError:
                    continue  # deleted while we were counting
                count += 1
        return count, total

    def _path(self, volume_id: str, fmt: str) -> str:
        name = f"volume-{volume_id}.{fmt}"
        if not _NAME_RE.match(name):
            raise exception.InvalidInput(
                reason=f"Volume id {volume_id!r} is not a valid identifier.")
        return os.path.join(self.volume_dir, name)

    def _find(self, volume_id: str) -> tuple[str, str] | None:
        """Return the path and format of a volume's file, or None."""
        for fmt in _FORMATS:
            path = self._path(volume_id, fmt)
            if os.path.lexists(path):
                return path, fmt
        return None

    def _require(self, volume_id: str) -> tuple[str, str]:
        found = self._find(volume_id)
        if found is None:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return found

    def _write_atomically(self, path: str, size_bytes: int) -> None:
        fd, tmp = tempfile.mkstemp(
            dir=self.volume_dir, prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX)
        try:
            with os.fdopen(fd, "r+b") as tmp_file:
                _WRITERS[self.volume_format](tmp_file.fileno(), size_bytes)
                os.fchmod(tmp_file.fileno(), _FILE_MODE)
                os.fsync(tmp_file.fileno())
            os.link(tmp, path)
            _fsync_dir(self.volume_dir)
        except FileExistsError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"{path} already exists") from exc
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data=f"cannot create {path}: {exc}") from exc
        finally:
            os.unlink(tmp)

    def _remove_partial_files(self) -> None:
        with os.scandir(self.volume_dir) as entries:
            for entry in entries:
                if (entry.name.startswith(_TMP_PREFIX)
                        and entry.name.endswith(_TMP_SUFFIX)):
                    LOG.warning("Removing %(path)s, left by an interrupted "
                                "create", {"path": entry.path})
                    os.unlink(entry.path)


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
            return read_qcow2_header(image.fileno()).size
        except exception.VolumeBackendAPIException:
            LOG.warning("%(path)s is not a qcow2 image; counting its file "
                        "size", {"path": path})
            return os.fstat(image.fileno()).st_size


def _write_raw(fd: int, size_bytes: int) -> None:
    os.ftruncate(fd, size_bytes)


def _extend_raw(path: str, size_bytes: int) -> None:
    current = os.stat(path).st_size
    if current > size_bytes:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is {current} bytes; refusing to shrink it to "
            f"{size_bytes}")
    os.truncate(path, size_bytes)


def _l1_entries(size_bytes: int, cluster_bits: int) -> int:
    """Return how many L1 entries map ``size_bytes`` of guest data."""
    cluster = 1 << cluster_bits
    bytes_per_l2_table = cluster * (cluster // _QCOW2_TABLE_ENTRY.size)
    return -(-size_bytes // bytes_per_l2_table)


def _clusters(size_bytes: int, cluster_bits: int) -> int:
    return max(1, -(-size_bytes // (1 << cluster_bits)))


def _write_qcow2(fd: int, size_bytes: int) -> None:
    """Write an empty qcow2 v3 image of ``size_bytes`` virtual bytes."""
    bits = _QCOW2_CLUSTER_BITS
    cluster = 1 << bits
    l1_size = _l1_entries(size_bytes, bits)
    if l1_size * _QCOW2_TABLE_ENTRY.size > _QCOW2_MAX_L1_BYTES:
        raise exception.InvalidInput(
            reason=f"{size_bytes} bytes is too large for a qcow2 volume.")
    reftable, refblock, l1_table = cluster, 2 * cluster, 3 * cluster
    used = 3 + _clusters(l1_size * _QCOW2_TABLE_ENTRY.size, bits)
    header = Qcow2Header(
        _QCOW2_MAGIC, _QCOW2_VERSION, 0, 0, bits, size_bytes, 0, l1_size,
        l1_table, reftable, 1, 0, 0, 0, 0, 0, _QCOW2_REFCOUNT_ORDER,
        _QCOW2_HEADER.size)
    # NOTE(ashlar): the zeros after the header end the (empty) extension
    # list, and the zeroed L1 table leaves every guest cluster unallocated.
    os.pwrite(fd, _QCOW2_HEADER.pack(*header), 0)
    os.pwrite(fd, _QCOW2_TABLE_ENTRY.pack(refblock), reftable)
    os.pwrite(fd, _QCOW2_REFCOUNT.pack(1) * used, refblock)
    os.ftruncate(fd, used * cluster)


def read_qcow2_header(fd: int) -> Qcow2Header:
    """Read and check the header of a qcow2 v3 image.

    :raises VolumeBackendAPIException: The file is not a qcow2 v3 image.
    """
    raw = os.pread(fd, _QCOW2_HEADER.size, 0)
    if len(raw) < _QCOW2_HEADER.size:
        raise exception.VolumeBackendAPIException(
            data="file too short for a qcow2 header")
    header = Qcow2Header._make(_QCOW2_HEADER.unpack(raw))
    if header.magic != _QCOW2_MAGIC or header.version != _QCOW2_VERSION:
        raise exception.VolumeBackendAPIException(
            data="not a qcow2 v3 image")
    return header


def _extend_qcow2(path: str, size_bytes: int) -> None:
    """Raise the virtual size, growing the L1 table within its clusters."""
    with open(path, "r+b") as image:
        fd = image.fileno()
        header = read_qcow2_header(fd)
        _check_qcow2_extend(path, header, size_bytes)
        l1_size = max(header.l1_size,
                      _l1_entries(size_bytes, header.cluster_bits))
        os.pwrite(fd, _QCOW2_SIZE_FIELDS.pack(
            size_bytes, header.crypt_method, l1_size), _QCOW2_SIZE_OFFSET)
        os.fsync(fd)


def _check_qcow2_extend(path: str, header: Qcow2Header,
                        size_bytes: int) -> None:
    if header.incompatible_features:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is in use or damaged (incompatible features "
            f"{header.incompatible_features:#x})")
    if header.size > size_bytes:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is {header.size} bytes; refusing to shrink it to "
            f"{size_bytes}")
    l1_bytes = header.l1_size * _QCOW2_TABLE_ENTRY.size
    room = (_clusters(l1_bytes, header.cluster_bits)
            << header.cluster_bits) // _QCOW2_TABLE_ENTRY.size
    if _l1_entries(size_bytes, header.cluster_bits) > room:
        raise exception.VolumeBackendAPIException(
            data=f"{path} cannot grow to {size_bytes} bytes without moving "
            f"its L1 table")


_WRITERS = {"raw": _write_raw, "qcow2": _write_qcow2}
_EXTENDERS = {"raw": _extend_raw, "qcow2": _extend_qcow2}

register_opts = FileDriver.register_opts
list_opts = FileDriver.list_opts
