#!/usr/bin/env python3
"""S1: how soon a client learns that an unsatisfiable multiattach create failed.

The type is the anchor bench's: ``multiattach="<is> True"`` and
``volume_backend_name`` of a backend whose pools are not multiattach.
Ashlar answers 400 before writing anything; the script times POST -> 4xx
through gunicorn and prints p50/p95/max and requests/s, over keep-alive
connections and over a new connection per request, at each concurrency.

Without ``--endpoint`` it starts the anchor-shaped deployment of
``ma_cluster.py`` (MariaDB by default) and removes it afterwards.  With
``--anchor-bench ../shared/anchors/cinder/bench.py`` it also runs the
anchor's own S1 and S6 against that deployment and prints their lines, so
both systems are measured by the same client::

    python benchmarks/unsatisfiable.py --repeat 200 --concurrency 1,8 \\
        --anchor-bench ../shared/anchors/cinder/bench.py
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

import requests  # noqa: E402

from benchmarks import ma_cluster  # noqa: E402
from benchmarks.common import Api  # noqa: E402
from benchmarks.common import summarize  # noqa: E402


def post_until_4xx(api: Api, type_id: str, fresh_connection: bool) -> tuple:
    body = {"volume": {"size": 1, "volume_type": type_id}}
    started = time.perf_counter()
    if fresh_connection:
        resp = requests.post(api.endpoint + "/volumes", json=body,
                             headers=api.headers, timeout=60)
    else:
        resp = api.call("POST", "/volumes", body)
    return time.perf_counter() - started, resp.status_code


def measure(api: Api, type_id: str, repeat: int, concurrency: int,
            fresh_connection: bool) -> dict:
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(
            lambda _i: post_until_4xx(api, type_id, fresh_connection),
            range(repeat)))
    elapsed = time.perf_counter() - started
    codes: dict = {}
    for _t, code in results:
        codes[code] = codes.get(code, 0) + 1
    return dict(summarize([t for t, code in results if 400 <= code < 500]),
                concurrency=concurrency, new_connection_each=fresh_connection,
                requests_per_s=round(repeat / elapsed, 1), codes=codes)


def plain_backend(api: Api) -> str:
    pools = api.call("GET", "/scheduler-stats/get_pools",
                     params={"detail": "true"}).json()["pools"]
    backends: dict = {}
    for pool in pools:
        caps = pool["capabilities"]
        backends.setdefault(caps["volume_backend_name"], []).append(
            bool(caps.get("multiattach")))
    plain = sorted(name for name, flags in backends.items()
                   if not any(flags))
    if not plain:
        sys.exit("no backend without multiattach pools: %s" % backends)
    return plain[0]


def volume_count(api: Api) -> int:
    return len(api.call("GET", "/volumes",
                        params={"all_tenants": "1"}).json()["volumes"])


def run_anchor_bench(path: str, cluster: ma_cluster.Cluster) -> None:
    (cluster.folder / "extra.conf").write_text(
        open(cluster.extra_config()).read())
    output = tempfile.mktemp(suffix=".jsonl")
    command = [sys.executable, path, "--endpoint", cluster.dep.endpoint,
               "--scenarios", "S1,S6", "--output", output,
               *ma_cluster.s6_flags(cluster.folder)]
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    ma_cluster.stop_extra(cluster.folder)
    with open(output) as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("id") == "S1":
                print(json.dumps({"anchor_bench": "S1",
                                  "paths": record.get("paths"),
                                  "time_to_failure_s":
                                      record.get("time_to_failure_s"),
                                  "correct": record.get("correct")}))
            elif record.get("id") == "S6":
                print(json.dumps({"anchor_bench": "S6",
                                  "visible_after_s":
                                      record.get("visible_after_s"),
                                  "runs": record.get("runs")}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoint", help="an existing deployment")
    parser.add_argument("--db", choices=["mysql", "postgresql"],
                        default="mysql")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--concurrency", default="1,8")
    parser.add_argument("--anchor-bench", help="path of the anchor's bench.py")
    args = parser.parse_args()
    cluster = None
    if args.endpoint is None:
        cluster = ma_cluster.Cluster(args.db, args.workers)
        ready = cluster.start()
        print(json.dumps({"deployment_ready_s": round(ready, 2),
                          "db": args.db, "api_workers": args.workers}))
        args.endpoint = cluster.dep.endpoint
    try:
        api = Api(args.endpoint)
        backend = plain_backend(api)
        specs = {"multiattach": "<is> True", "volume_backend_name": backend}
        resp = api.call("POST", "/types", {"volume_type": {
            "name": "s1-%s" % uuid.uuid4().hex[:8], "extra_specs": specs}})
        type_id = resp.json()["volume_type"]["id"]
        before = volume_count(api)
        first = post_until_4xx(api, type_id, False)
        print(json.dumps({"scenario": "S1", "type_extra_specs": specs,
                          "first_answer": first[1]}))
        for level in [int(c) for c in args.concurrency.split(",")]:
            for fresh in (False, True):
                print(json.dumps(measure(api, type_id, args.repeat, level,
                                         fresh)), flush=True)
        print(json.dumps({"volumes_written": volume_count(api) - before}))
        api.call("DELETE", "/types/%s" % type_id)
        if args.anchor_bench and cluster is not None:
            run_anchor_bench(args.anchor_bench, cluster)
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
