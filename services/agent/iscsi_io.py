"""An ``iscsi`` connection used in userspace: libiscsi, no kernel device.

This host logs in to the target of the connection_info as its own
initiator (:func:`initiator_name`, the IQN os-brick's connector gives the
volume node) with the target's CHAP account.  Before a read/write handle
may write, it registers this host's persistent-reservation key
(``common.libiscsi.registration_key`` of ``[DEFAULT] host``, which the
volume node preempts to fence this host) and, when the LUN has no
reservation yet, reserves it Write Exclusive, Registrants Only, so a
nexus without a registration cannot write.  :class:`LunIO` turns the
session's block commands into the byte-addressed file the data path reads
and writes.
"""

import io
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import libiscsi

LOG = logging.getLogger(__name__)
#: What os-brick reads this host's IQN from (open-iscsi's file).
INITIATOR_FILE = "/etc/iscsi/initiatorname.iscsi"
#: The largest READ(16)/WRITE(16) sent: tgt's MaxBurstLength here.
MAX_TRANSFER = 1 << 20


def initiator_name(conf: cfg.ConfigOpts) -> str:
    """This host's IQN: open-iscsi's (``InitiatorName=`` in
    :data:`INITIATOR_FILE`, as os-brick reads it), else ``[agent]
    iscsi_initiator``, else one made of ``[DEFAULT] host``."""
    try:
        with open(INITIATOR_FILE) as names:
            for line in names:
                if line.startswith("InitiatorName="):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return (conf.agent.iscsi_initiator
            or "iqn.2010-10.org.openstack.ashlar:%s" % conf.host.lower())


def login(conf: cfg.ConfigOpts, info: dict[str, Any],
          read_only: bool) -> tuple["LunIO", str]:
    """Log in as this host to the connection's target; the LUN as a raw
    file, and the initiator it logged in as."""
    initiator = initiator_name(conf)
    chap = ((info["auth_username"], info["auth_password"])
            if info.get("auth_method") == "CHAP" else None)
    session = libiscsi.Session(info["target_portal"], info["target_iqn"],
                               int(info.get("target_lun", 1)), initiator,
                               chap=chap)
    try:
        if not read_only:
            _register(session, libiscsi.registration_key(conf.host))
    except BaseException:
        session.close()
        raise
    return LunIO(session, read_only), initiator


def _register(session: libiscsi.Session, key: int) -> None:
    """Register ``key``; reserve Write Exclusive, Registrants Only when
    nobody holds a reservation (another host may, meanwhile: fine)."""
    session.register(key)
    if session.read_reservation() is None:
        try:
            session.reserve(key)
        except libiscsi.ReservationConflict:
            LOG.debug("Another host reserved the LUN first")


class LunIO(io.RawIOBase):
    """A logged-in LUN as a seekable raw file (whole blocks read and
    written underneath; a partial block is read, merged and written)."""

    def __init__(self, session: libiscsi.Session, read_only: bool) -> None:
        super().__init__()
        self._session = session
        self._read_only = read_only
        self._block = session.block_size
        self._size = session.blocks * session.block_size
        self._pos = 0

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
        data = self._span(self._pos, end) if end > self._pos else b""
        self._pos += len(data)
        return data

    def _span(self, start: int, end: int) -> bytes:
        """The bytes ``start:end`` (in the LUN), read in whole blocks."""
        first = start - start % self._block
        last = -(-end // self._block) * self._block
        chunks = [self._session.read(offset, min(MAX_TRANSFER, last - offset))
                  for offset in range(first, last, MAX_TRANSFER)]
        return b"".join(chunks)[start - first:end - first]

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        """Write at the position; raises ``io.UnsupportedOperation`` when
        read-only, ``libiscsi.Error`` (a ``ReservationConflict`` once
        fenced) when the target refuses."""
        if self._read_only:
            raise io.UnsupportedOperation("read-only attachment")
        data = bytes(data)
        start, end = self._pos, self._pos + len(data)
        if end > self._size:
            raise OSError("write past the end of the volume (%d bytes)"
                          % self._size)
        first = start - start % self._block
        last = -(-end // self._block) * self._block
        if (first, last) != (start, end):
            merged = bytearray(self._span(first, last))
            merged[start - first:end - first] = data
            data = bytes(merged)
        for offset in range(0, len(data), MAX_TRANSFER):
            self._session.write(first + offset,
                                data[offset:offset + MAX_TRANSFER])
        self._pos = end
        return end - start

    def close(self) -> None:
        if not self.closed:
            self._session.close()
        super().close()
