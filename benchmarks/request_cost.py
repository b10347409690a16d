"""The api's CPU per request of the volume calls S2 makes, one at a time.

Against an endpoint served by ``ma_cluster.py serve`` (noauth), on one
keep-alive connection: ``n`` creates (``POST /volumes``), ``n`` reads of
one volume (``GET /volumes/{id}``, what bench.py polls) and the ``n``
deletes.  Prints JSON: per request kind, the latency p50 and the CPU
milliseconds per request of the api processes and of the other service
processes (``/proc`` accounting; the scheduler and volume nodes do their
part of a create or delete after the answer, so quiet a few seconds
between kinds)::

    python -m benchmarks.request_cost --endpoint URL [--requests 300]
"""

import argparse
import http.client
import json
import statistics
import time
import urllib.parse

from benchmarks import cycle_cost

KINDS = (("services.api", "api"), ("ashlar-api", "api"),
         ("services.scheduler", "scheduler"),
         ("ashlar-scheduler", "scheduler"),
         ("services.volume", "volume"), ("ashlar-volume", "volume"))
SETTLE_S = 3.0


class Client:
    """One keep-alive connection speaking bench.py's noauth headers."""

    def __init__(self, endpoint: str) -> None:
        url = urllib.parse.urlparse(endpoint)
        self.path = url.path
        self.conn = http.client.HTTPConnection(url.hostname, url.port)
        project = url.path.rstrip("/").rsplit("/", 1)[-1]
        self.headers = {"X-Auth-Token": "bench:%s" % project,
                        "OpenStack-API-Version": "volume 3.54",
                        "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        self.conn.request(method, self.path + path, headers=self.headers,
                          body=body and json.dumps(body))
        answer = self.conn.getresponse()
        data = answer.read()
        if answer.status >= 400:
            raise RuntimeError("%s %s: %d %s" % (method, path, answer.status,
                                                 data[:200]))
        return json.loads(data) if data else {}


def measure(kind: str, calls: list, client: Client) -> tuple[dict, list]:
    """Run ``calls`` (method, path, body); the figures and the answers."""
    time.sleep(SETTLE_S)
    before, took, answers = cycle_cost.cpu_by_kind(KINDS), [], []
    for method, path, body in calls:
        start = time.perf_counter()
        answers.append(client.call(method, path, body))
        took.append(time.perf_counter() - start)
    time.sleep(SETTLE_S)
    after = cycle_cost.cpu_by_kind(KINDS)
    per = {name: round((after[name] - before.get(name, 0.0)) * 1000
                       / len(calls), 2) for name in after}
    return {"request": kind, "p50_ms": round(
        statistics.median(took) * 1000, 2),
        "cpu_ms_per_request": per}, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    client = Client(args.endpoint)
    n = args.requests
    post, made = measure("POST /volumes", [
        ("POST", "/volumes", {"volume": {"size": 1, "name": "cost-%d" % i}})
        for i in range(n)], client)
    ids = [answer["volume"]["id"] for answer in made]
    get, _ = measure("GET /volumes/{id}", [
        ("GET", "/volumes/" + ids[0], None)] * n, client)
    delete, _ = measure("DELETE /volumes/{id}", [
        ("DELETE", "/volumes/" + vid, None) for vid in ids], client)
    print(json.dumps({"requests": n, "results": [post, get, delete]},
                     indent=1))


if __name__ == "__main__":
    main()
