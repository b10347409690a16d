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

from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import libiscsi
from services.agent import positional

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
    file, and the initiator it logged in as.  A move's copy source names
    the initiator to log in as (``initiator``: its node's fence
    initiator), which attachments never do."""
    initiator = info.get("initiator") or initiator_name(conf)
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


class LunIO(positional.PositionalIO):
    """A logged-in LUN as a seekable raw file (whole blocks read and
    written underneath; a partial block is read, merged and written).
    A write the target refuses raises ``libiscsi.Error`` (a
    ``ReservationConflict`` once this host is fenced)."""

    def __init__(self, session: libiscsi.Session, read_only: bool) -> None:
        super().__init__(session.blocks * session.block_size, read_only)
        self._session = session
        self._block = session.block_size

    def _pread(self, offset: int, length: int) -> bytes:
        return self._span(offset, offset + length)

    def _span(self, start: int, end: int) -> bytes:
        """The bytes ``start:end`` (in the LUN), read in whole blocks."""
        first = start - start % self._block
        last = -(-end // self._block) * self._block
        chunks = [self._session.read(offset, min(MAX_TRANSFER, last - offset))
                  for offset in range(first, last, MAX_TRANSFER)]
        return b"".join(chunks)[start - first:end - first]

    def _pwrite(self, offset: int, data: bytes) -> int:
        start, end = offset, offset + len(data)
        first = start - start % self._block
        last = -(-end // self._block) * self._block
        if (first, last) != (start, end):
            merged = bytearray(self._span(first, last))
            merged[start - first:end - first] = data
            data = bytes(merged)
        for at in range(0, len(data), MAX_TRANSFER):
            self._session.write(first + at, data[at:at + MAX_TRANSFER])
        return end - start

    def close(self) -> None:
        if not self.closed:
            self._session.close()
        super().close()
