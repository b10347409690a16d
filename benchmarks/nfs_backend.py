#!/usr/bin/env python3
"""The nfs backend on a real nfs-ganesha, measured without a deployment.

Starts the testbed's ganesha (deploy/testbed/components/ganesha.py) in a
temporary folder, builds drivers/nfs.py on its export as the volume
service does, and prints one JSON line each:

* ``create``: ``--runs`` creates of a 1 GiB raw volume (the volume
  node's share of S2: the driver call, through libnfs), then their
  deletes, p50/p95/max ms;
* ``copy``: a snapshot, a volume from it and a clone of a 1 GiB volume
  holding ``--total`` MiB of data (whole copies through libnfs), seconds;
* ``data_path``: sequential 1 MiB writes then reads of ``--total`` MiB
  through the agent's data path (services/agent/volume_io.py on the
  connection_info, each write committed as ``ashlar-agent write``
  commits it), next to bare libnfs on the same export (no commit), MiB/s.

With ``--qcow2`` it prints one line instead, ``qcow2``: ``--runs`` (3)
times, on a 1 GiB qcow2 volume (``nfs_qcow2_volumes``) holding ``--total``
MiB, p50/max seconds of a snapshot (an empty overlay), its delete with the
overlay empty, a delete that merges ``--merge`` MiB written into the
overlay, a volume from a snapshot and a clone (both the chain flattened
into a new image), next to a raw volume's whole-copy snapshot with the same
data.  qemu-io writes into the images as a hypervisor would, on the
export's folder (ganesha serves it; this machine has no NFS client)::

    python -m benchmarks.nfs_backend [--runs 20] [--total 64]
    python -m benchmarks.nfs_backend --qcow2 [--runs 3] [--total 64] [--merge 16]
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from oslo_config import cfg

from benchmarks.storage_userspace import MIB
from benchmarks.storage_userspace import _ms
from benchmarks.storage_userspace import _rates
from common import libnfs
from deploy.testbed.components import ganesha
from deploy.testbed.components import qemu
from drivers import base
from drivers import nfs
from drivers import nfs_chain
from services.agent import volume_io
from services.volume import attach as volume_attach

BACKEND = "nfs1"
#: --runs without --qcow2, and with it.
RUNS, QCOW2_RUNS = 20, 3


class _Row:
    id = "bench"
    readonly = encrypted = False
    front_end_qos = None
    size = 1


def make_driver(work: Path, url: str, **overrides: bool) -> nfs.NfsDriver:
    (work / "nfs_shares").write_text(url + "\n")
    conf = cfg.ConfigOpts()
    nfs.NfsDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    conf.set_override("nfs_shares_config", str(work / "nfs_shares"),
                      group=BACKEND)
    conf.set_override("nfs_snapshot_support", True, group=BACKEND)
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    driver = nfs.NfsDriver(conf[BACKEND], BACKEND, "bench@nfs1")
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


def volume(size: int = 1) -> base.DriverVolume:
    return base.DriverVolume(id=str(uuid.uuid4()), size=size)


def creates(driver: nfs.NfsDriver, runs: int) -> dict[str, object]:
    made, took = [], []
    for _ in range(runs):
        new = volume()
        started = time.perf_counter()
        driver.create_volume(new)
        took.append(time.perf_counter() - started)
        made.append(new)
    gone = []
    for new in made:
        started = time.perf_counter()
        driver.delete_volume(new)
        gone.append(time.perf_counter() - started)
    return {"runs": runs, "create": _ms(took), "delete": _ms(gone)}


def attachment(driver: nfs.NfsDriver, vol: base.DriverVolume) -> dict:
    info = driver.initialize_connection(vol, {"host": "bench"})
    return {"id": "bench", "connection_info": volume_attach.connection_info(
        info, _Row(), _Row(), {"host": "bench"}, "rw")}


def filled(driver: nfs.NfsDriver, total_mib: int) -> base.DriverVolume:
    """A new 1 GiB raw volume with ``total_mib`` MiB written through the
    agent's data path."""
    source = volume()
    driver.create_volume(source)
    with volume_io.open_volume(None, attachment(driver, source)) as handle:
        for index in range(total_mib):
            handle.write(index * MIB, bytes([index % 255 + 1]) * MIB)
    return source


def copies(driver: nfs.NfsDriver, total_mib: int) -> dict[str, float]:
    source = filled(driver, total_mib)
    snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=source,
                                   size=1)
    from_snap, clone = volume(), volume()
    seconds = {}
    for name, call in (
            ("snapshot_s", lambda: driver.create_snapshot(snapshot)),
            ("from_snapshot_s",
             lambda: driver.create_volume_from_snapshot(from_snap, snapshot)),
            ("clone_s", lambda: driver.create_cloned_volume(clone, source))):
        started = time.perf_counter()
        call()
        seconds[name] = round(time.perf_counter() - started, 2)
    driver.delete_snapshot(snapshot)
    for made in (source, from_snap, clone):
        driver.delete_volume(made)
    return {"volume_gib": 1, "data_mib": total_mib, **seconds}


def data_path(driver: nfs.NfsDriver, url: str,
              total_mib: int) -> dict[str, object]:
    vol = volume()
    driver.create_volume(vol)
    with volume_io.open_volume(None, attachment(driver, vol)) as handle:
        agent = _rates(handle.write, handle.read, total_mib)
    with libnfs.Share(url) as share, \
            share.open("/bare", create=True) as bare_file:
        bare = _rates(bare_file.pwrite, bare_file.pread, total_mib)
        share.unlink("/bare")
    driver.delete_volume(vol)
    return {"total_mib": total_mib, "agent": agent, "bare_libnfs": bare}


def qemu_write(path: Path, offset_mib: int, length_mib: int,
               pattern: int) -> None:
    """``length_mib`` MiB of ``pattern`` at ``offset_mib`` MiB of the
    qcow2 image ``path`` (and its backing files'), written by qemu-io."""
    subprocess.run(["qemu-io", "-f", "qcow2", "-c", "write -P 0x%02x %dM %dM"
                    % (pattern, offset_mib, length_mib), str(path)],
                   check=True, capture_output=True)


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def snapshot_of(vol: base.DriverVolume) -> base.DriverSnapshot:
    return base.DriverSnapshot(id=str(uuid.uuid4()), volume=vol, size=1)


def chain_run(driver: nfs.NfsDriver, server: ganesha.Ganesha,
              total_mib: int, merge_mib: int) -> dict[str, float]:
    """One run on a new qcow2 volume: seconds per step.  The merged
    overlay's data lies past the base file's, the flattened chain's over
    it; each flattened image is read back."""
    export = server.export
    vol = volume()
    driver.create_volume(vol)
    qemu_write(export / ("volume-%s.qcow2" % vol.id), 0, total_mib, 0x5a)
    first, second, third, fourth = (snapshot_of(vol) for _ in range(4))
    took = {"snapshot_s": timed(lambda: driver.create_snapshot(first)),
            "delete_empty_s": timed(lambda: driver.delete_snapshot(first))}
    driver.create_snapshot(second)
    qemu_write(export / nfs_chain.overlay_name(vol.id, second.id),
               total_mib, merge_mib, 0xa5)
    took["delete_merge_s"] = timed(lambda: driver.delete_snapshot(second))
    driver.create_snapshot(third)
    qemu_write(export / nfs_chain.overlay_name(vol.id, third.id), 0,
               merge_mib, 0x3c)
    driver.create_snapshot(fourth)
    from_snap, clone = volume(), volume()
    took["from_snapshot_s"] = timed(
        lambda: driver.create_volume_from_snapshot(from_snap, fourth))
    took["clone_s"] = timed(lambda: driver.create_cloned_volume(clone, vol))
    for made in (from_snap, clone):
        check_flat(server.url, made, total_mib, merge_mib)
    for made in (vol, from_snap, clone):
        driver.delete_volume(made)
    return took


def check_flat(url: str, made: base.DriverVolume, total_mib: int,
               merge_mib: int) -> None:
    """The flattened volume reads what was written into the chain."""
    expected = {0: 0x3c, merge_mib * MIB: 0x5a, total_mib * MIB: 0xa5,
                (total_mib + merge_mib) * MIB: 0}
    with libnfs.Share(url) as share, nfs_chain.open_chain(
            share, "volume-%s.qcow2" % made.id) as disk:
        for offset, pattern in expected.items():
            if disk.read(offset, 4096) != bytes([pattern]) * 4096:
                raise SystemExit("volume %s reads wrong at %d"
                                 % (made.id, offset))


def _p50_max(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 3),
            "max": round(max(values), 3)}


def raw_snapshot(raw: nfs.NfsDriver, total_mib: int) -> float:
    """Seconds of a whole-copy snapshot of a raw volume holding
    ``total_mib`` MiB."""
    source = filled(raw, total_mib)
    snapshot = snapshot_of(source)
    took = timed(lambda: raw.create_snapshot(snapshot))
    raw.delete_snapshot(snapshot)
    raw.delete_volume(source)
    return took


def chains(work: Path, server: ganesha.Ganesha, args: argparse.Namespace
           ) -> dict[str, object]:
    """``--runs`` chain runs, and as many whole-copy snapshots of a raw
    volume holding the same data."""
    raw = make_driver(work, server.url)
    driver = make_driver(work, server.url, nfs_qcow2_volumes=True)
    runs: dict[str, list[float]] = {"raw_snapshot_s": []}
    for _ in range(args.runs):
        runs["raw_snapshot_s"].append(raw_snapshot(raw, args.total))
        for name, seconds in chain_run(driver, server, args.total,
                                       args.merge).items():
            runs.setdefault(name, []).append(seconds)
    return {"runs": args.runs, "volume_gib": 1, "data_mib": args.total,
            "merge_mib": args.merge,
            **{name: _p50_max(values) for name, values in runs.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int,
                        help="%d, with --qcow2 %d" % (RUNS, QCOW2_RUNS))
    parser.add_argument("--total", type=int, default=64, help="MiB")
    parser.add_argument("--qcow2", action="store_true",
                        help="qcow2 snapshot chains instead")
    parser.add_argument("--merge", type=int, default=16,
                        help="MiB written into the overlay merged down")
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = QCOW2_RUNS if args.qcow2 else RUNS
    if args.qcow2 and not args.total > args.merge > 0:
        parser.error("--qcow2 wants --total > --merge > 0")
    if args.qcow2:
        qemu.available()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with ganesha.Ganesha(work / "ganesha") as server:
            if args.qcow2:
                print(json.dumps({"qcow2": chains(work, server, args)}))
                return
            driver = make_driver(work, server.url)
            print(json.dumps({"create": creates(driver, args.runs)}))
            print(json.dumps({"copy": copies(driver, args.total)}))
            print(json.dumps({"data_path": data_path(driver, server.url,
                                                     args.total)}))


if __name__ == "__main__":
    main()
