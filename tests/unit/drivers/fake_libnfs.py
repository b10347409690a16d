"""An in-process stand-in for ``common.libnfs.Share``: a share is a local
folder, named by the URL's path (``nfs://host/<folder>``).

Only for unit tests of drivers/nfs.py; the functional tests use a real
nfs-ganesha through the real libnfs.
"""

import errno
import os
import urllib.parse

from common import libnfs


def _error(exc: OSError) -> libnfs.Error:
    return libnfs.Error(exc.errno or errno.EIO, str(exc))


class FakeShare:
    """``libnfs.Share(url, timeout_ms)`` over the folder of the URL's
    path."""

    mounts = 0

    def __init__(self, url: str, timeout_ms: int = 10000) -> None:
        self.root = urllib.parse.urlsplit(url).path
        if not os.path.isdir(self.root):
            raise libnfs.Error(errno.ENOENT, "mount %s: no export" % url)
        FakeShare.mounts += 1

    def _path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self, path, create=False, read_only=False):
        flags = (os.O_RDWR | os.O_CREAT | os.O_TRUNC if create
                 else os.O_RDONLY if read_only else os.O_RDWR)
        try:
            return FakeFile(os.open(self._path(path), flags, 0o600))
        except OSError as exc:
            raise _error(exc) from exc

    def _call(self, func, *paths):
        try:
            return func(*(self._path(path) for path in paths))
        except OSError as exc:
            raise _error(exc) from exc

    def unlink(self, path):
        self._call(os.unlink, path)

    def link(self, path, new_path):
        self._call(os.link, path, new_path)

    def rename(self, path, new_path):
        self._call(os.replace, path, new_path)

    def listdir(self, path="/"):
        with os.scandir(self._path(path)) as entries:
            return {entry.name: entry.stat().st_size for entry in entries}

    def exists(self, path):
        return os.path.lexists(self._path(path))

    def size(self, path):
        return self._call(os.stat, path).st_size

    def capacity(self):
        fs = os.statvfs(self.root)
        return fs.f_blocks * fs.f_frsize, fs.f_bavail * fs.f_frsize


class FakeFile:
    def __init__(self, fd):
        self._fd = fd

    def pwrite(self, offset, data):
        return os.pwrite(self._fd, data, offset)

    def pread(self, offset, length):
        # NOTE: a hole is answered without reading it (reading a GiB of
        # zeros from a sparse file is slow on a loaded machine)
        length = max(0, min(length, os.fstat(self._fd).st_size - offset))
        try:
            data_at = os.lseek(self._fd, offset, os.SEEK_DATA)
        except OSError:  # ENXIO: only a hole from offset to the end
            data_at = offset + length
        if data_at >= offset + length:
            return bytes(length)
        return os.pread(self._fd, length, offset)

    def size(self):
        return os.fstat(self._fd).st_size

    def truncate(self, length):
        os.ftruncate(self._fd, length)

    def fsync(self):
        os.fsync(self._fd)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
