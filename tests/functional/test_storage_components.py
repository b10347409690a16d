"""The userspace iSCSI and NFS stacks issue 42 builds on, started and used.

tgt (deploy/testbed/components/tgt.py) serves a file-backed LUN that one
initiator may log in to; common/libiscsi.py logs in, reads, writes and
fences by SCSI-3 persistent reservation.  nfs-ganesha
(components/ganesha.py) exports a folder that common/libnfs.py reads and
writes.  Start time, Pss and the fence latency are printed (``pytest
-s``); the bounds are generous, so a loaded machine does not fail them.
Skipped with the install command when a package is missing (failed
under ``CI=true``).
"""

import json
import os
import statistics
import time

import pytest

from common import libiscsi
from common import libnfs
from deploy.testbed.components import ganesha as ganesha_component
from deploy.testbed.components import tgt as tgt_component

IQN = "iqn.2026-11.org.ashlar"
HOST_A = IQN + ":host-a"
HOST_B = IQN + ":host-b"
STRANGER = IQN + ":host-c"
LUN_BYTES = 16 << 20
KEY_A, KEY_B = 0xA5A5, 0xB6B6
#: PREEMPTs timed (figures only: ``benchmarks.storage_userspace`` is
#: their benchmark).
FENCE_RUNS = 20


def report(what: str, **figures: object) -> None:
    print("\nstorage %s: %s" % (what, json.dumps(figures, default=str)))


@pytest.fixture(scope="module")
def tgt(tmp_path_factory):
    tgt_component.available()
    with tgt_component.Tgt(tmp_path_factory.mktemp("tgt")) as target:
        report("tgt up", seconds=round(target.start_seconds, 2),
               pss_mib=target.pss_mib(),
               backing_stores=target.backing_stores())
        yield target


@pytest.fixture
def target(tgt, tmp_path):
    """A target whose LUN only hosts A and B may use: (its tid, IQN)."""
    backing = tmp_path / "lun.img"
    with open(backing, "wb") as out:
        out.truncate(LUN_BYTES)
    iqn = "%s:vol-%s" % (IQN, tmp_path.name[-8:].lower().replace("_", "-"))
    tid = tgt.add_target(iqn, str(backing), [HOST_A, HOST_B])
    yield tid, iqn
    tgt.delete_target(tid)


@pytest.fixture
def lun(target):
    """The IQN of ``target``."""
    return target[1]


def test_target_admits_only_bound_initiators(tgt, lun):
    with pytest.raises(libiscsi.Error, match="refused"):
        libiscsi.Session(tgt.portal, lun, 1, STRANGER)
    block = os.urandom(4096)
    with libiscsi.Session(tgt.portal, lun, 1, HOST_A) as host_a:
        assert host_a.blocks * host_a.block_size == LUN_BYTES
        host_a.write(8192, block)
    with libiscsi.Session(tgt.portal, lun, 1, HOST_B) as host_b:
        assert host_b.read(8192, 4096) == block


def test_chap_per_target(tgt, target):
    """Cinder's tgtadm helper gives each volume's target a CHAP account:
    a bound initiator still needs the secret."""
    tid, lun = target
    user = "user-%d" % tid
    tgt.admin("--mode", "account", "--op", "new", "--user", user,
              "--password", "secret-%d-0123" % tid)
    tgt.admin("--mode", "account", "--op", "bind", "--tid", str(tid),
              "--user", user)
    for chap in (None, (user, "wrong-secret-0123")):
        with pytest.raises(libiscsi.Error, match="Authentication"):
            libiscsi.Session(tgt.portal, lun, 1, HOST_A, chap=chap)
    with libiscsi.Session(tgt.portal, lun, 1, HOST_A, chap=(
            user, "secret-%d-0123" % tid)) as host_a:
        assert host_a.read(0, 512) == bytes(512)
    tgt.admin("--mode", "account", "--op", "delete", "--user", user)


def test_preempt_fences_the_old_writer(tgt, lun):
    """A reserves (Write Exclusive, Registrants Only) and writes; B
    preempts A's key; A's next write is refused with RESERVATION
    CONFLICT while B's goes through."""
    with libiscsi.Session(tgt.portal, lun, 1, HOST_A) as host_a, \
            libiscsi.Session(tgt.portal, lun, 1, HOST_B) as host_b:
        took = []
        for _ in range(FENCE_RUNS):
            host_a.register(KEY_A)
            host_b.register(KEY_B)
            host_a.reserve(KEY_A)
            host_a.write(0, b"a" * 512)
            assert host_b.read_reservation() == (
                KEY_A, libiscsi.WRITE_EXCLUSIVE_REGISTRANTS_ONLY)
            started = time.perf_counter()
            host_b.preempt(KEY_B, KEY_A)
            took.append(time.perf_counter() - started)
            with pytest.raises(libiscsi.ReservationConflict):
                host_a.write(0, b"A" * 512)
            assert host_a.unit_attention == (
                libiscsi.ASCQ_RESERVATIONS_PREEMPTED)
            assert host_b.read_keys() == [KEY_B]
            host_b.write(0, b"b" * 512)
            assert host_a.read(0, 512) == b"b" * 512
            host_b.reserve_out(libiscsi.PR_CLEAR, KEY_B)
    took.sort()
    report("fence by PREEMPT", runs=FENCE_RUNS,
           p50_ms=round(statistics.median(took) * 1e3, 2),
           p95_ms=round(took[int(0.95 * (FENCE_RUNS - 1))] * 1e3, 2),
           max_ms=round(took[-1] * 1e3, 2))
    assert len(took) == FENCE_RUNS


def test_acl_removal_and_disconnect_cut_a_host_off(tgt, target):
    """The durable half of a fence (tgt forgets reservations at a
    restart): the host's IQN leaves the ACL and its connection is
    closed; its open session's next write fails and it cannot log in
    again, while the other host writes on."""
    tid, lun = target
    with libiscsi.Session(tgt.portal, lun, 1, HOST_A) as host_a, \
            libiscsi.Session(tgt.portal, lun, 1, HOST_B) as host_b:
        host_a.write(0, b"a" * 512)
        tgt.unbind(tid, HOST_A)
        assert tgt.disconnect(tid, HOST_A) == 1
        with pytest.raises(libiscsi.Error):
            host_a.write(0, b"A" * 512)
        host_b.write(512, b"b" * 512)
        assert host_b.read(0, 1024) == b"a" * 512 + b"b" * 512
    with pytest.raises(libiscsi.Error, match="refused"):
        libiscsi.Session(tgt.portal, lun, 1, HOST_A)


def test_tgt_refuses_preempt_and_abort(tgt, lun):
    """tgt 1.0.85 leaves PREEMPT AND ABORT out (usr/spc.c): the fence
    design must not rely on it (docs/backends.md)."""
    with libiscsi.Session(tgt.portal, lun, 1, HOST_A) as host_a, \
            libiscsi.Session(tgt.portal, lun, 1, HOST_B) as host_b:
        host_a.register(KEY_A)
        host_b.register(KEY_B)
        host_a.reserve(KEY_A)
        with pytest.raises(libiscsi.ScsiError, match="ILLEGAL_REQUEST"):
            host_b.preempt(KEY_B, KEY_A, abort=True)
        host_a.reserve_out(libiscsi.PR_CLEAR, KEY_A)


def test_rbd_backed_lun(tgt, ceph):
    """tgt-rbd serves an RBD image: what an initiator writes, librbd
    reads, and the fence works there too."""
    import rados
    import rbd
    image = "tgt-%d" % os.getpid()
    with rados.Rados(rados_id=ceph.client, conffile=str(ceph.conf)) as rc, \
            rc.open_ioctx(ceph.pool) as ioctx:
        rbd.RBD().create(ioctx, image, LUN_BYTES)
        iqn = "%s:%s" % (IQN, image)
        tid = tgt.add_target(iqn, "%s/%s" % (ceph.pool, image),
                             [HOST_A, HOST_B], bstype="rbd",
                             bsopts="conf=%s;id=%s" % (ceph.conf, ceph.client))
        try:
            block = os.urandom(1 << 20)
            with libiscsi.Session(tgt.portal, iqn, 1, HOST_A) as host_a, \
                    libiscsi.Session(tgt.portal, iqn, 1, HOST_B) as host_b:
                host_a.write(0, block)
                with rbd.Image(ioctx, image, read_only=True) as direct:
                    assert direct.read(0, 1 << 20) == block
                host_a.register(KEY_A)
                host_b.register(KEY_B)
                host_a.reserve(KEY_A)
                host_b.preempt(KEY_B, KEY_A)
                with pytest.raises(libiscsi.ReservationConflict):
                    host_a.write(0, bytes(512))
        finally:
            tgt.delete_target(tid)
            rbd.RBD().remove(ioctx, image)


@pytest.fixture(scope="module")
def ganesha(tmp_path_factory):
    ganesha_component.available()
    with ganesha_component.Ganesha(tmp_path_factory.mktemp("ganesha")
                                   ) as server:
        report("nfs-ganesha up", seconds=round(server.start_seconds, 2),
               pss_mib=server.pss_mib(),
               members={name: server.pss_mib(name) for name in server.procs})
        yield server


def test_ganesha_export_through_libnfs(ganesha):
    """One client writes 1 MiB requests; a second sees the bytes, and so
    does the exported folder."""
    data = os.urandom(4 << 20)
    with libnfs.Share(ganesha.url) as writer, \
            libnfs.Share(ganesha.url) as reader:
        with writer.open("/volume-1", create=True) as volume:
            for offset in range(0, len(data), 1 << 20):
                volume.pwrite(offset, data[offset:offset + (1 << 20)])
            volume.fsync()
        assert (ganesha.export / "volume-1").read_bytes() == data
        assert reader.size("/volume-1") == len(data)
        with reader.open("/volume-1", read_only=True) as volume:
            assert volume.pread(1 << 20, 1 << 20) == data[1 << 20:2 << 20]
        total, free = reader.capacity()
        assert 0 < free <= total
        writer.unlink("/volume-1")
    assert not (ganesha.export / "volume-1").exists()
