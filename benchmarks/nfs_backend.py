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
  commits it), next to bare libnfs on the same export (no commit), MiB/s::

    python -m benchmarks.nfs_backend [--runs 20] [--total 64]
"""

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

from oslo_config import cfg

from benchmarks.storage_userspace import MIB
from benchmarks.storage_userspace import _ms
from benchmarks.storage_userspace import _rates
from common import libnfs
from deploy.testbed.components import ganesha
from drivers import base
from drivers import nfs
from services.agent import volume_io
from services.volume import attach as volume_attach

BACKEND = "nfs1"


class _Row:
    id = "bench"
    readonly = encrypted = False
    front_end_qos = None
    size = 1


def make_driver(work: Path, url: str) -> nfs.NfsDriver:
    (work / "nfs_shares").write_text(url + "\n")
    conf = cfg.ConfigOpts()
    nfs.NfsDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    conf.set_override("nfs_shares_config", str(work / "nfs_shares"),
                      group=BACKEND)
    conf.set_override("nfs_snapshot_support", True, group=BACKEND)
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


def copies(driver: nfs.NfsDriver, total_mib: int) -> dict[str, float]:
    source = volume()
    driver.create_volume(source)
    with volume_io.open_volume(None, attachment(driver, source)) as handle:
        for index in range(total_mib):
            handle.write(index * MIB, bytes([index % 255 + 1]) * MIB)
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--total", type=int, default=64, help="MiB")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with ganesha.Ganesha(work / "ganesha") as server:
            driver = make_driver(work, server.url)
            print(json.dumps({"create": creates(driver, args.runs)}))
            print(json.dumps({"copy": copies(driver, args.total)}))
            print(json.dumps({"data_path": data_path(driver, server.url,
                                                     args.total)}))


if __name__ == "__main__":
    main()
