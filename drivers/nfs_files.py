"""The NFS backend's files on a share, through libnfs: names, atomic
creation, raw and qcow2 writers and extenders (drivers/nfs.py uses them).
"""

import contextlib
import json
import re
import secrets
import tempfile
from collections.abc import Callable

from oslo_log import log as logging
from oslo_utils import units

from common import exception
from common import libnfs
from drivers import qcow2
from drivers import sparse_copy

LOG = logging.getLogger(__name__)

NAME_RE = re.compile(
    r"^(?P<kind>volume|snapshot)-(?P<id>[A-Za-z0-9][A-Za-z0-9_-]{0,127})"
    r"\.(?P<fmt>raw|qcow2)$")
FORMATS = ("raw", "qcow2")
TMP_PREFIX = ".ashlar-"
TMP_SUFFIX = ".tmp"
#: Bytes read and written at a time when copying.
CHUNK = units.Mi
QCOW2_MAGIC = b"QFI\xfb"
#: End of a qcow2 header's size field (big-endian, at byte 24).
QCOW2_SIZE_END = 32


def file_name(object_id: str, fmt: str, kind: str = "volume") -> str:
    """``<kind>-<id>.<fmt>``.

    :raises InvalidInput: the id cannot be a file name.
    """
    name = "%s-%s.%s" % (kind, object_id, fmt)
    if not NAME_RE.match(name):
        raise exception.InvalidInput(
            reason="%s id %r is not a valid identifier." % (
                kind.capitalize(), object_id))
    return name


#: The .info key that names a qcow2 volume's active file
#: (:mod:`drivers.nfs_chain`).
ACTIVE = "active"


def info_name(volume_id: str) -> str:
    """``volume-<id>.info``: a qcow2 volume's snapshot chain."""
    return "volume-%s.info" % volume_id


def plain(name: str) -> bool:
    """Whether ``name`` is a file name, no path."""
    return bool(name) and "/" not in name and name not in (".", "..")


def read_info(nfs: libnfs.Share, volume_id: str) -> dict[str, str]:
    """The volume's .info (:mod:`drivers.nfs_chain`), ``{}`` when it has
    none.

    :raises VolumeBackendAPIException: it is no JSON object of names.
    """
    path = "/" + info_name(volume_id)
    if not nfs.exists(path):
        return {}
    with nfs.open(path, read_only=True) as info_file:
        raw = qcow2.read_fully(info_file.pread, 0, info_file.size())
    try:
        info = json.loads(raw)
    except ValueError as exc:
        raise exception.VolumeBackendAPIException(
            data="%s is not JSON: %s" % (info_name(volume_id), exc)) from exc
    if not isinstance(info, dict) or not all(
            isinstance(value, str) and plain(value)
            for value in info.values()):
        raise exception.VolumeBackendAPIException(
            data="%s names no files" % info_name(volume_id))
    return info


def volume_files(nfs: libnfs.Share) -> dict[str, int]:
    """The volume files at the top of a share: name -> the size their
    user sees (a qcow2 image's virtual size: its active file's)."""
    found = {}
    listing = nfs.listdir("/")
    for name, size in listing.items():
        match = NAME_RE.match(name)
        if match is None or match["kind"] != "volume":
            continue
        if match["fmt"] == "qcow2":
            try:
                active = name
                if info_name(match["id"]) in listing:
                    active = read_info(nfs, match["id"]).get(ACTIVE, name)
                with nfs.open("/" + active, read_only=True) as image:
                    size = qcow2_size(image.pread(0, QCOW2_SIZE_END), size)
            except (libnfs.Error, exception.VolumeBackendAPIException):
                continue  # deleted while we were counting
        found[name] = size
    return found


def qcow2_size(head: bytes, file_size: int) -> int:
    """The virtual size in a qcow2 header's first bytes; the file's size
    when they are no qcow2 header."""
    if len(head) < QCOW2_SIZE_END or not head.startswith(QCOW2_MAGIC):
        LOG.warning("A qcow2 volume file has no qcow2 header; counting "
                    "its file size")
        return file_size
    return int.from_bytes(head[QCOW2_SIZE_END - 8:QCOW2_SIZE_END], "big")


def remove_partial_files(nfs: libnfs.Share) -> None:
    for name in nfs.listdir("/"):
        if name.startswith(TMP_PREFIX) and name.endswith(TMP_SUFFIX):
            LOG.warning("Removing %(name)s, left by an interrupted create",
                        {"name": name})
            nfs.unlink("/" + name)


def write_atomically(nfs: libnfs.Share, name: str,
                      fill: Callable[[libnfs.File, str], None],
                      replace: bool = False) -> None:
    """Let ``fill`` write a hidden temporary file (given open, and its
    path), then put it at ``name``: hard-linked, which never overwrites,
    or renamed over it when ``replace``.  The temporary file is removed
    whatever happens.

    :raises VolumeBackendAPIException: ``name`` exists (unless
        ``replace``).
    """
    tmp = "/%s%s%s" % (TMP_PREFIX, secrets.token_hex(8), TMP_SUFFIX)
    try:
        with nfs.open(tmp, create=True) as out:
            fill(out, tmp)
            out.fsync()
        if replace:
            nfs.rename(tmp, "/" + name)
            return
        try:
            nfs.link(tmp, "/" + name)
        except libnfs.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot create %s: %s" % (name, exc)) from exc
    finally:
        with contextlib.suppress(libnfs.Error):
            nfs.unlink(tmp)


def write_raw(out: libnfs.File, size: int) -> None:
    out.truncate(size)


def extend_raw(image: libnfs.File, size: int) -> None:
    current = image.size()
    if current > size:
        raise exception.VolumeBackendAPIException(
            data="refusing to shrink a %d-byte file to %d" % (current, size))
    if current < size:
        image.truncate(size)


def write_qcow2(out: libnfs.File, size: int) -> None:
    """An empty qcow2 v3 image (:func:`drivers.qcow2.write` on a local
    temporary file, then written through libnfs: a few clusters)."""
    with tempfile.TemporaryFile() as local:
        qcow2.write(local.fileno(), size)
        local.seek(0)
        copy_local(local.read(), out)


def extend_qcow2(image: libnfs.File, size: int) -> None:
    """Raise a qcow2 image's virtual size (:func:`drivers.qcow2.extend`
    on a local copy of its header cluster, written back)."""
    head = image.pread(0, 1 << 16)
    if not head.startswith(QCOW2_MAGIC):
        raise exception.VolumeBackendAPIException(
            data="the volume file is not a qcow2 image")
    with tempfile.TemporaryFile() as local:
        local.write(head)
        local.flush()
        qcow2.extend(local.fileno(), "the volume's header", size)
        local.seek(0)
        image.pwrite(0, local.read(len(head)))
        image.fsync()


def copy_local(data: bytes, out: libnfs.File) -> None:
    out.truncate(len(data))
    for offset in range(0, len(data), CHUNK):
        chunk = data[offset:offset + CHUNK]
        if not sparse_copy.is_zero(chunk):
            out.pwrite(offset, chunk)


WRITERS = {"raw": write_raw, "qcow2": write_qcow2}
EXTENDERS = {"raw": extend_raw, "qcow2": extend_qcow2}
