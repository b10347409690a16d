"""common.coordination: in-process locks, and tooz's for the members of a
cluster (the file driver here: the same code path as etcd's or Redis's;
tests/functional runs it on a real etcd)."""

import os
import signal
import subprocess
import sys

import pytest

from common import coordination


@pytest.fixture
def url(tmp_path):
    return "file://%s" % tmp_path


def test_outside_a_cluster_the_locks_are_in_process():
    locks = coordination.Locks(None, "node1@file")
    assert not locks.distributed
    with locks.hold("volume-x") as taken:
        assert taken
        with locks.hold("volume-x", blocking=False) as again:
            assert not again
        with locks.hold("volume-y", blocking=False) as other:
            assert other
    with locks.hold("volume-x", blocking=False) as after:
        assert after


def test_two_members_exclude_each_other(url):
    first = coordination.Locks(url, "node1@file")
    second = coordination.Locks(url, "node2@file")
    try:
        with first.hold("volume-x") as taken:
            assert taken
            with second.hold("volume-x", blocking=False) as theirs:
                assert not theirs
        with second.hold("volume-x", blocking=False) as theirs:
            assert theirs
    finally:
        first.stop()
        second.stop()


HOLDER = """
import sys
sys.path.insert(0, %r)
from common import coordination
locks = coordination.Locks(sys.argv[1], "node9@file")
with locks.hold("volume-x"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_dead_members_lock_lapses(url):
    """A member killed while it holds a lock: the others may take it (a
    sweep's cue that nobody works on the volume any more)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER % os.getcwd(), url],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    survivor = coordination.Locks(url, "node1@file")
    try:
        assert holder.stdout.readline().strip() == "held"
        with survivor.hold("volume-x", blocking=False) as taken:
            assert not taken
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        with survivor.hold("volume-x", blocking=False) as taken:
            assert taken
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate(timeout=30)
        survivor.stop()


class _Flaky:
    """A tooz lock whose service is unreachable for its first asks."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.asks = 0

    def acquire(self, blocking=True):
        from tooz import coordination as tooz_coordination
        self.asks += 1
        if self.asks <= self.failures:
            raise tooz_coordination.ToozConnectionError("Service Unavailable")
        return True


def test_a_lock_is_asked_again_while_its_service_is_unreachable(monkeypatch):
    """An etcd member's death (an election, a front moving) fails a few
    asks; the lock is taken once the service answers."""
    monkeypatch.setattr(coordination, "UNREACHABLE_PAUSE", 0)
    lock = _Flaky(failures=3)
    assert coordination._acquire(lock, "volume-x", blocking=False)
    assert lock.asks == 4


def test_a_lock_service_unreachable_for_too_long_fails_the_ask(monkeypatch):
    from tooz import coordination as tooz_coordination
    monkeypatch.setattr(coordination, "UNREACHABLE_PAUSE", 0)
    lock = _Flaky(failures=10 ** 9)
    with pytest.raises(tooz_coordination.ToozConnectionError):
        coordination._acquire(lock, "volume-x", blocking=True, patience=0.05)
    assert lock.asks > 1


def test_a_lock_service_failure_is_a_503_of_the_member(url, monkeypatch):
    """A member whose lock service stays unreachable did nothing: it
    raises what the api answers as a 503, not tooz's error (a 500)."""
    from common import exception
    monkeypatch.setattr(coordination, "UNREACHABLE_PAUSE", 0)
    monkeypatch.setattr(coordination, "UNREACHABLE_PATIENCE", 0.05)
    locks = coordination.Locks(url, "node1@file")
    locks.start()
    try:
        monkeypatch.setattr(locks._coordinator, "get_lock",
                            lambda name: _Flaky(failures=10 ** 9))
        with pytest.raises(exception.LockServiceUnavailable):
            with locks.hold("volume-x"):
                pass
    finally:
        locks.stop()


class _FlakyRelease(_Flaky):
    def __init__(self, failures: int) -> None:
        super().__init__(0)
        self.release_failures = failures
        self.releases = 0

    def release(self):
        from tooz import coordination as tooz_coordination
        self.releases += 1
        if self.releases <= self.release_failures:
            raise tooz_coordination.ToozConnectionError("Service Unavailable")
        return True


def test_a_release_is_asked_again_while_its_service_is_unreachable(
        monkeypatch):
    """tooz refreshes the lease of a lock whose release failed: given up
    after one failure, the lock would be held for good."""
    monkeypatch.setattr(coordination, "UNREACHABLE_PAUSE", 0)
    lock = _FlakyRelease(failures=3)
    coordination._release(lock, "volume-x")
    assert lock.releases == 4
