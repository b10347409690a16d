#!/usr/bin/env python3
"""Create->available latency and volumes/s against a running deployment.

Prints one JSON line per concurrency level: create->available p50/p95/max
(ms), volumes/s (create to available, then delete to gone, per volume),
and the POST latency alone.  Works against any Cinder v3 endpoint, so the
same run can measure Ashlar and the Cinder anchor side by side::

    python benchmarks/create_latency.py --endpoint http://127.0.0.1:8776/v3/<project>
"""

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor

from benchmarks.common import Api
from benchmarks.common import summarize


def one_volume(api: Api, poll: float, volume_type: str | None) -> dict:
    body = {"volume": {"size": 1, "name": "bench"}}
    if volume_type:
        body["volume"]["volume_type"] = volume_type
    t0 = time.perf_counter()
    resp = api.call("POST", "/volumes", body)
    post = time.perf_counter() - t0
    if resp.status_code != 202:
        return {"ok": False, "error": resp.text[:200]}
    vid = resp.json()["volume"]["id"]
    status = api.wait_volume(vid, "available", poll)
    ready = time.perf_counter() - t0
    api.call("DELETE", "/volumes/%s" % vid)
    gone = api.wait_volume(vid, None, poll)
    return {"ok": status == "available" and gone is None, "post": post,
            "ready": ready, "status": status}


def run_level(api: Api, concurrency: int, count: int, poll: float,
              volume_type: str | None) -> dict:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(lambda _i: one_volume(api, poll, volume_type),
                                range(count)))
    elapsed = time.perf_counter() - t0
    ok = [r for r in results if r["ok"]]
    return {"scenario": "create_latency", "concurrency": concurrency,
            "volumes": count, "ok": len(ok),
            "volumes_per_s": round(len(ok) / elapsed, 2),
            "create_to_available": summarize([r["ready"] for r in ok]),
            "post": summarize([r["post"] for r in ok]),
            "errors": [r.get("error") or r.get("status")
                       for r in results if not r["ok"]][:3]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--concurrency", default="1,8")
    parser.add_argument("--poll-interval", type=float, default=0.005)
    parser.add_argument("--volume-type")
    args = parser.parse_args()
    api = Api(args.endpoint)
    run_level(api, 2, 4, args.poll_interval, args.volume_type)  # warm up
    for level in (int(c) for c in args.concurrency.split(",")):
        print(json.dumps(run_level(api, level, args.count, args.poll_interval,
                                   args.volume_type)), flush=True)


if __name__ == "__main__":
    main()
