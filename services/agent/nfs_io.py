"""An ``nfs`` connection used in userspace: libnfs, no kernel mount.

The connection_info (Cinder's ``nfs`` type) names the share (``export``,
and ``share_url``, its libnfs URL with the server's ports) and the
volume's file (``name``, ``format``).  This host mounts the share in
libnfs for the handle's life and opens the file; :class:`NfsFile` is the
byte-addressed raw file the data path reads and writes.  NFSv3 opens are
not access checks (docs/backends.md), so a read-only attachment's handle
refuses writes itself; writes past the volume's end are refused too (they
would grow the file).  Only raw volumes are opened here: a qcow2 volume
is for a hypervisor's qcow2 driver.
"""

from typing import Any

from oslo_log import log as logging

from common import exception
from common import libnfs
from services.agent import positional

LOG = logging.getLogger(__name__)
#: Milliseconds libnfs waits for the server.
TIMEOUT_MS = 30000


def share_url(info: dict[str, Any]) -> str:
    """The libnfs URL of the connection's share: ``share_url``, else one
    made of Cinder's ``export`` (``host:/path``, the server's portmapper
    giving the ports)."""
    if info.get("share_url"):
        return str(info["share_url"])
    host, sep, path = str(info.get("export") or "").rpartition(":/")
    if not sep or not host:
        raise exception.InvalidInput(
            reason="the nfs connection names no share: %r"
            % info.get("export"))
    return "nfs://%s/%s" % (host, path)


def open_file(info: dict[str, Any], read_only: bool) -> "NfsFile":
    """Mount the connection's share and open its volume file.

    :raises InvalidInput: the volume is not raw, or its name is not a
        plain file name.
    :raises libnfs.Error: the share or the file cannot be opened.
    """
    fmt, name = info.get("format", "raw"), str(info.get("name") or "")
    if fmt != "raw":
        raise exception.InvalidInput(
            reason="volume %s is %s: this host reads and writes raw NFS "
            "volumes (a qcow2 one is for a hypervisor)"
            % (info.get("volume_id"), fmt))
    if not name or "/" in name or name in (".", ".."):
        raise exception.InvalidInput(
            reason="the nfs connection's file name %r is not one" % name)
    share = libnfs.Share(share_url(info), timeout_ms=TIMEOUT_MS)
    try:
        handle = share.open("/" + name, read_only=read_only)
    except BaseException:
        share.close()
        raise
    return NfsFile(share, handle, read_only)


class NfsFile(positional.PositionalIO):
    """A volume file on a libnfs mount as a seekable raw file."""

    def __init__(self, share: libnfs.Share, handle: libnfs.File,
                 read_only: bool) -> None:
        super().__init__(handle.size(), read_only)
        self._share, self._file = share, handle
        self._released = False

    def _pread(self, offset: int, length: int) -> bytes:
        data = b""
        while len(data) < length:
            chunk = self._file.pread(offset + len(data), length - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def _pwrite(self, offset: int, data: bytes) -> int:
        return int(self._file.pwrite(offset, data))

    def flush(self) -> None:
        """Commit what was written to the server's storage (NFSv3
        COMMIT)."""
        if not (self.closed or self._released or self._read_only):
            self._file.fsync()

    def close(self) -> None:
        if not self.closed:
            try:
                self.flush()
            finally:
                self._released = True
                self._file.close()
                self._share.close()
        super().close()
