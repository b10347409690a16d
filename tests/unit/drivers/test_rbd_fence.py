"""drivers/rbd_fence.py on a stand-in cluster connection: who is fenced,
what is sent to the monitor, and the barrier's one stat per PG.  (The real
cluster's behaviour is in tests/functional/test_rbd.py.)"""

import errno
import json
import threading

import pytest

from common import exception
from drivers import base
from drivers import rbd_fence

OWN = "127.0.0.1:0/1"


class Client:
    """A librados connection: monitor commands answered from a table."""

    def __init__(self, pg_num=4, refuse=None, map_wait=0, pgs_seen=None):
        self.commands = []
        self.pg_num = pg_num
        self.refuse = refuse
        self.waited = 0
        self.map_wait = map_wait
        #: How many PGs "osd map" ever names (all of them by default).
        self.pgs_seen = pgs_seen or pg_num

    def get_addrs(self):
        return OWN

    def wait_for_latest_osdmap(self):
        self.waited += 1
        return self.map_wait

    def mon_command(self, command, inbuf, timeout=0):
        cmd = json.loads(command)
        self.commands.append(cmd)
        if cmd["prefix"] == "osd pool get":
            return 0, json.dumps({"pg_num": self.pg_num}).encode(), ""
        if cmd["prefix"] == "osd map":
            number = int(cmd["object"].rsplit(".", 1)[1])
            return 0, json.dumps({"pgid": "1.%x" % (
                number * 7 % self.pg_num % self.pgs_seen)}).encode(), ""
        if self.refuse and cmd.get("blocklistop") == self.refuse:
            return -13, b"", "access denied"
        return 0, b"", "blocklisting"


class Completion:
    def __init__(self, ret):
        self.ret = ret

    def get_return_value(self):
        return self.ret


class Ioctx:
    """Each stat answers at once with ``answer`` (ENOENT: no such
    object, the usual answer), or never with None."""

    def __init__(self, answer=-errno.ENOENT, silent=0):
        self.stats = []
        self.answer = answer
        self.silent = silent

    def aio_stat(self, name, oncomplete):
        self.stats.append(name)
        completion = Completion(self.answer)
        if len(self.stats) > self.silent:
            oncomplete(completion, None, None)
        return completion


class Image:
    def __init__(self, watchers):
        self._watchers = watchers

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def watchers_list(self):
        return iter(self._watchers)


class Rbd:
    class ImageNotFound(Exception):
        pass

    def __init__(self, watchers):
        self.watchers = watchers

    def Image(self, ioctx, name, read_only=False):
        assert read_only  # a read-only open registers no watch
        return Image(self.watchers)


def _fencer(watchers=(), ioctx=None, timeout=5, **client):
    cluster = Client(**client)
    ioctx = ioctx or Ioctx()
    fencer = rbd_fence.Fencer(None, Rbd(list(watchers)), cluster, ioctx,
                              "volumes", 3600, timeout)
    return fencer, cluster, ioctx


def _blocklisted(cluster, op="add"):
    return [c["addr"] for c in cluster.commands
            if c.get("blocklistop") == op]


@pytest.mark.parametrize("addr, ip", [
    ("10.0.0.5:0/42", "10.0.0.5"), ("[::1]:0/42", "::1"),
    ("v1:10.0.0.5:6789/0", "10.0.0.5")])
def test_address_ip(addr, ip):
    assert rbd_fence.address_ip(addr) == ip


def test_registered_clients_are_blocklisted_then_every_pg_is_stat():
    fencer, cluster, ioctx = _fencer(pg_num=4)
    target = base.FenceTarget(host="a", clients=("127.0.0.1:0/9",
                                                 "127.0.0.1:0/8"))
    assert fencer.fence("volume-x", target) == ["127.0.0.1:0/8",
                                                "127.0.0.1:0/9"]
    assert _blocklisted(cluster) == ["127.0.0.1:0/8", "127.0.0.1:0/9"]
    assert all(c["expire"] == 3600.0 for c in cluster.commands
               if c.get("blocklistop") == "add")
    assert cluster.waited == 1
    pgids = {json.loads(cluster.mon_command(json.dumps(
        {"prefix": "osd map", "object": name}), b"")[1])["pgid"]
        for name in ioctx.stats}
    assert len(ioctx.stats) == 4 and len(pgids) == 4


def test_the_barrier_names_are_learnt_once_per_pg_count():
    fencer, cluster, _ioctx = _fencer(pg_num=4)
    target = base.FenceTarget(host="a", clients=("127.0.0.1:0/9",))
    fencer.fence("volume-x", target)
    maps = sum(1 for c in cluster.commands if c["prefix"] == "osd map")
    fencer.fence("volume-x", target)
    assert sum(1 for c in cluster.commands
               if c["prefix"] == "osd map") == maps


def test_watchers_at_the_hosts_own_address_are_fenced_never_ours():
    watchers = [{"addr": "10.0.0.5:0/1"}, {"addr": "10.0.0.6:0/2"},
                {"addr": OWN}]
    fencer, cluster, _ioctx = _fencer(watchers)
    fencer.fence("volume-x", base.FenceTarget(host="a", ip="10.0.0.5"))
    assert _blocklisted(cluster) == ["10.0.0.5:0/1"]
    fencer, cluster, _ioctx = _fencer(watchers)
    fencer.fence("volume-x", base.FenceTarget(host="a", ip="127.0.0.1"))
    assert _blocklisted(cluster) == []


def test_a_connected_host_nothing_identifies_is_refused():
    fencer, cluster, _ioctx = _fencer([{"addr": "127.0.0.1:0/5"}])
    with pytest.raises(exception.FencingFailed, match="nothing tells"):
        fencer.fence("volume-x", base.FenceTarget(host="a"))
    assert _blocklisted(cluster) == []
    # a row that never connected has nothing to revoke
    fencer.fence("volume-x", base.FenceTarget(host="", connected=False))


def test_unfence_removes_and_says_which_caps_it_needs():
    fencer, cluster, _ioctx = _fencer()
    fencer.unfence(["127.0.0.1:0/9"])
    assert _blocklisted(cluster, "rm") == ["127.0.0.1:0/9"]
    fencer, cluster, _ioctx = _fencer(refuse="rm")
    with pytest.raises(exception.FencingFailed, match="osd blocklist"):
        fencer.unfence(["127.0.0.1:0/9"])


TARGET = base.FenceTarget(host="a", clients=("127.0.0.1:0/9",))


@pytest.mark.parametrize("answer", [0, -errno.ENOENT])
def test_a_pg_that_answers_found_or_not_proves_the_fence(answer):
    fencer, _cluster, ioctx = _fencer(ioctx=Ioctx(answer=answer))
    assert fencer.fence("volume-x", TARGET) == ["127.0.0.1:0/9"]
    assert len(ioctx.stats) == 4


def test_a_pg_that_fails_its_stat_fails_the_fence():
    fencer, cluster, _ioctx = _fencer(ioctx=Ioctx(answer=-errno.EIO))
    with pytest.raises(exception.FencingFailed, match=r"answered \[-5\]"):
        fencer.fence("volume-x", TARGET)
    assert _blocklisted(cluster) == ["127.0.0.1:0/9"]


def test_a_pg_that_never_answers_fails_the_fence_in_time():
    """The stats' answers are awaited for ``timeout`` seconds, not for
    ever (the test would hang otherwise)."""
    fencer, _cluster, _ioctx = _fencer(ioctx=Ioctx(silent=1), timeout=0.05)
    with pytest.raises(exception.FencingFailed,
                       match="1 of 4 placement groups did not answer"):
        fencer.fence("volume-x", TARGET)


def test_a_failed_wait_for_the_osd_map_fails_the_fence():
    fencer, _cluster, ioctx = _fencer(map_wait=-errno.ETIMEDOUT)
    with pytest.raises(exception.FencingFailed, match="newest OSD map"):
        fencer.fence("volume-x", TARGET)
    assert ioctx.stats == []


def test_a_wait_for_the_osd_map_that_never_ends_fails_the_fence():
    release = threading.Event()
    fencer, cluster, _ioctx = _fencer(timeout=0.05)
    cluster.wait_for_latest_osdmap = lambda: release.wait() and 0
    try:
        with pytest.raises(exception.FencingFailed, match="did not come"):
            fencer.fence("volume-x", TARGET)
    finally:
        release.set()


def test_pgs_that_no_name_maps_to_fail_the_fence():
    """A barrier that would stat fewer PGs than the pool has proves
    nothing for the others."""
    fencer, _cluster, ioctx = _fencer(pg_num=4, pgs_seen=3)
    with pytest.raises(exception.FencingFailed,
                       match="only 3 of the pool's 4 placement groups"):
        fencer.fence("volume-x", TARGET)
    assert ioctx.stats == []
