"""Locks that guard a volume across the volume nodes serving it.

A volume node outside a cluster is the only process that works on its
backends' volumes: in-process locks are enough, and cost nothing.  The
members of a cluster (``[DEFAULT] cluster``) serve the same volumes, so a
lock that guards one must also hold across them: it is taken in-process
first, then through tooz at ``[coordination] backend_url`` (Cinder's
coordination: etcd through etcd3gw, or Redis; a file folder for members on
one host).  A member that dies keeps its locks until their lease lapses
(etcd: ``lock_timeout``); a live member's sweep that then takes such a lock
without waiting knows nobody works on the volume any more, and resumes it.
"""

import contextlib
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING

from oslo_log import log as logging

from common import exception

if TYPE_CHECKING:
    from tooz import coordination as tooz_coordination
    from tooz import locking as tooz_locking

LOG = logging.getLogger(__name__)

#: Prefix of every tooz lock name Ashlar takes.
PREFIX = "ashlar-"
#: How long a lock is asked for again while the lock service cannot be
#: reached (seconds), and the pause between two asks.  NOTE(ashlar): an
#: etcd member's death costs its clients an election (about a second,
#: etcd answering 503 meanwhile) and, behind a front, a new connection;
#: 10 s covers both with room on a loaded host (tests/functional/
#: test_ha.py kills the leader).
UNREACHABLE_PATIENCE = 10.0
UNREACHABLE_PAUSE = 0.2


class KeyedLocks:
    """One in-process lock per key, forgotten when nobody holds or waits
    for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Hashable, list] = {}  # key -> [lock, users]

    @contextlib.contextmanager
    def hold(self, key: Hashable, blocking: bool = True) -> Iterator[bool]:
        """Hold ``key``'s lock; yields whether it was taken (always, when
        ``blocking``)."""
        with self._guard:
            entry = self._locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        taken = entry[0].acquire(blocking)
        try:
            yield taken
        finally:
            if taken:
                entry[0].release()
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    self._locks.pop(key, None)


class Locks:
    """In-process locks, and tooz's too for the members of a cluster."""

    def __init__(self, backend_url: str | None, member_id: str) -> None:
        """:param backend_url: the tooz URL; None outside a cluster.
        :param member_id: this process's name among the members."""
        self.backend_url = backend_url
        self.member_id = member_id
        self._local = KeyedLocks()
        # NOTE(ashlar): tooz is imported on first use: a volume node
        # outside a cluster never pays its import.
        self._coordinator: tooz_coordination.CoordinationDriver | None = None
        self._started = threading.Lock()

    @property
    def distributed(self) -> bool:
        return self.backend_url is not None

    def start(self) -> None:
        """Connect to the lock service (once; a no-op outside a cluster).

        :raises tooz.coordination.ToozError: it cannot be reached.
        """
        url = self.backend_url
        if url is None:
            return
        with self._started:
            if self._coordinator is not None:
                return
            from tooz import coordination
            coordinator = coordination.get_coordinator(
                url, self.member_id.encode())
            coordinator.start(start_heart=True)
            self._coordinator = coordinator
            LOG.info("Cluster locks at %s", _shown(url))

    def stop(self) -> None:
        """Let go of the lock service (the locks held lapse with it)."""
        with self._started:
            coordinator, self._coordinator = self._coordinator, None
        if coordinator is not None:
            try:
                coordinator.stop()
            except Exception:  # noqa: BLE001 - leases lapse by themselves
                LOG.exception("Could not leave the lock service")

    @contextlib.contextmanager
    def hold(self, name: str, blocking: bool = True) -> Iterator[bool]:
        """Hold the lock ``name``; yields whether it was taken (always,
        when ``blocking``).

        :raises exception.LockServiceUnavailable: the lock service failed;
            the lock is not held (a 503 to the api: nothing was done).
        """
        with self._local.hold(name, blocking) as taken:
            if not taken or not self.distributed:
                yield taken
                return
            lock = self._take(name, blocking)
            if lock is None:
                yield False
                return
            try:
                yield True
            finally:
                _release(lock, name)

    def _take(self, name: str,
              blocking: bool) -> "tooz_locking.Lock | None":
        """The tooz lock ``name`` once taken (None: held by another).

        :raises exception.LockServiceUnavailable: the service failed.
        """
        from tooz import coordination
        try:
            self.start()
            assert self._coordinator is not None
            lock = self._coordinator.get_lock((PREFIX + name).encode())
            return lock if _acquire(lock, name, blocking) else None
        except coordination.ToozError as exc:
            LOG.error("Lock service failed taking %s: %s", name, exc)
            raise exception.LockServiceUnavailable() from exc


def _acquire(lock: "tooz_locking.Lock", name: str, blocking: bool,
             patience: float | None = None) -> bool:
    """``lock.acquire``, asked again while the lock service cannot be
    reached, for ``patience`` seconds (``UNREACHABLE_PATIENCE``).

    An ask whose answer was lost may have taken the lock: asked again, it
    finds it taken (by the lost ask's lease), so a non-blocking ask says
    no and a blocking one waits for that lease to lapse (``lock_timeout``)
    -- later, never twice.

    :raises tooz.coordination.ToozConnectionError: still unreachable.
    """
    return _patiently(lambda: lock.acquire(blocking=blocking),
                      "taking %s" % name, patience)


def _release(lock: "tooz_locking.Lock", name: str,
             patience: float | None = None) -> None:
    """Release a tooz lock, asked again while the service cannot be
    reached (as ``_acquire``).

    NOTE(ashlar): tooz keeps refreshing the lease of a lock whose release
    failed (it stays among the coordinator's acquired locks), so a lock
    given up after one failed release was held for good: the volume's
    next operation and every sweep found it taken (tests/functional/
    test_ha.py, the etcd leader's kill).
    """
    try:
        if not _patiently(lock.release, "releasing %s" % name, patience):
            LOG.warning("Lock %s was no longer held (its lease lapsed)",
                        name)
    except Exception:  # noqa: BLE001 - the lease lapses by itself
        LOG.exception("Could not release lock %s; its lease lapses", name)


def _patiently(ask: Callable[[], bool], what: str,
               patience: float | None) -> bool:
    """``ask()``, asked again while the lock service cannot be reached,
    for ``patience`` seconds (``UNREACHABLE_PATIENCE``)."""
    from tooz import coordination
    deadline = time.monotonic() + (UNREACHABLE_PATIENCE if patience is None
                                   else patience)
    while True:
        try:
            return bool(ask())
        except coordination.ToozConnectionError as exc:
            if time.monotonic() >= deadline:
                raise
            LOG.warning("Lock service unreachable %s (%s); asking again",
                        what, exc)
        time.sleep(UNREACHABLE_PAUSE)


def _shown(url: str) -> str:
    """The URL without its credentials, for the log."""
    scheme, sep, rest = url.partition("://")
    return scheme + sep + rest.rpartition("@")[2]
