#!/usr/bin/env python3
"""S6: a new volume backend's pool in get_pools, after its process starts.

Starts the anchor-shaped deployment of ``ma_cluster.py``, then ``--repeat``
times: spawn a third volume node (``node3@extra``), poll
``GET /scheduler-stats/get_pools`` every ``--poll`` seconds until its pool is
listed, place one volume on it (a type with ``volume_backend_name=extra``)
and stop it again.  Prints p50/p95/max of the time to visibility, of the
first volume's create -> available, and how long the process took to
import and start (from its log), so the figure can be read as
"Python start-up" plus "Ashlar".
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from benchmarks import ma_cluster  # noqa: E402
from benchmarks.common import Api  # noqa: E402
from benchmarks.common import summarize  # noqa: E402
from deploy.testbed import harness  # noqa: E402

_STARTED = re.compile(r"^(\S+ \S+) \d+ INFO common\.service .*Started "
                      r"ashlar-volume on node3@extra", re.M)


def listed(api: Api) -> bool:
    pools = api.call("GET", "/scheduler-stats/get_pools").json()["pools"]
    return any("@extra#" in pool["name"] for pool in pools)


def one_start(cluster: ma_cluster.Cluster, api: Api, type_id: str,
              poll: float) -> dict:
    log = cluster.folder / "extra.log"
    offset = log.stat().st_size if log.exists() else 0
    spawned_wall = time.time()
    started = time.perf_counter()
    ma_cluster.start_extra(cluster.folder)
    while not listed(api):
        if time.perf_counter() - started > 60:
            raise RuntimeError("node3@extra never listed")
        time.sleep(poll)
    visible = time.perf_counter() - started
    t0 = time.perf_counter()
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": type_id}})
    vid = resp.json()["volume"]["id"]
    status = api.wait_volume(vid, "available", poll)
    first_volume = time.perf_counter() - t0
    api.call("DELETE", "/volumes/%s" % vid)
    api.wait_volume(vid, None, poll)
    ma_cluster.stop_extra(cluster.folder)
    text = log.read_text(errors="replace")[offset:]
    found = _STARTED.search(text)
    service_started = None
    if found:
        stamp = time.mktime(time.strptime(found.group(1)[:19],
                                          "%Y-%m-%d %H:%M:%S"))
        stamp += float("0." + found.group(1)[20:])
        service_started = stamp - spawned_wall
    return {"visible": visible, "first_volume": first_volume,
            "status": status, "service_started": service_started}


def wait_gone(cluster: ma_cluster.Cluster, api: Api) -> None:
    """A stopped extra node leaves get_pools when its heartbeat stops."""
    harness.wait_for(lambda: not listed(api), timeout=180, interval=0.5,
                     what="node3@extra to leave get_pools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["mysql", "postgresql"],
                        default="mysql")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--poll", type=float, default=0.02)
    args = parser.parse_args()
    # NOTE: short heartbeat settings so a stopped node leaves get_pools
    # quickly between repetitions; reports still come every 10 s, so
    # visibility relies on the report sent at start.
    cluster = ma_cluster.Cluster(args.db, report_interval=1,
                                 service_down_time=3)
    try:
        cluster.start()
        (cluster.folder / "extra.conf").write_text(
            open(cluster.extra_config()).read())
        api = Api(cluster.dep.endpoint)
        type_id = api.call("POST", "/types", {"volume_type": {
            "name": "s6-%s" % uuid.uuid4().hex[:8],
            "extra_specs": {"volume_backend_name": "extra"}}}).json()[
            "volume_type"]["id"]
        # Warm the OS page cache once, as the anchor's runs were warm.
        subprocess.run([sys.executable, "-c", "import services.volume."
                        "launcher"], cwd=harness.REPO, check=True,
                       capture_output=True)
        runs = []
        for _ in range(args.repeat):
            runs.append(one_start(cluster, api, type_id, args.poll))
            wait_gone(cluster, api)
        print(json.dumps({
            "scenario": "S6", "repeat": args.repeat, "poll_s": args.poll,
            "visible_in_get_pools": summarize([r["visible"] for r in runs]),
            "process_spawn_to_service_started": summarize(
                [r["service_started"] for r in runs
                 if r["service_started"] is not None]),
            "first_volume_available": summarize(
                [r["first_volume"] for r in runs]),
            "first_volume_status": sorted({r["status"] for r in runs})}))
    finally:
        ma_cluster.stop_extra(cluster.folder)
        cluster.stop()


if __name__ == "__main__":
    main()
