#!/usr/bin/env python3
"""The userspace iSCSI and NFS stacks of issue 42, measured bare.

Starts tgt and nfs-ganesha (deploy/testbed/components/tgt.py,
ganesha.py) in a temporary folder and prints one JSON line each:

* ``daemons``: start seconds and Pss (MiB) of tgtd, rpcbind + ganesha;
* ``fence``: ``--runs`` PREEMPTs by host B of host A's key on a LUN that
  A reserved (Write Exclusive, Registrants Only), p50/p95/max ms, then
  the same while A streams 32 KiB writes, and how many of A's writes
  landed after B's own write that followed the PREEMPT (goal 0);
* ``iscsi``, ``nfs``: sequential 1 MiB writes then reads of ``--total``
  MiB through common/libiscsi.py and common/libnfs.py (NFSv3), MiB/s;
* with ``--rbd``, a throwaway Ceph too (deploy/testbed/components/ceph.py)
  and ``fence_rbd``, ``iscsi_rbd``: the same on a LUN that is an RBD image
  (tgt-rbd's ``rbd`` backing store), then ``iscsi_file_beside_ceph``: a
  new file-backed LUN's rates while Ceph runs::

    python -m benchmarks.storage_userspace [--runs 50] [--total 64] [--rbd]
"""

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from common import libiscsi
from common import libnfs
from deploy.testbed.components import ceph
from deploy.testbed.components import ganesha
from deploy.testbed.components import tgt

MIB = 1 << 20
HOST_A, HOST_B = "iqn.2026-11.org.ashlar:bench-a", "iqn.2026-11.org.ashlar:bench-b"
TARGET = "iqn.2026-11.org.ashlar:bench"
RBD_TARGET = "iqn.2026-11.org.ashlar:bench-rbd"
FILE_TARGET = "iqn.2026-11.org.ashlar:bench-file2"
RBD_IMAGE = "bench-lun"
KEY_A, KEY_B = 0xA, 0xB
STREAM_BLOCK = 32 << 10


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50_ms": round(statistics.median(values) * 1e3, 3),
            "p95_ms": round(values[int(0.95 * (len(values) - 1))] * 1e3, 3),
            "max_ms": round(values[-1] * 1e3, 3)}


def _fence_once(portal: str, iqn: str, fencer: libiscsi.Session,
                stream: bool) -> tuple[float, bool]:
    """One PREEMPT of A's key by B: its time, and whether a write of A's
    landed after B's write that followed it."""
    with libiscsi.Session(portal, iqn, 1, HOST_A) as victim:
        victim.register(KEY_A)
        fencer.register(KEY_B)
        victim.reserve(KEY_A)
        writing = threading.Event()
        writer = threading.Thread(target=_stream, args=(victim, writing))
        if stream:
            writer.start()
            writing.wait()
        started = time.perf_counter()
        fencer.preempt(KEY_B, KEY_A)
        took = time.perf_counter() - started
        fencer.write(0, b"B" * STREAM_BLOCK)
        if stream:
            writer.join()
        late = fencer.read(0, STREAM_BLOCK) != b"B" * STREAM_BLOCK
        fencer.reserve_out(libiscsi.PR_CLEAR, KEY_B)
    return took, late


def _stream(victim: libiscsi.Session, writing: threading.Event) -> None:
    """A's writes until the target refuses one (a session is used by one
    thread at a time: libiscsi's context is not thread-safe)."""
    try:
        while True:
            victim.write(0, b"A" * STREAM_BLOCK)
            writing.set()
    except libiscsi.Error:
        writing.set()


def fence(portal: str, runs: int, iqn: str = TARGET) -> dict[str, object]:
    with libiscsi.Session(portal, iqn, 1, HOST_B) as fencer:
        idle = [_fence_once(portal, iqn, fencer, False)[0]
                for _ in range(runs)]
        loaded = [_fence_once(portal, iqn, fencer, True)
                  for _ in range(runs)]
    return {"runs": runs, "idle": _ms(idle),
            "under_writes": _ms([took for took, _ in loaded]),
            "late_writes": sum(late for _, late in loaded)}


def _rates(write, read, total_mib: int) -> dict[str, float]:
    data = os.urandom(MIB)
    started = time.perf_counter()
    for index in range(total_mib):
        write(index * MIB, data)
    written = time.perf_counter() - started
    started = time.perf_counter()
    for index in range(total_mib):
        read(index * MIB, MIB)
    return {"write_mib_s": round(total_mib / written, 1),
            "read_mib_s": round(total_mib / (time.perf_counter() - started),
                                1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--total", type=int, default=64, help="MiB")
    parser.add_argument("--rbd", action="store_true",
                        help="also an RBD image as a LUN, on a throwaway Ceph")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with tgt.Tgt(work / "tgt") as target, \
                ganesha.Ganesha(work / "ganesha") as nfs:
            print(json.dumps({"daemons": {
                "tgtd": [round(target.start_seconds, 2), target.pss_mib()],
                "ganesha": [round(nfs.start_seconds, 2), nfs.pss_mib()]}}))
            lun = work / "lun.img"
            with open(lun, "wb") as out:
                out.truncate((args.total + 1) * MIB)
            target.add_target(TARGET, str(lun), [HOST_A, HOST_B])
            print(json.dumps({"fence": fence(target.portal, args.runs)}))
            with libiscsi.Session(target.portal, TARGET, 1, HOST_A) as host:
                print(json.dumps({"iscsi": _rates(
                    host.write, host.read, args.total)}))
            with libnfs.Share(nfs.url) as share, \
                    share.open("/bench", create=True) as volume:
                print(json.dumps({"nfs": _rates(
                    volume.pwrite, volume.pread, args.total)}))
            if args.rbd:
                rbd_lun(work / "ceph", target, args.runs, args.total)


def _file_rates(folder: Path, target: tgt.Tgt,
                total: int) -> dict[str, float]:
    """The 1 MiB rates on a new sparse file as a LUN (as the first one
    was), while Ceph runs beside tgtd."""
    lun = folder / "lun2.img"
    with open(lun, "wb") as out:
        out.truncate((total + 1) * MIB)
    tid = target.add_target(FILE_TARGET, str(lun), [HOST_A])
    try:
        with libiscsi.Session(target.portal, FILE_TARGET, 1, HOST_A) as host:
            return _rates(host.write, host.read, total)
    finally:
        target.delete_target(tid)


def rbd_lun(folder: Path, target: tgt.Tgt, runs: int, total: int) -> None:
    """The fence and the 1 MiB rates on an RBD image as the LUN."""
    import rados
    import rbd
    with ceph.Ceph(folder) as cluster, rados.Rados(
            rados_id=cluster.client, conffile=str(cluster.conf)) as client, \
            client.open_ioctx(cluster.pool) as ioctx:
        rbd.RBD().create(ioctx, RBD_IMAGE, (total + 1) * MIB)
        tid = target.add_target(
            RBD_TARGET, "%s/%s" % (cluster.pool, RBD_IMAGE),
            [HOST_A, HOST_B], bstype="rbd",
            bsopts="conf=%s;id=%s" % (cluster.conf, cluster.client))
        try:
            print(json.dumps({"fence_rbd": fence(target.portal, runs,
                                                 RBD_TARGET)}))
            with libiscsi.Session(target.portal, RBD_TARGET, 1,
                                  HOST_A) as host:
                print(json.dumps({"iscsi_rbd": _rates(
                    host.write, host.read, total)}))
            print(json.dumps({"iscsi_file_beside_ceph": _file_rates(
                folder, target, total)}))
        finally:
            target.delete_target(tid)
            rbd.RBD().remove(ioctx, RBD_IMAGE)


if __name__ == "__main__":
    main()
