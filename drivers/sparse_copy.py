"""Whole-file copies that share blocks or keep holes, for the file backend;
copies between backends that keep holes (:func:`stream`).

:func:`copy` makes a reflink where the file system shares blocks
(``FICLONE``: btrfs, XFS), else copies only the data segments that
``SEEK_DATA``/``SEEK_HOLE`` find, with ``copy_file_range`` where the kernel
offers it, else by reading and writing; the source's holes stay holes.
"""

import errno
import fcntl
import functools
import os
from collections.abc import Callable
from collections.abc import Iterator

from oslo_utils import units

from common import exception

# ioctl FICLONE (linux/fs.h): make the destination share the source's blocks.
_FICLONE = 0x40049409
# errnos of a file system (or kernel) that cannot reflink or copy_file_range.
_NO_REFLINK = frozenset({errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV,
                         errno.EINVAL, errno.ENOSYS})
_COPY_CHUNK = 8 * units.Mi
#: What :func:`stream` reads at once: 4 MiB, an RBD object.
STREAM_CHUNK = 4 * units.Mi


def copy(source: int, target: int) -> None:
    """Copy the file ``source`` into the empty file ``target``: a reflink
    where the file system can make one, else a sparse copy."""
    try:
        fcntl.ioctl(target, _FICLONE, source)
    except OSError as exc:
        if exc.errno not in _NO_REFLINK:
            raise
        _sparse_copy(source, target)


def _sparse_copy(source: int, target: int) -> None:
    """Copy the data segments of ``source``; its holes stay holes."""
    os.ftruncate(target, os.fstat(source).st_size)
    for start, end in _data_segments(source):
        _copy_range(source, target, start, end)


def _data_segments(fd: int) -> Iterator[tuple[int, int]]:
    """Yield the (start, end) offsets of the data (non-hole) segments."""
    size = os.fstat(fd).st_size
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                return  # only a hole is left
            raise
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        if end > start:
            yield start, end
        offset = end


def _copy_range(source: int, target: int, start: int, end: int) -> None:
    """Copy bytes [start, end) at the same offsets, in the kernel when it
    can (copy_file_range), else by reading and writing."""
    while start < end:
        count = min(end - start, _COPY_CHUNK)
        try:
            done = os.copy_file_range(source, target, count, start, start)
        except OSError as exc:
            if exc.errno not in _NO_REFLINK:
                raise
            done = os.pwrite(target, os.pread(source, count, start), start)
        if done == 0:
            raise exception.VolumeBackendAPIException(
                data="the source shrank while it was copied")
        start += done


@functools.lru_cache(maxsize=4)
def zeros(length: int) -> bytes:
    """``length`` zero bytes, kept (a few chunk sizes' worth): a chunk of
    zeros is found by one comparison."""
    return bytes(length)


def is_zero(data: bytes) -> bool:
    """Whether ``data`` is all zeros (a comparison: ``bytes.strip`` takes
    seconds over a GiB of zeros)."""
    return data == zeros(len(data))


def write_all(pwrite: Callable[[int, memoryview], int], offset: int,
              data: bytes, where: str) -> None:
    """Write ``data`` at ``offset`` through ``pwrite(offset, view)``,
    which answers how much it took, until all of it is taken.

    :raises VolumeBackendAPIException: ``where`` took no bytes.
    """
    view = memoryview(data)
    while view:
        done = pwrite(offset, view)
        if done <= 0:
            raise exception.VolumeBackendAPIException(
                data="%s took no bytes at %d" % (where, offset))
        view, offset = view[done:], offset + done


def stream(read: Callable[[int, int], bytes],
           write: Callable[[int, bytes], object], length: int) -> int:
    """Copy ``length`` bytes from ``read(offset, size)`` (a volume another
    backend holds, through the hosts' data path) to ``write(offset,
    data)`` (a new sparse volume), :data:`STREAM_CHUNK` at a time; chunks
    of zeros are not written, so they stay holes.  A short read ends the
    source.

    :returns: how many bytes were written (data, not holes).
    """
    written = 0
    for offset in range(0, length, STREAM_CHUNK):
        data = read(offset, min(STREAM_CHUNK, length - offset))
        if data and not is_zero(data):
            write(offset, data)
            written += len(data)
        if len(data) < min(STREAM_CHUNK, length - offset):
            break
    return written
