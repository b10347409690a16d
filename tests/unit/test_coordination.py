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
