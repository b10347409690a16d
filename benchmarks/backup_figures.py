#!/usr/bin/env python3
"""Backup figures: full and incremental backup and restore of a 1 GiB volume
with 10% changed, on the file backend with the POSIX backup driver and on
RBD with the Ceph backup driver, next to the data path's raw throughput.

Starts its own throwaway Ceph (``deploy/testbed/components/ceph.py``: a
volume pool and a ``backups`` pool) and a deployment (``harness``: api,
scheduler, ``cephnode@ceph`` and ``filenode@file`` raw files, on a fresh
RabbitMQ vhost and PostgreSQL database), then for each pair in turn starts
``ashlar-backup`` with that driver (defaults: POSIX 32 MiB zlib chunks,
Ceph 128 MiB chunks) and:

1. makes two volumes of the backend (source and restore target) and writes
   the whole source through the data path a backup reads by
   (``services.agent.volume_io`` over a real attachment), 4 MiB blocks of
   random bytes, then reads it back: the raw write and read MiB/s;
2. a full backup (POST until ``available``);
3. rewrites every tenth 4 MiB block (26 blocks, 104 MiB) with new bytes;
4. an incremental backup;
5. restores the incremental backup into the target volume (POST until the
   volume and the backup are ``available``), then checks that the target
   reads as the source (sha256 over the GiB, not timed).

MiB/s are of the volume's GiB (for the incremental backup, also of the
changed MiB).  Prints one JSON line per figure::

    python -m benchmarks.backup_figures [--db postgresql]
"""

import argparse
import contextlib
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

from oslo_config import cfg

from common.conf import agent as agent_conf
from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from services.agent import volume_io

MIB = 1 << 20
SIZE = 1024 * MIB
BLOCK = 4 * MIB
#: Every tenth block is rewritten between the two backups.
CHANGED = range(0, SIZE // BLOCK, 10)
POOL = "backups"
CONNECTOR = {"host": "bench-backup", "ip": "127.0.0.1",
             "initiator": "iqn.1993-08.org.debian:01:bench-backup",
             "multipath": False, "platform": "x86_64", "os_type": "linux"}


def _pairs(ceph: ceph_component.Ceph) -> list[tuple[str, str, str]]:
    """(backend, backup driver, the backup service's extra config)."""
    return [
        ("file", "posix", "[DEFAULT]\nbackup_driver = drivers.backup.posix\n"),
        ("ceph", "ceph",
         "[DEFAULT]\nbackup_driver = drivers.backup.ceph\n"
         "backup_ceph_conf = %s\nbackup_ceph_user = backup\n"
         "backup_ceph_keyring = %s\nbackup_ceph_pool = %s\n"
         "[agent]\nrbd_keyring_dir = %s\nrbd_user = %s\n"
         % (ceph.conf, ceph.keyring("backup"), POOL, ceph.dir, ceph.client)),
    ]


def _agent_conf(ceph: ceph_component.Ceph) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    agent_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("rbd_keyring_dir", str(ceph.dir), group="agent")
    conf.set_override("rbd_user", ceph.compute_client, group="agent")
    return conf


class Bench:
    def __init__(self, client: harness.Client, conf: cfg.ConfigOpts) -> None:
        self.client = client
        self.conf = conf

    @contextlib.contextmanager
    def opened(self, volume_id: str) -> Iterator[volume_io.VolumeHandle]:
        """The volume through a real attachment's data path."""
        resp = self.client.post("/attachments", {"attachment": {
            "volume_uuid": volume_id, "connector": CONNECTOR,
            "instance_uuid": "5e11ab1e-0000-4000-8000-00000000b0b0"}})
        resp.raise_for_status()
        attachment = resp.json()["attachment"]
        try:
            with volume_io.open_volume(self.conf, attachment) as handle:
                yield handle
        finally:
            self.client.delete("/attachments/%s" % attachment["id"])
            self.client.wait_status(volume_id, "available", timeout=120)

    def volume(self, type_name: str) -> str:
        vid = self.client.create_volume(volume_type=type_name)["id"]
        self.client.wait_status(vid, "available", timeout=120)
        return vid

    def fill(self, volume_id: str) -> dict[str, float]:
        """Write the whole volume, then read it: seconds of each."""
        block = os.urandom(BLOCK)
        out = {}
        with self.opened(volume_id) as handle:
            started = time.perf_counter()
            for offset in range(0, SIZE, BLOCK):
                handle.write(offset, offset.to_bytes(8, "big") + block[8:])
            out["write"] = time.perf_counter() - started
            started = time.perf_counter()
            for offset in range(0, SIZE, BLOCK):
                assert len(handle.read(offset, BLOCK)) == BLOCK
            out["read"] = time.perf_counter() - started
        return out

    def change(self, volume_id: str) -> int:
        """Rewrite every tenth block; the bytes changed."""
        with self.opened(volume_id) as handle:
            for index in CHANGED:
                handle.write(index * BLOCK, os.urandom(BLOCK))
        return len(CHANGED) * BLOCK

    def digest(self, volume_id: str) -> str:
        sha = hashlib.sha256()
        with self.opened(volume_id) as handle:
            for offset in range(0, SIZE, BLOCK):
                sha.update(handle.read(offset, BLOCK))
        return sha.hexdigest()

    def _backup_status(self, backup_id: str) -> str | None:
        resp = self.client.get("/backups/%s" % backup_id)
        return None if resp.status_code == 404 else \
            resp.json()["backup"]["status"]

    def _settled(self, backup_id: str, wanted: str | None) -> bool:
        status = self._backup_status(backup_id)
        if status == "error":
            raise RuntimeError("backup %s failed" % backup_id)
        return status == wanted

    def backup(self, volume_id: str, incremental: bool) -> tuple[str, float]:
        started = time.perf_counter()
        resp = self.client.post("/backups", {"backup": {
            "volume_id": volume_id, "incremental": incremental}})
        resp.raise_for_status()
        backup_id = resp.json()["backup"]["id"]
        harness.wait_for(lambda: self._settled(backup_id, "available"),
                         timeout=1800, interval=0.1, what="the backup")
        return backup_id, time.perf_counter() - started

    def restore(self, backup_id: str, volume_id: str) -> float:
        started = time.perf_counter()
        resp = self.client.post("/backups/%s/restore" % backup_id,
                                {"restore": {"volume_id": volume_id}})
        resp.raise_for_status()
        harness.wait_for(lambda: self._settled(backup_id, "available")
                         and self.client.volume_status(volume_id)
                         == "available", timeout=1800, interval=0.1,
                         what="the restore")
        return time.perf_counter() - started

    def delete_backup(self, backup_id: str) -> None:
        self.client.delete("/backups/%s" % backup_id).raise_for_status()
        harness.wait_for(lambda: self._settled(backup_id, None),
                         timeout=600, what="the backup's delete")


def _line(backend: str, driver: str, step: str, seconds: float,
          **extra: object) -> None:
    print(json.dumps({"scenario": "backup_figures", "backend": backend,
                      "driver": driver, "step": step,
                      "seconds": round(seconds, 2),
                      "mib_per_s": round(SIZE / MIB / seconds, 1), **extra}),
          flush=True)


def run_pair(bench: Bench, backend: str, driver: str) -> None:
    source, target = bench.volume(backend), bench.volume(backend)
    raw = bench.fill(source)
    for direction in ("write", "read"):
        _line(backend, driver, "data_path_" + direction, raw[direction],
              block_mib=BLOCK // MIB)
    full, seconds = bench.backup(source, incremental=False)
    _line(backend, driver, "full_backup", seconds)
    changed = bench.change(source)
    incr, seconds = bench.backup(source, incremental=True)
    _line(backend, driver, "incremental_backup", seconds,
          changed_mib=changed // MIB,
          changed_mib_per_s=round(changed / MIB / seconds, 1))
    seconds = bench.restore(incr, target)
    same = bench.digest(source) == bench.digest(target)
    _line(backend, driver, "restore_incremental", seconds, verified=same)
    for backup_id in (incr, full):
        bench.delete_backup(backup_id)
    for vid in (source, target):
        bench.client.delete("/volumes/%s" % vid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="postgresql",
                        choices=["postgresql", "mysql"])
    args = parser.parse_args()
    ceph_component.available()
    with tempfile.TemporaryDirectory(prefix="ashlar-backup-bench-") as tmp, \
            ceph_component.Ceph(Path(tmp) / "ceph") as ceph:
        ceph.add_pool(POOL)
        ceph.add_client("backup", pool=POOL)
        vhost, remove_vhost = harness.broker_vhost()
        db_url, drop = harness.database(args.db)
        dep = harness.Deployment(Path(tmp), vhost, db_url)
        try:
            _serve(dep, ceph)
        finally:
            dep.stop_all()
            drop()
            remove_vhost()


def _serve(dep: harness.Deployment, ceph: ceph_component.Ceph) -> None:
    dep.db_sync()
    dep.start("scheduler", "services.scheduler", "sched")
    dep.start("volume1", "services.volume", "cephnode", backends="ceph",
              extra="[ceph]\nvolume_driver = rbd\nrbd_pool = %s\n"
              "rbd_user = %s\nrbd_ceph_conf = %s\nrbd_keyring = %s\n"
              % (ceph.pool, ceph.client, ceph.conf,
                 ceph.keyring(ceph.client)))
    dep.start("volume2", "services.volume", "filenode", backends="file",
              extra="[file]\nvolume_driver = file\n"
              "file_volume_format = raw\n")
    dep.start("api", "services.api", "api")
    client = harness.Client(dep.endpoint)
    harness.wait_for(lambda: len(client.pools()) == 2, timeout=120,
                     what="both pools")
    for backend in ("ceph", "file"):
        client.post("/types", {"volume_type": {"name": backend, "extra_specs": {
            "volume_backend_name": backend}}}).raise_for_status()
    bench = Bench(client, _agent_conf(ceph))
    for backend, driver, extra in _pairs(ceph):
        dep.start("backup", "services.backup", "backup1", extra=extra)
        harness.wait_for(lambda: client.services_up().get(
            ("cinder-backup", "backup1")) == "up", timeout=120,
            what="the backup service")
        run_pair(bench, backend, driver)
        dep.stop("backup")
        # the next driver's service takes the same host once this one is
        # seen down (no cast reaches a stopping one)
        harness.wait_for(lambda: client.services_up().get(
            ("cinder-backup", "backup1")) == "down", timeout=120,
            what="the backup service down")


if __name__ == "__main__":
    main()
