"""A userspace iSCSI initiator: libiscsi (Debian's ``libiscsi7``) by ctypes.

This machine has no kernel initiator (no ``iscsi_tcp``, no device-mapper),
so a host reads, writes and reserves an iSCSI LUN through libiscsi's
synchronous C API in its own process: one ``Session`` is one login (one
I_T nexus) of one initiator IQN to one target and LUN.

Used by the compute side (the agent registers its key and moves the data)
and by the volume side (a fence preempts the old writer's key), so it
lives in ``common``.  Only the calls proved on Debian 12's libiscsi 1.19
are wrapped: login (``iscsi_full_connect_sync``, CHAP optional),
READ(16)/WRITE(16), READ CAPACITY(16), PERSISTENT RESERVE IN/OUT.
"""

import ctypes
import ctypes.util
import hashlib
import struct
from typing import Any
from typing import Callable

LIBRARY = "libiscsi.so.7"

#: SCSI status codes (SAM-5) libiscsi reports in ``scsi_task.status``.
STATUS_GOOD = 0x00
STATUS_CHECK_CONDITION = 0x02
STATUS_RESERVATION_CONFLICT = 0x18
STATUS_TASK_ABORTED = 0x40
SENSE_UNIT_ATTENTION = 6
#: ASC/ASCQ of the UNIT ATTENTION a preempted nexus gets first.
ASCQ_RESERVATIONS_PREEMPTED = 0x2a03

#: PERSISTENT RESERVE OUT service actions (SPC-4 6.16.2).
PR_REGISTER = 0
PR_RESERVE = 1
PR_RELEASE = 2
PR_CLEAR = 3
PR_PREEMPT = 4
PR_PREEMPT_AND_ABORT = 5
PR_REGISTER_AND_IGNORE = 6

#: PERSISTENT RESERVE IN service actions.
PR_READ_KEYS = 0
PR_READ_RESERVATION = 1

#: Reservation types.
WRITE_EXCLUSIVE = 1
EXCLUSIVE_ACCESS = 3
WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 5
EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 6

#: iscsi_set_session_type / iscsi_set_header_digest values.
_SESSION_NORMAL = 2
_HEADER_DIGEST_NONE_CRC32C = 2
PR_IN_LENGTH = 8192
TIMEOUT = 10


class Error(Exception):
    """A login or a transport failure (libiscsi's error text)."""


class ScsiError(Error):
    """A command that the target answered with a status other than GOOD."""

    def __init__(self, op: str, status: int, sense_key: int, ascq: int,
                 text: str) -> None:
        self.op, self.status = op, status
        self.sense_key, self.ascq = sense_key, ascq
        super().__init__("%s: status 0x%02x sense %d/0x%04x: %s"
                         % (op, status, sense_key, ascq, text))


class ReservationConflict(ScsiError):
    """RESERVATION CONFLICT: another initiator holds the reservation, or
    this one's key was preempted."""


class _Out(ctypes.Structure):
    # struct scsi_persistent_reserve_out_basic (scsi-lowlevel.h)
    _fields_ = [("reservation_key", ctypes.c_uint64),
                ("service_action_reservation_key", ctypes.c_uint64),
                ("spec_i_pt", ctypes.c_uint8),
                ("all_tg_pt", ctypes.c_uint8),
                ("aptpl", ctypes.c_uint8)]


class _Iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_lib: Any = None


def registration_key(host: str) -> int:
    """The persistent-reservation key of ``host`` (a connector's ``host``).

    The first 8 bytes of SHA-256 of ``ashlar-pr:<host>``, big-endian
    (never 0, which SPC reserves for "no key"): the agent registers it and
    the volume node preempts it, each knowing only the host's name.
    """
    digest = hashlib.sha256(b"ashlar-pr:" + host.encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


def library() -> Any:
    """libiscsi, loaded once (``OSError`` when it is not installed)."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(ctypes.util.find_library("iscsi") or LIBRARY)
        ptr, c_int = ctypes.c_void_p, ctypes.c_int
        for name, args in {
                "iscsi_create_context": [ctypes.c_char_p],
                "iscsi_get_error": [ptr],
                "iscsi_persistent_reserve_out_sync": [ptr, c_int, c_int,
                                                      c_int, c_int, ptr],
                "iscsi_persistent_reserve_in_sync": [ptr, c_int, c_int,
                                                     ctypes.c_uint16],
                "iscsi_read16_iov_sync": [ptr, c_int, ctypes.c_uint64,
                                          ctypes.c_uint32, c_int, c_int,
                                          c_int, c_int, c_int, c_int, ptr,
                                          c_int],
                "iscsi_write16_sync": [ptr, c_int, ctypes.c_uint64, ptr,
                                       ctypes.c_uint32, c_int, c_int, c_int,
                                       c_int, c_int, c_int],
                "iscsi_readcapacity16_sync": [ptr, c_int],
                "scsi_datain_unmarshall": [ptr],
        }.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ptr
        lib.iscsi_get_error.restype = ctypes.c_char_p
        lib.iscsi_set_noautoreconnect.argtypes = [ptr, c_int]
        lib.iscsi_set_noautoreconnect.restype = None
        text = ctypes.c_char_p
        for name, args in {
                "iscsi_set_targetname": [ptr, text],
                "iscsi_set_session_type": [ptr, c_int],
                "iscsi_set_header_digest": [ptr, c_int],
                "iscsi_set_timeout": [ptr, c_int],
                "iscsi_set_initiator_username_pwd": [ptr, text, text],
                "iscsi_full_connect_sync": [ptr, text, c_int],
                "iscsi_destroy_context": [ptr],
                "iscsi_logout_sync": [ptr],
                "scsi_task_get_status": [ptr, ptr],
                "scsi_free_scsi_task": [ptr],
        }.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = c_int
        _lib = lib
    return _lib


class Session:
    """One initiator logged in to one LUN of one target.

    ``Session(portal, target_iqn, lun, initiator_iqn)`` logs in at once
    (``Error`` when the target refuses this initiator); use it as a
    context manager or call ``close``.
    """

    def __init__(self, portal: str, target_iqn: str, lun: int,
                 initiator_iqn: str, chap: tuple[str, str] | None = None,
                 timeout: int = TIMEOUT, reconnect: bool = False) -> None:
        self._lib = library()
        self.lun = lun
        #: ASC/ASCQ of the last UNIT ATTENTION (then the command was retried)
        self.unit_attention: int | None = None
        self._ctx = self._lib.iscsi_create_context(initiator_iqn.encode())
        if not self._ctx:
            raise Error("iscsi_create_context failed")
        try:
            # NOTE(ashlar): libiscsi reconnects forever by default, and a
            # new login is a new I_T nexus without this one's registration;
            # a caller that may be fenced reconnects itself.
            self._lib.iscsi_set_noautoreconnect(self._ctx,
                                                int(not reconnect))
            self._login(portal, target_iqn, chap, timeout)
            self.blocks, self.block_size = self.capacity()
        except BaseException:
            self._lib.iscsi_destroy_context(self._ctx)
            self._ctx = None
            raise

    def _login(self, portal: str, target_iqn: str,
               chap: tuple[str, str] | None, timeout: int) -> None:
        lib, ctx = self._lib, self._ctx
        lib.iscsi_set_targetname(ctx, target_iqn.encode())
        lib.iscsi_set_session_type(ctx, _SESSION_NORMAL)
        lib.iscsi_set_header_digest(ctx, _HEADER_DIGEST_NONE_CRC32C)
        lib.iscsi_set_timeout(ctx, timeout)
        if chap:
            lib.iscsi_set_initiator_username_pwd(ctx, chap[0].encode(),
                                                 chap[1].encode())
        if lib.iscsi_full_connect_sync(ctx, portal.encode(), self.lun):
            raise Error("login to %s at %s refused: %s"
                        % (target_iqn, portal, self._error()))

    def _error(self) -> str:
        return (self._lib.iscsi_get_error(self._ctx) or b"").decode(
            "utf-8", "replace")

    def close(self) -> None:
        if self._ctx:
            self._lib.iscsi_logout_sync(self._ctx)
            self._lib.iscsi_destroy_context(self._ctx)
            self._ctx = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, op: str, call: Callable[[], int | None]) -> int:
        """Issue a command; a finished GOOD task, which the caller frees.

        A UNIT ATTENTION (the first command of a nexus after its
        registration was preempted, a reset, a capacity change) is kept
        in ``unit_attention`` and the command issued once more, as the
        kernel's sd does; so a preempted writer sees RESERVATION CONFLICT.
        """
        for attempt in (1, 2):
            task = call()
            if not task:
                raise Error("%s: %s" % (op, self._error()))
            sense = ctypes.create_string_buffer(64)
            status = self._lib.scsi_task_get_status(task, sense)
            if status == STATUS_GOOD:
                return task
            self._lib.scsi_free_scsi_task(task)
            # struct scsi_sense: unsigned char error_type; enum key; int ascq
            _, key, ascq = struct.unpack_from("=B3xii", sense.raw)
            if (status == STATUS_CHECK_CONDITION
                    and key == SENSE_UNIT_ATTENTION and attempt == 1):
                self.unit_attention = ascq
                continue
            break
        if status > STATUS_TASK_ABORTED:
            # libiscsi's own: the connection failed, timed out, was closed
            raise Error("%s: %s" % (op, self._error()))
        cls = (ReservationConflict if status == STATUS_RESERVATION_CONFLICT
               else ScsiError)
        raise cls(op, status, key, ascq, self._error())

    def capacity(self) -> tuple[int, int]:
        """(blocks, block size) from READ CAPACITY(16)."""
        task = self._run("READ CAPACITY(16)", lambda: self._lib.
                         iscsi_readcapacity16_sync(self._ctx, self.lun))
        try:
            data = self._lib.scsi_datain_unmarshall(task)
            # struct scsi_readcapacity16: uint64_t returned_lba; uint32 len
            lba, size = struct.unpack("=QI", ctypes.string_at(data, 12))
        finally:
            self._lib.scsi_free_scsi_task(task)
        return lba + 1, size

    def write(self, offset: int, data: bytes) -> None:
        """WRITE(16) of whole blocks at byte ``offset``."""
        self._check_aligned(offset, len(data))
        buf = ctypes.create_string_buffer(data, len(data))
        task = self._run("WRITE(16)", lambda: self._lib.iscsi_write16_sync(
            self._ctx, self.lun, offset // self.block_size, buf, len(data),
            self.block_size, 0, 0, 0, 0, 0))
        self._lib.scsi_free_scsi_task(task)

    def read(self, offset: int, length: int) -> bytes:
        """READ(16) of whole blocks at byte ``offset``."""
        self._check_aligned(offset, length)
        buf = ctypes.create_string_buffer(length)
        iov = _Iovec(ctypes.cast(buf, ctypes.c_void_p), length)
        task = self._run("READ(16)", lambda: self._lib.iscsi_read16_iov_sync(
            self._ctx, self.lun, offset // self.block_size, length,
            self.block_size, 0, 0, 0, 0, 0, ctypes.byref(iov), 1))
        self._lib.scsi_free_scsi_task(task)
        return buf.raw

    def _check_aligned(self, offset: int, length: int) -> None:
        if offset % self.block_size or length % self.block_size:
            raise ValueError("offset %d and length %d must be multiples of "
                             "%d" % (offset, length, self.block_size))

    # -- SCSI-3 persistent reservations ------------------------------------
    def reserve_out(self, action: int, key: int, sa_key: int = 0,
                    pr_type: int = 0) -> None:
        """PERSISTENT RESERVE OUT ``action`` with this nexus's ``key``."""
        params = _Out(key, sa_key, 0, 0, 0)
        task = self._run("PERSISTENT RESERVE OUT(%d)" % action,
                         lambda: self._lib.iscsi_persistent_reserve_out_sync(
                             self._ctx, self.lun, action, 0, pr_type,
                             ctypes.byref(params)))
        self._lib.scsi_free_scsi_task(task)

    def register(self, key: int) -> None:
        """Register ``key`` for this nexus, whatever it had before."""
        self.reserve_out(PR_REGISTER_AND_IGNORE, 0, key)

    def reserve(self, key: int,
                pr_type: int = WRITE_EXCLUSIVE_REGISTRANTS_ONLY) -> None:
        self.reserve_out(PR_RESERVE, key, pr_type=pr_type)

    def preempt(self, key: int, victim: int,
                pr_type: int = WRITE_EXCLUSIVE_REGISTRANTS_ONLY,
                abort: bool = False) -> None:
        """Remove ``victim``'s registration (and take its reservation).

        NOTE(ashlar): tgt 1.0.85 answers PREEMPT AND ABORT (``abort``)
        with ILLEGAL REQUEST (it is commented out in its usr/spc.c); on
        tgt the fence is PREEMPT, after which the victim's next command
        is refused with RESERVATION CONFLICT.
        """
        self.reserve_out(PR_PREEMPT_AND_ABORT if abort else PR_PREEMPT,
                         key, victim, pr_type)

    def read_keys(self) -> list[int]:
        """The registered keys (PERSISTENT RESERVE IN, READ KEYS)."""
        task = self._reserve_in(PR_READ_KEYS)
        try:
            data = self._lib.scsi_datain_unmarshall(task)
            # uint32 prgeneration, additional_length; int num_keys; keys[]
            count = struct.unpack("=IIi", ctypes.string_at(data, 12))[2]
            raw = ctypes.string_at(data + 16, 8 * count)
        finally:
            self._lib.scsi_free_scsi_task(task)
        return list(struct.unpack("=%dQ" % count, raw))

    def read_reservation(self) -> tuple[int, int] | None:
        """(holder's key, type) of the reservation, or None."""
        task = self._reserve_in(PR_READ_RESERVATION)
        try:
            data = self._lib.scsi_datain_unmarshall(task)
            # uint32 prgeneration, additional_length; int reserved (set
            # when a reservation is held); uint64 key; uchar scope, type
            _, _, held, key, _, pr_type = struct.unpack(
                "=IIi4xQBB", ctypes.string_at(data, 26))
        finally:
            self._lib.scsi_free_scsi_task(task)
        return (key, pr_type) if held else None

    def _reserve_in(self, action: int) -> int:
        return self._run("PERSISTENT RESERVE IN(%d)" % action,
                         lambda: self._lib.iscsi_persistent_reserve_in_sync(
                             self._ctx, self.lun, action, PR_IN_LENGTH))
