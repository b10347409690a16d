"""A volume of fixed size as a seekable raw file over positional I/O.

The userspace data paths (:mod:`services.agent.iscsi_io`,
:mod:`services.agent.nfs_io`) read and write at offsets; the data path
wants a file with a position.  :class:`PositionalIO` keeps the position
and the rules every such handle shares: a read-only attachment's handle
refuses writes, and a write past the volume's end is refused (it would
grow a file, or miss the LUN).
"""

import io


class PositionalIO(io.RawIOBase):
    """Subclasses give :meth:`_pread` and :meth:`_pwrite`."""

    def __init__(self, size: int, read_only: bool) -> None:
        super().__init__()
        self._size = size
        self._read_only = read_only
        self._pos = 0

    def _pread(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` (fewer only at the end)."""
        raise NotImplementedError

    def _pwrite(self, offset: int, data: bytes) -> int:
        """Write ``data`` at ``offset``; how many bytes were written."""
        raise NotImplementedError

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return not self._read_only

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos,
                io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = self._size if size is None or size < 0 else min(
            self._size, self._pos + size)
        data = self._pread(self._pos, end - self._pos) \
            if end > self._pos else b""
        self._pos += len(data)
        return data

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        """Write at the position; ``io.UnsupportedOperation`` when
        read-only, ``OSError`` past the volume's end, the subclass's
        error when the storage refuses."""
        if self._read_only:
            raise io.UnsupportedOperation("read-only attachment")
        data = bytes(data)
        if self._pos + len(data) > self._size:
            raise OSError("write past the end of the volume (%d bytes)"
                          % self._size)
        written = self._pwrite(self._pos, data)
        self._pos += written
        return written
