"""Cold start: the first requests of each kind after a fresh start, against
the same requests once warm.

Starts ``ma_cluster.Cluster`` (console scripts, 2 API workers, both backends
in one volume service) ``--rounds`` times.  Right after it answers
``get_pools``, runs ``--flows`` flows of bench.py's calls, each on a new
connection (so that both API workers are met early): create a volume and
poll it until ``available``, S1's unsatisfiable create, then S3's attach
cycle (create with a connector, complete, get, delete) and the volume's
delete.  Prints JSON: per step, the milliseconds of flows 1, 2 and 3 and the
median of the last half of the flows (a create's polls are summed)::

    python -m benchmarks.first_requests [--db mysqldb] [--rounds 3]
"""

import argparse
import json
import statistics
import time
import uuid

from benchmarks import ma_cluster
from benchmarks import request_cost


class Flow:
    """bench.py's calls, noauth headers, on one new connection."""

    def __init__(self, endpoint: str) -> None:
        self.client = request_cost.Client(endpoint)
        self.took: dict[str, float] = {}

    def call(self, step: str, method: str, path: str,
             body: dict | None = None, expect: int = 200) -> dict:
        """One request, its time added to ``step``'s; the JSON answer.

        :raises RuntimeError: the status is not of ``expect``'s class.
        """
        client = self.client
        start = time.perf_counter()
        client.conn.request(method, client.path + path,
                            headers=client.headers,
                            body=body and json.dumps(body))
        answer = client.conn.getresponse()
        data = answer.read()
        self.took[step] = self.took.get(step, 0.0) + (
            time.perf_counter() - start)
        if answer.status // 100 != expect // 100:
            raise RuntimeError("%s %s: %d %s" % (method, path, answer.status,
                                                 data[:200]))
        return json.loads(data) if data else {}

    def run(self, ma_type: str, unsat_type: str) -> dict[str, float]:
        """The flow; milliseconds by step (the polls of a create summed)."""
        vid = self.call("POST /volumes", "POST", "/volumes", {"volume": {
            "size": 1, "volume_type": ma_type}}, 202)["volume"]["id"]
        start = time.perf_counter()
        while self.call("GET /volumes/{id}", "GET", "/volumes/" + vid)[
                "volume"]["status"] != "available":
            time.sleep(0.005)
        self.took["create to available"] = time.perf_counter() - start
        self.call("S1 POST /volumes (400)", "POST", "/volumes", {"volume": {
            "size": 1, "volume_type": unsat_type}}, 400)
        connector = {"host": "cold-host", "ip": "127.0.0.1",
                     "initiator": "iqn.1994-05.com.example:cold-host",
                     "platform": "x86_64", "os_type": "linux",
                     "multipath": False, "do_local_attach": False}
        aid = self.call("POST /attachments", "POST", "/attachments", {
            "attachment": {"volume_uuid": vid,
                           "instance_uuid": str(uuid.uuid4()),
                           "connector": connector, "mode": "rw"}})[
            "attachment"]["id"]
        self.call("complete", "POST", "/attachments/%s/action" % aid,
                  {"os-complete": None}, 204)
        self.call("GET /attachments/{id}", "GET", "/attachments/" + aid)
        self.call("DELETE /attachments/{id}", "DELETE",
                  "/attachments/" + aid)
        self.call("DELETE /volumes/{id}", "DELETE", "/volumes/" + vid, None,
                  202)
        self.client.conn.close()
        return {step: round(s * 1000, 2) for step, s in self.took.items()}


def make_type(endpoint: str, name: str, specs: dict) -> str:
    """Create a volume type with ``specs``; its id."""
    flow = Flow(endpoint)
    return flow.call("type", "POST", "/types", {"volume_type": {
        "name": name, "extra_specs": specs}})["volume_type"]["id"]


def one_round(db: str, flows: int) -> dict:
    """A fresh deployment, its two types and ``flows`` flows; the figures
    by step."""
    cluster = ma_cluster.Cluster(db, 2, scripts=True, volumes="one")
    try:
        ready = cluster.start()
        ep = cluster.dep.endpoint
        ma = make_type(ep, "cold-ma", {"multiattach": "<is> True"})
        unsat = make_type(ep, "cold-unsat", {
            "multiattach": "<is> True", "volume_backend_name": "nosuch"})
        runs = [Flow(ep).run(ma, unsat) for _ in range(flows)]
    finally:
        cluster.stop()
    warm = runs[len(runs) // 2:]
    return {"ready_s": round(ready, 2), "steps": {
        step: {"flow1": runs[0][step], "flow2": runs[1][step],
               "flow3": runs[2][step],
               "warm_p50": round(statistics.median(r[step] for r in warm),
                                 2)} for step in runs[0]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="mysqldb",
                        choices=["mysql", "mysqldb", "postgresql"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flows", type=int, default=40)
    args = parser.parse_args()
    print(json.dumps([one_round(args.db, max(args.flows, 6))
                      for _ in range(args.rounds)], indent=1))


if __name__ == "__main__":
    main()
