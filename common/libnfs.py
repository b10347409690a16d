"""A userspace NFS client: libnfs (Debian's ``libnfs13``) by ctypes.

This machine has no kernel NFS client, so a host reads and writes a file
on a share through libnfs's synchronous API in its own process.  A
``Share`` is one mount of ``nfs://server/export?version=4&nfsport=N``
(the URL's options are libnfs's own); ``open`` gives a ``File`` with
positional reads and writes.  Used by the agent's data path and by the
volume side (creating, sizing, statvfs for capacity), so it lives in
``common``.
"""

import ctypes
import ctypes.util
import errno
import os
from typing import Any

LIBRARY = "libnfs.so.13"

_lib: Any = None


class Error(OSError):
    """A failed libnfs call: ``errno`` and libnfs's text."""


class _StatVfs(ctypes.Structure):
    # struct nfs_statvfs_64 (libnfs.h)
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files",
        "f_ffree", "f_favail", "f_fsid", "f_flag", "f_namemax")]


class _Stat(ctypes.Structure):
    # struct nfs_stat_64 (libnfs.h)
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size",
        "blksize", "blocks", "atime", "mtime", "ctime", "atime_nsec",
        "mtime_nsec", "ctime_nsec", "used")]


class _DirEnt(ctypes.Structure):
    # the first fields of struct nfsdirent (libnfs.h); only read through
    # the pointer nfs_readdir returns
    pass


_DirEnt._fields_ = [("next", ctypes.POINTER(_DirEnt)),
                    ("name", ctypes.c_char_p), ("inode", ctypes.c_uint64),
                    ("type", ctypes.c_uint32), ("mode", ctypes.c_uint32),
                    ("size", ctypes.c_uint64)]


class _Url(ctypes.Structure):
    _fields_ = [("server", ctypes.c_char_p), ("path", ctypes.c_char_p),
                ("file", ctypes.c_char_p)]


def library() -> Any:
    """libnfs, loaded once (``OSError`` when it is not installed)."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(ctypes.util.find_library("nfs") or LIBRARY)
        ptr, text, c_int, u64 = (ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_int, ctypes.c_uint64)
        for name, args, result in (
                ("nfs_init_context", [], ptr),
                ("nfs_destroy_context", [ptr], None),
                ("nfs_get_error", [ptr], text),
                ("nfs_parse_url_dir", [ptr, text], ctypes.POINTER(_Url)),
                ("nfs_destroy_url", [ptr], None),
                ("nfs_set_timeout", [ptr, c_int], None),
                ("nfs_mount", [ptr, text, text], c_int),
                ("nfs_umount", [ptr], c_int),
                ("nfs_open", [ptr, text, c_int, ptr], c_int),
                ("nfs_creat", [ptr, text, c_int, ptr], c_int),
                ("nfs_close", [ptr, ptr], c_int),
                ("nfs_pread", [ptr, ptr, u64, u64, ptr], c_int),
                ("nfs_pwrite", [ptr, ptr, u64, u64, ptr], c_int),
                ("nfs_fsync", [ptr, ptr], c_int),
                ("nfs_ftruncate", [ptr, ptr, u64], c_int),
                ("nfs_unlink", [ptr, text], c_int),
                ("nfs_link", [ptr, text, text], c_int),
                ("nfs_rename", [ptr, text, text], c_int),
                ("nfs_opendir", [ptr, text, ptr], c_int),
                ("nfs_readdir", [ptr, ptr], ctypes.POINTER(_DirEnt)),
                ("nfs_closedir", [ptr, ptr], None),
                ("nfs_stat64", [ptr, text, ptr], c_int),
                ("nfs_fstat64", [ptr, ptr, ptr], c_int),
                ("nfs_statvfs64", [ptr, text, ptr], c_int)):
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = result
        _lib = lib
    return _lib


class Share:
    """One mounted export; ``Share(url)`` mounts at once."""

    def __init__(self, url: str, timeout_ms: int = 10000) -> None:
        self._lib = library()
        self._ctx = self._lib.nfs_init_context()
        if not self._ctx:
            raise Error(0, "nfs_init_context failed")
        try:
            self._mount(url, timeout_ms)
        except BaseException:
            self._lib.nfs_destroy_context(self._ctx)
            self._ctx = None
            raise

    def _mount(self, url: str, timeout_ms: int) -> None:
        parsed = self._lib.nfs_parse_url_dir(self._ctx, url.encode())
        if not parsed:
            raise Error(0, "%s: %s" % (url, self._error()))
        try:
            self._lib.nfs_set_timeout(self._ctx, timeout_ms)
            self._check("mount %s" % url, self._lib.nfs_mount(
                self._ctx, parsed.contents.server, parsed.contents.path))
        finally:
            self._lib.nfs_destroy_url(parsed)

    def _error(self) -> str:
        return (self._lib.nfs_get_error(self._ctx) or b"").decode(
            "utf-8", "replace")

    def _check(self, op: str, result: int) -> int:
        if result < 0:
            raise Error(-result, "%s: %s" % (op, self._error()))
        return result

    def close(self) -> None:
        if self._ctx:
            self._lib.nfs_umount(self._ctx)
            self._lib.nfs_destroy_context(self._ctx)
            self._ctx = None

    def __enter__(self) -> "Share":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, path: str, create: bool = False,
             read_only: bool = False) -> "File":
        """Open ``path`` (relative to the export, ``/`` first)."""
        handle = ctypes.c_void_p()
        if create:
            result = self._lib.nfs_creat(self._ctx, path.encode(), 0o600,
                                         ctypes.byref(handle))
        else:
            flags = os.O_RDONLY if read_only else os.O_RDWR
            result = self._lib.nfs_open(self._ctx, path.encode(), flags,
                                        ctypes.byref(handle))
        self._check("open %s" % path, result)
        return File(self, handle.value)

    def unlink(self, path: str) -> None:
        self._check("unlink %s" % path,
                    self._lib.nfs_unlink(self._ctx, path.encode()))

    def link(self, path: str, new_path: str) -> None:
        """Hard-link ``path`` as ``new_path``; ``Error`` (EEXIST) when
        ``new_path`` exists: never overwrites."""
        self._check("link %s" % new_path, self._lib.nfs_link(
            self._ctx, path.encode(), new_path.encode()))

    def rename(self, path: str, new_path: str) -> None:
        """Rename ``path`` over ``new_path`` (replacing it)."""
        self._check("rename %s" % path, self._lib.nfs_rename(
            self._ctx, path.encode(), new_path.encode()))

    def listdir(self, path: str = "/") -> dict[str, int]:
        """The entries of the folder ``path``: name -> size in bytes."""
        handle = ctypes.c_void_p()
        self._check("opendir %s" % path, self._lib.nfs_opendir(
            self._ctx, path.encode(), ctypes.byref(handle)))
        found: dict[str, int] = {}
        try:
            while True:
                entry = self._lib.nfs_readdir(self._ctx, handle)
                if not entry:
                    return found
                name = entry.contents.name.decode("utf-8", "replace")
                if name not in (".", ".."):
                    found[name] = entry.contents.size
        finally:
            self._lib.nfs_closedir(self._ctx, handle)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (``Error`` for another failure)."""
        try:
            self.size(path)
        except Error as exc:
            if exc.errno == errno.ENOENT:
                return False
            raise
        return True

    def size(self, path: str) -> int:
        stat = _Stat()
        self._check("stat %s" % path, self._lib.nfs_stat64(
            self._ctx, path.encode(), ctypes.byref(stat)))
        return stat.size

    def capacity(self) -> tuple[int, int]:
        """(total, free) bytes of the export's file system."""
        vfs = _StatVfs()
        self._check("statvfs", self._lib.nfs_statvfs64(
            self._ctx, b"/", ctypes.byref(vfs)))
        return vfs.f_blocks * vfs.f_frsize, vfs.f_bavail * vfs.f_frsize


class File:
    """An open file on a ``Share``: positional reads and writes."""

    def __init__(self, share: Share, handle: int | None) -> None:
        self._share, self._handle = share, handle

    def pwrite(self, offset: int, data: bytes) -> int:
        share = self._share
        return share._check("write", share._lib.nfs_pwrite(
            share._ctx, self._handle, offset, len(data), data))

    def pread(self, offset: int, length: int) -> bytes:
        share = self._share
        buf = ctypes.create_string_buffer(length)
        count = share._check("read", share._lib.nfs_pread(
            share._ctx, self._handle, offset, length, buf))
        return buf.raw[:count]

    def size(self) -> int:
        """The file's size in bytes."""
        share, stat = self._share, _Stat()
        share._check("fstat", share._lib.nfs_fstat64(
            share._ctx, self._handle, ctypes.byref(stat)))
        return stat.size

    def truncate(self, length: int) -> None:
        share = self._share
        share._check("truncate", share._lib.nfs_ftruncate(
            share._ctx, self._handle, length))

    def fsync(self) -> None:
        share = self._share
        share._check("fsync", share._lib.nfs_fsync(share._ctx,
                                                   self._handle))

    def close(self) -> None:
        if self._handle:
            self._share._lib.nfs_close(self._share._ctx, self._handle)
            self._handle = None

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
