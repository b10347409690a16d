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
  MiB through common/libiscsi.py and common/libnfs.py (NFSv3), MiB/s::

    python -m benchmarks.storage_userspace [--runs 50] [--total 64]
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
from deploy.testbed.components import ganesha
from deploy.testbed.components import tgt

MIB = 1 << 20
HOST_A, HOST_B = "iqn.2026-11.org.ashlar:bench-a", "iqn.2026-11.org.ashlar:bench-b"
TARGET = "iqn.2026-11.org.ashlar:bench"
KEY_A, KEY_B = 0xA, 0xB
STREAM_BLOCK = 32 << 10


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50_ms": round(statistics.median(values) * 1e3, 3),
            "p95_ms": round(values[int(0.95 * (len(values) - 1))] * 1e3, 3),
            "max_ms": round(values[-1] * 1e3, 3)}


def _fence_once(portal: str, fencer: libiscsi.Session,
                stream: bool) -> tuple[float, bool]:
    """One PREEMPT of A's key by B: its time, and whether a write of A's
    landed after B's write that followed it."""
    with libiscsi.Session(portal, TARGET, 1, HOST_A) as victim:
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


def fence(portal: str, runs: int) -> dict[str, object]:
    with libiscsi.Session(portal, TARGET, 1, HOST_B) as fencer:
        idle = [_fence_once(portal, fencer, False)[0] for _ in range(runs)]
        loaded = [_fence_once(portal, fencer, True) for _ in range(runs)]
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


if __name__ == "__main__":
    main()
