#!/usr/bin/env python3
"""Snapshot create, create-from-snapshot and clone latency per backend.

Against a running deployment (any Cinder v3 endpoint), for each backend
named by ``--backend`` (its ``volume_backend_name``): a volume type pinned
to it and one source volume, then ``--count`` rounds, one at a time, of

* snapshot: POST /snapshots of the source -> GET shows ``available``;
* from_snapshot: POST /volumes with that ``snapshot_id`` -> ``available``;
* clone: POST /volumes with the source as ``source_volid`` -> ``available``.

One JSON line per backend and operation: p50/p95/max (ms) and ops/s (one
client, sequential).  Everything made is deleted after the rounds (not
timed)::

    python -m benchmarks.snapshot_latency --endpoint \\
        http://127.0.0.1:PORT/v3/<project> --backend rbd --backend file --count 20
"""

import argparse
import json
import time

from benchmarks.common import Api
from benchmarks.common import summarize

OPERATIONS = ("snapshot", "from_snapshot", "clone")


def wait_for(api: Api, path: str, key: str, poll: float,
             timeout: float = 120.0) -> str | None:
    """Poll ``path`` until its ``key`` status is terminal (None: gone)."""
    deadline = time.perf_counter() + timeout
    while True:
        resp = api.call("GET", path)
        if resp.status_code == 404:
            return None
        status = resp.json()[key]["status"]
        if status in ("available", "error", "error_deleting"):
            return status
        if time.perf_counter() > deadline:
            return "timeout"
        time.sleep(poll)


def timed_create(api: Api, path: str, key: str, body: dict,
                 poll: float) -> tuple[float, str]:
    """POST ``body`` -> ``available``; the seconds taken and the new id."""
    started = time.perf_counter()
    resp = api.call("POST", path, body)
    if resp.status_code != 202:
        raise RuntimeError("POST %s: %s %s" % (path, resp.status_code,
                                                resp.text[:300]))
    new_id = resp.json()[key]["id"]
    status = wait_for(api, "%s/%s" % (path, new_id), key, poll)
    if status != "available":
        raise RuntimeError("%s %s ended %s" % (key, new_id, status))
    return time.perf_counter() - started, new_id


def delete_all(api: Api, volumes: list[str], snapshots: list[str],
               poll: float) -> None:
    """Volumes made from snapshots first, then the snapshots."""
    for path, ids, key in (("/volumes", volumes, "volume"),
                           ("/snapshots", snapshots, "snapshot")):
        for object_id in ids:
            api.call("DELETE", "%s/%s" % (path, object_id))
        for object_id in ids:
            wait_for(api, "%s/%s" % (path, object_id), key, poll)


def run_rounds(api: Api, source: str, size: int, count: int, poll: float,
               times: dict[str, list[float]], volumes: list[str],
               snapshots: list[str]) -> None:
    """``count`` rounds of snapshot, create from it, clone of the source;
    what is made is appended to ``volumes`` and ``snapshots``."""
    for _round in range(count):
        seconds, snap = timed_create(api, "/snapshots", "snapshot", {
            "snapshot": {"volume_id": source, "name": "snapbench"}}, poll)
        snapshots.append(snap)
        times["snapshot"].append(seconds)
        for op, origin in (("from_snapshot", {"snapshot_id": snap}),
                           ("clone", {"source_volid": source})):
            seconds, volume = timed_create(api, "/volumes", "volume", {
                "volume": dict(size=size, name="snapbench-" + op,
                               **origin)}, poll)
            volumes.append(volume)
            times[op].append(seconds)


def measure(api: Api, backend: str, count: int, size: int,
            poll: float, side: str) -> list[dict]:
    resp = api.call("POST", "/types", {"volume_type": {
        "name": "snapbench-%s-%d" % (backend, time.time()),
        "extra_specs": {"volume_backend_name": backend}}})
    resp.raise_for_status()
    type_id = resp.json()["volume_type"]["id"]
    volumes: list[str] = []
    snapshots: list[str] = []
    times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    try:
        _s, source = timed_create(api, "/volumes", "volume", {"volume": {
            "size": size, "volume_type": type_id, "name": "snapbench-src"}},
            poll)
        try:
            run_rounds(api, source, size, count, poll, times, volumes,
                       snapshots)
        finally:
            delete_all(api, volumes, snapshots, poll)
            delete_all(api, [source], [], poll)
    finally:
        api.call("DELETE", "/types/%s" % type_id)
    return [{"scenario": "snapshot_latency", "side": side, "backend": backend,
             "operation": op, "size_gb": size,
             "ops_per_s": round(len(times[op]) / sum(times[op]), 2),
             "create_to_available": summarize(times[op])}
            for op in OPERATIONS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--backend", action="append", required=True,
                        help="volume_backend_name (repeat for several)")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--size", type=int, default=1, help="GiB")
    parser.add_argument("--poll-interval", type=float, default=0.005)
    parser.add_argument("--side", default="ashlar",
                        help="what the endpoint runs, for the report")
    args = parser.parse_args()
    api = Api(args.endpoint)
    for backend in args.backend:
        measure(api, backend, 2, args.size, args.poll_interval,
                args.side)  # warm up
        for line in measure(api, backend, args.count, args.size,
                            args.poll_interval, args.side):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
