#!/usr/bin/env python3
"""Read/write throughput through the agent's volume handle next to librbd.

Against a running deployment with an RBD backend: one volume of a type
pinned to ``--backend`` and a real attachment to it (POST /attachments with
an os-brick style connector, so ``connection_info`` comes from the volume
service).  Then, on that one image, ``--rounds`` times each, alternating:

* agent: ``services.agent.volume_io.open_volume(conf, attachment)`` (what
  ``ashlar-agent read|write`` runs; its keyring from ``--keyring-dir``),
  sequential ``--block`` MiB writes (each flushed, as the handle does) over
  ``--total`` MiB, then reads of the same range;
* librbd: ``rados.Rados`` + ``rbd.Image`` opened directly with the same
  user and keyring, the same writes (each followed by ``flush()``) and reads.

Prints one JSON line per path and direction: MiB/s (median of the rounds,
min and max too), per-block p50/p95/max (ms) and ops/s, and the open (and
connect) latency.  The attachment, volume and type are removed after::

    python -m benchmarks.data_path --endpoint http://127.0.0.1:PORT/v3/<project> \\
        --backend rbd --ceph-conf /tmp/ceph-anchor/ceph.conf \\
        --keyring-dir /tmp/ceph-anchor [--total 256 --block 4 --rounds 3]
"""

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Iterator
from typing import Protocol

import rados
import rbd
from oslo_config import cfg

from benchmarks.common import Api
from benchmarks.common import summarize
from common.conf import agent as agent_conf
from services.agent import volume_io

MIB = 1 << 20
CONNECTOR = {"host": "bench-data-path", "ip": "127.0.0.1",
             "initiator": "iqn.1993-08.org.debian:01:bench", "multipath": False,
             "platform": "x86_64", "os_type": "linux", "do_local_attach": False}


class Handle(Protocol):
    def read(self, offset: int, length: int) -> bytes: ...
    def write(self, offset: int, data: bytes) -> int: ...


class DirectImage:
    """``rbd.Image`` behind the agent handle's two calls."""

    def __init__(self, image: rbd.Image) -> None:
        self.image = image

    def read(self, offset: int, length: int) -> bytes:
        return self.image.read(offset, length)

    def write(self, offset: int, data: bytes) -> int:
        written = self.image.write(data, offset)
        self.image.flush()
        return written


@contextlib.contextmanager
def open_direct(ceph_conf: str, keyring: str, user: str,
                name: str) -> Iterator[DirectImage]:
    pool, image = name.split("/", 1)
    with rados.Rados(conffile=ceph_conf, rados_id=user,
                     conf={"keyring": keyring}) as cluster:
        with cluster.open_ioctx(pool) as ioctx:
            with rbd.Image(ioctx, image) as img:
                yield DirectImage(img)


def stream(handle: Handle, total: int, block: int, data: bytes
           ) -> dict[str, tuple[float, list[float]]]:
    """Sequential writes then reads; per direction (seconds, per block)."""
    out = {}
    for direction in ("write", "read"):
        per_block = []
        started = time.perf_counter()
        for offset in range(0, total, block):
            t0 = time.perf_counter()
            if direction == "write":
                handle.write(offset, data)
            else:
                got = handle.read(offset, block)
                assert len(got) == block, (offset, len(got))
            per_block.append(time.perf_counter() - t0)
        out[direction] = (time.perf_counter() - started, per_block)
    return out


def attach(api: Api, backend: str) -> tuple[str, str, str, dict]:
    """A type, a 1 GiB volume and a connected attachment: their ids and
    the attachment's view."""
    type_id, volume_id = api.typed_volume(
        "databench", {"volume_backend_name": backend})
    resp = api.call("POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "connector": CONNECTOR,
        "instance_uuid": "5e11ab1e-0000-4000-8000-000000000001"}})
    resp.raise_for_status()
    attachment = resp.json()["attachment"]
    return type_id, volume_id, attachment["id"], attachment


def report(path: str, direction: str, total: int, block: int,
           runs: list[tuple[float, list[float]]]) -> dict:
    rates = [total / MIB / seconds for seconds, _b in runs]
    blocks = [b for _s, per_block in runs for b in per_block]
    return {"scenario": "data_path", "path": path, "direction": direction,
            "total_mib": total // MIB, "block_mib": block // MIB,
            "rounds": len(runs),
            "mib_per_s": round(statistics.median(rates), 1),
            "mib_per_s_min_max": [round(min(rates), 1), round(max(rates), 1)],
            "block_ops_per_s": round(len(blocks) / sum(blocks), 2),
            "per_block": summarize(blocks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--backend", default="rbd")
    parser.add_argument("--ceph-conf", required=True)
    parser.add_argument("--keyring-dir", required=True)
    parser.add_argument("--total", type=int, default=256, help="MiB")
    parser.add_argument("--block", type=int, default=4, help="MiB")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    total, block = args.total * MIB, args.block * MIB
    data = os.urandom(block)
    conf = cfg.ConfigOpts()
    agent_conf.register_opts(conf)
    conf([], project="ashlar")
    conf.set_override("rbd_keyring_dir", args.keyring_dir, group="agent")
    api = Api(args.endpoint)
    type_id, volume_id, attachment_id, attachment = attach(api, args.backend)
    info = attachment["connection_info"]
    user, name = info["auth_username"], info["name"]
    keyring = os.path.join(args.keyring_dir, "%s.client.%s.keyring"
                           % (info.get("cluster_name") or "ceph", user))
    runs: dict[str, list] = {"agent": [], "librbd": []}
    opens: dict[str, list[float]] = {"agent": [], "librbd": []}
    try:
        for _round in range(args.rounds):
            for path in ("agent", "librbd"):
                t0 = time.perf_counter()
                opener = (volume_io.open_volume(conf, attachment)
                          if path == "agent" else
                          open_direct(args.ceph_conf, keyring, user, name))
                with opener as handle:
                    opens[path].append(time.perf_counter() - t0)
                    runs[path].append(stream(handle, total, block, data))
    finally:
        api.call("DELETE", "/attachments/%s" % attachment_id)
        api.wait_volume(volume_id, "available", 0.01)
        api.call("DELETE", "/volumes/%s" % volume_id)
        api.wait_volume(volume_id, None, 0.01)
        api.call("DELETE", "/types/%s" % type_id)
    for path in ("agent", "librbd"):
        print(json.dumps({"scenario": "data_path", "path": path,
                          "direction": "open",
                          "latency": summarize(opens[path])}), flush=True)
        for direction in ("write", "read"):
            print(json.dumps(report(path, direction, total, block,
                                    [r[direction] for r in runs[path]])),
                  flush=True)


if __name__ == "__main__":
    main()
