"""S3, the attach cycle, run by Ashlar's own client (no anchor needed).

One multiattach volume; ``--cycles`` cycles shared by ``--concurrency``
threads, each thread a compute host of its own.  A cycle reserves an
attachment with the host's connector (``POST /attachments``, which answers
with connection_info), completes it (``os-complete``), reads it back and
deletes it.  A reservation refused with a 4xx is retried after a jittered
backoff (10 ms doubling up to 250 ms), as a compute agent would retry;
Ashlar refuses none on a multiattach volume.  Prints one JSON line:
cycles/s, the cycle's and each step's latency (ms), the refusals, and
whether the volume ended ``available`` with no attachment::

    python -m benchmarks.attach_cycle --endpoint URL [--cycles 200]
        [--concurrency 8]

``URL`` is what ``python -m benchmarks.ma_cluster serve`` prints.
``benchmarks/README.md`` says how this differs from the anchor's S3.
"""

import argparse
import collections
import itertools
import json
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import requests

from benchmarks.common import Api
from benchmarks.common import summarize
from deploy.testbed import harness

STEPS = ("reserve", "complete", "show", "delete")
#: Seconds between polls of the volume while it is created or deleted.
POLL_S = 0.01


def backoff(attempt: int) -> None:
    """Sleep before the ``attempt``-th retry of a refused reservation."""
    time.sleep(min(0.01 * 2 ** min(attempt, 6), 0.25)
               * random.uniform(0.5, 1.5))


def reserve(api: Api, volume_id: str, host: str,
            refused: collections.Counter) -> requests.Response:
    """``POST /attachments`` as ``host`` until it is not refused with a
    4xx (at most 100 retries); each refusal is counted in ``refused``."""
    for attempt in itertools.count():
        resp = api.call("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": harness.connector(host), "mode": "rw"}})
        if resp.status_code == 200:
            return resp
        refused[resp.status_code] += 1
        if not 400 <= resp.status_code < 500 or attempt >= 100:
            return resp
        backoff(attempt + 1)
    raise AssertionError("unreachable")


def one_cycle(api: Api, volume_id: str, host: str) -> dict:
    """Reserve, complete, show and delete one attachment as ``host``."""
    took: dict = {"refused": collections.Counter()}
    started = step = time.perf_counter()
    resp = reserve(api, volume_id, host, took["refused"])
    if resp.status_code != 200:
        took["error"] = "reserve %d %s" % (resp.status_code, resp.text[:200])
        return took
    attachment = resp.json()["attachment"]["id"]
    steps = [("complete", "POST", "/attachments/%s/action" % attachment,
              {"os-complete": None}),
             ("show", "GET", "/attachments/%s" % attachment, None),
             ("delete", "DELETE", "/attachments/%s" % attachment, None)]
    took["reserve"] = time.perf_counter() - step
    for name, method, path, body in steps:
        step = time.perf_counter()
        resp = api.call(method, path, body)
        took[name] = time.perf_counter() - step
        if resp.status_code >= 400:
            took["error"] = "%s %d %s" % (name, resp.status_code,
                                          resp.text[:200])
            return took
    took["cycle"] = time.perf_counter() - started
    return took


def final_state(api: Api, volume_id: str) -> dict:
    """The volume's status and how many attachments it and the list show."""
    volume = api.call("GET", "/volumes/%s" % volume_id).json()["volume"]
    listed = api.call("GET", "/attachments",
                      params={"volume_id": volume_id}).json()["attachments"]
    return {"status": volume["status"],
            "volume_attachments": len(volume["attachments"]),
            "listed_attachments": len(listed)}


def run(endpoint: str, cycles: int, concurrency: int,
        extra_specs: dict | None = None) -> dict:
    """``cycles`` attach cycles at ``concurrency`` on a new volume, which
    is deleted afterwards (with its type); the figures.  ``extra_specs``:
    more of the type's (a ``volume_backend_name``)."""
    api = Api(endpoint)
    type_id, volume_id = api.typed_volume(
        "attach-cycle", {"multiattach": "<is> True", **(extra_specs or {})},
        POLL_S)
    hosts = threading.local()
    numbers = itertools.count()

    def cycle(_index: int) -> dict:
        if not hasattr(hosts, "name"):
            hosts.name = "bench-host-%d" % next(numbers)
        return one_cycle(api, volume_id, hosts.name)
    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            results = list(pool.map(cycle, range(cycles)))
        wall = time.perf_counter() - started
        state = final_state(api, volume_id)
    finally:
        api.call("DELETE", "/volumes/%s" % volume_id)
        api.wait_volume(volume_id, None, POLL_S)
        api.call("DELETE", "/types/%s" % type_id)
    done = [r for r in results if "error" not in r]
    refused: collections.Counter = collections.Counter()
    for result in results:
        refused.update(result["refused"])
    return {"concurrency": concurrency, "cycles": cycles, "ok": len(done),
            "cycles_per_s": round(len(done) / wall, 2),
            "cycle_ms": summarize([r["cycle"] for r in done]),
            "step_ms": {s: summarize([r[s] for r in done]) for s in STEPS},
            "refused": {str(code): n for code, n in refused.items()},
            "errors": [r["error"] for r in results if "error" in r][:3],
            "final_state": state,
            "final_state_ok": state == {"status": "available",
                                        "volume_attachments": 0,
                                        "listed_attachments": 0}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    print(json.dumps(run(args.endpoint, args.cycles, args.concurrency)),
          flush=True)


if __name__ == "__main__":
    main()
