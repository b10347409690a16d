"""Fencing on Ceph: blocklist one host's client instances of an image.

A host's clients of an image are the librados instances its agent
registered for the attachment (their addresses, ``IP:0/nonce``) and, when
the host's address tells it apart from the other hosts of the volume, every
watcher of the image at that address (librbd registers a watch on each
image it opens read/write, a hypervisor's included).  Each goes on the OSD
blocklist (``osd blocklist add``, which Cinder's cephx caps ``profile rbd``
allow); a blocklisted instance gets ESHUTDOWN for every next operation,
while other instances, on this host or another, go on.  A new instance of
the fenced host is not blocked: the control plane refuses it a new
attachment while the fenced one exists.

The monitor's answer does not mean that the OSDs enforce the entry yet:
they apply the new map milliseconds later.  So a fence first waits for the
latest map itself, then sends one stat to every placement group of the
pool: an OSD handles an op only once its PG has the op's map epoch, so
when those stats return, every PG refuses the fenced instances.  A fence
that cannot prove this within ``rados_connect_timeout`` (the map wait or a
stat failed or did not end, or some PG has no object name found for it)
raises ``FencingFailed`` instead of returning: the entries stay, but the
caller is told the fence is not proven.

Lifting an entry (``osd blocklist rm``) needs more than ``profile rbd``:
``mon 'profile rbd, allow command "osd blocklist"'``.
"""

import errno
import json
import threading
import types
from typing import TYPE_CHECKING

from oslo_log import log as logging

from common import exception
from drivers import base

if TYPE_CHECKING:
    # NOTE(ashlar): the bindings are imported by the driver's do_setup
    # (they are optional); here they only name the types.
    import rados

LOG = logging.getLogger(__name__)
#: Most object names tried per placement group when looking for one that
#: lands in each.
_TRIES_PER_PG = 64


def address_ip(addr: str) -> str:
    """The IP of a Ceph entity address (``1.2.3.4:0/42``, ``[::1]:0/42``,
    ``v1:1.2.3.4:6789/0``)."""
    host = addr.rsplit("/", 1)[0].rsplit(":", 1)[0]
    if host.startswith(("v1:", "v2:", "any:")):
        host = host.split(":", 1)[1]
    return host.strip("[]")


class Fencer:
    """Blocklisting and its barrier, on the driver's cluster connection."""

    def __init__(self, rados_mod: types.ModuleType,
                 rbd_mod: types.ModuleType, client: "rados.Rados",
                 ioctx: "rados.Ioctx", pool: str, expire: int,
                 timeout: int) -> None:
        self._rados = rados_mod
        self._rbd = rbd_mod
        self._client = client
        self._ioctx = ioctx
        self._pool = pool
        self._expire = expire
        self._timeout = timeout
        #: (pg_num, one object name per PG) of the pool, as last learnt.
        self._pg_names: tuple[int, list[str]] = (0, [])
        self._guard = threading.Lock()

    # -- fence ------------------------------------------------------------
    def fence(self, image_name: str, target: base.FenceTarget) -> list[str]:
        """Blocklist ``target``'s instances of the image; return once the
        OSDs enforce it.

        :returns: the addresses blocklisted.
        """
        if target.connected and not (target.ip or target.clients):
            raise exception.FencingFailed(
                what="fence %s" % target.host,
                reason="nothing tells its Ceph clients apart: it registered "
                       "none (ashlar-agent registers them before it writes) "
                       "and its address is loopback or shared with another "
                       "host of the volume")
        addrs = sorted(self.clients_of(image_name, target))
        for addr in addrs:
            self._blocklist("add", addr, expire=float(self._expire))
        self._barrier()
        LOG.info("Fenced %(host)s from %(image)s: blocklisted %(addrs)s",
                 {"host": target.host, "image": image_name,
                  "addrs": ", ".join(addrs) or "nothing (no client)"})
        return addrs

    def clients_of(self, image_name: str, target: base.FenceTarget
                   ) -> set[str]:
        """The registered instances plus, when the host's address is its
        own, the image's watchers at that address (never this driver's)."""
        found = set(target.clients)
        if target.ip:
            try:
                with self._rbd.Image(self._ioctx, image_name,
                                     read_only=True) as image:
                    watchers = list(image.watchers_list())
            except self._rbd.ImageNotFound:
                watchers = []
            found.update(w["addr"] for w in watchers
                         if address_ip(w["addr"]) == target.ip)
        found.discard(self._client.get_addrs())
        return found

    def unfence(self, addrs: list[str]) -> None:
        """Take the addresses off the blocklist (absent ones are fine)."""
        for addr in addrs:
            self._blocklist("rm", addr)
        LOG.info("Lifted the blocklist entries %s", ", ".join(addrs))

    def _blocklist(self, op: str, addr: str, **extra: object) -> None:
        command = dict(prefix="osd blocklist", blocklistop=op, addr=addr,
                       **extra)
        ret, _out, err = self._client.mon_command(
            json.dumps(command), b"", timeout=self._timeout)
        if ret == -13:
            raise exception.FencingFailed(
                what="%s a blocklist entry" % op,
                reason="the cephx user may not (%s); 'rm' needs mon caps "
                       "'profile rbd, allow command \"osd blocklist\"'" % err)
        if ret:
            raise exception.FencingFailed(
                what="%s blocklist entry %s" % (op, addr),
                reason="%d %s" % (ret, err))

    # -- barrier ----------------------------------------------------------
    def _barrier(self) -> None:
        """Return once every PG of the pool has the latest OSD map.

        :raises FencingFailed: when that cannot be proven within the
            timeout: the wait for the map failed or did not end, a PG's
            stat failed (ENOENT, the usual answer, is fine) or did not
            return, or the pool's PGs could not all be named.
        """
        self._wait_for_latest_osdmap()
        names = self._names_per_pg()
        answered = _Countdown(len(names))
        completions = [self._ioctx.aio_stat(name, answered.one)
                       for name in names]
        if not answered.wait(self._timeout):
            raise self._unproven("%d of %d placement groups did not answer "
                                 "within %ss" % (answered.left, len(names),
                                                 self._timeout))
        failed = sorted({ret for ret in (c.get_return_value()
                                         for c in completions)
                         if ret < 0 and ret != -errno.ENOENT})
        if failed:
            raise self._unproven("placement groups answered %s" % failed)

    def _wait_for_latest_osdmap(self) -> None:
        """librados's wait for the newest OSD map, bounded by the timeout
        (librados itself waits for as long as the monitors take)."""
        result: list[int] = []
        waiter = threading.Thread(
            target=lambda: result.append(
                self._client.wait_for_latest_osdmap()),
            name="fence-osdmap-wait", daemon=True)
        waiter.start()
        waiter.join(self._timeout)
        if not result:
            raise self._unproven("the newest OSD map did not come within "
                                 "%ss" % self._timeout)
        if result[0] and result[0] < 0:
            raise self._unproven("waiting for the newest OSD map failed "
                                 "(%d)" % result[0])

    def _unproven(self, why: str) -> exception.FencingFailed:
        return exception.FencingFailed(
            what="prove the fence is enforced",
            reason="%s; the blocklist entries stand, but the OSDs may not "
                   "refuse the fenced host yet" % why)

    def _names_per_pg(self) -> list[str]:
        """One object name that maps to each PG of the pool.

        :raises FencingFailed: no name was found for some PG.
        """
        pg_num = self._mon("osd pool get", pool=self._pool,
                           var="pg_num")["pg_num"]
        with self._guard:
            if self._pg_names[0] == pg_num:
                return self._pg_names[1]
        names: dict[str, str] = {}
        for i in range(pg_num * _TRIES_PER_PG):
            name = "ashlar.fence-barrier.%d" % i
            pgid = self._mon("osd map", pool=self._pool, object=name)["pgid"]
            names.setdefault(pgid, name)
            if len(names) == pg_num:
                break
        if len(names) < pg_num:
            raise self._unproven("only %d of the pool's %d placement groups "
                                 "could be named" % (len(names), pg_num))
        with self._guard:
            self._pg_names = (pg_num, list(names.values()))
        return self._pg_names[1]

    def _mon(self, prefix: str, **args: object) -> dict:
        ret, out, err = self._client.mon_command(
            json.dumps(dict(prefix=prefix, format="json", **args)), b"",
            timeout=self._timeout)
        if ret:
            raise exception.FencingFailed(what=prefix,
                                          reason="%d %s" % (ret, err))
        return json.loads(out)


class _Countdown:
    """Counts answers that librados's finisher thread delivers."""

    def __init__(self, expected: int) -> None:
        self.left = expected
        self._cond = threading.Condition()

    def one(self, *_answer: object) -> None:
        with self._cond:
            self.left -= 1
            self._cond.notify_all()

    def wait(self, timeout: float) -> bool:
        """Whether every answer came within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self.left <= 0, timeout)
