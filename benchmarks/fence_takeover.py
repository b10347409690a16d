#!/usr/bin/env python3
"""Takeover and fence latency on a real Ceph cluster, idle and under load.

Starts a throwaway single-node Ceph (``deploy/testbed/components/ceph.py``)
and an Ashlar deployment on it (scheduler, API under gunicorn, one volume
node with the ``rbd`` backend; PostgreSQL or MariaDB; a fresh RabbitMQ
vhost), a failover type (multiattach, ``fencing``, single writer), then
``--runs`` times: a new volume, host A holding it read/write and host B
read-only through an attachment the project reserved for it over REST
(``ashlar-agent hold``: one librados instance each, as a hypervisor's; a
compute agent takes over only through such an attachment), A writing,
and B taking over while A keeps writing in a loop.  Measured per run:

* takeover: B's ``takeover`` command, request to B writable (the api's
  fence of A, the grant, B's reopen and registration);
* fence to failure: from the takeover request until A's first refused
  write;
* late writes: A's writes that the storage accepted after the takeover
  returned (must be 0: the fence returns only when every PG enforces it);
* failed: runs whose takeover failed, whose A was never refused within
  ``REFUSAL_DEADLINE``, or was refused with another error than the
  fence's (ESHUTDOWN): each is reported, none hangs the bench;
* fence: a fence alone (``ashlar-fence`` of B over REST, then B's next
  write must fail).

``--load N`` repeats the runs while N threads attach and detach read-only
attachments of other hosts to the same volume over REST (create with a
connector, os-complete, delete), and reports their cycles/s.  Prints one
JSON line per phase (p50/p95/max ms)::

    python -m benchmarks.fence_takeover [--runs 20] [--load 4] [--db mysql]
"""

import argparse
import json
import pathlib
import tempfile
import threading
import time

from benchmarks.common import summarize
from deploy.testbed import failover_story
from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component

CONNECTOR = {"ip": "127.0.0.1", "platform": "x86_64", "os_type": "linux",
             "multipath": False}
#: How a fenced librbd handle refuses a write (ESHUTDOWN); any other
#: error is a failure of the run, not a refusal.
FENCED_ERROR = "ConnectionShutdown"
#: Seconds A keeps writing for before a run that never refuses it fails.
REFUSAL_DEADLINE = 60


class Bench:
    def __init__(self, folder: str, cluster: ceph_component.Ceph,
                 db: str) -> None:
        self.cluster = cluster
        self.vhost, self._drop_vhost = harness.broker_vhost()
        self.db_url, self._drop_db = harness.database(db)
        path = pathlib.Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        self.dep = harness.Deployment(path, self.vhost, self.db_url)
        self.client = harness.Client(self.dep.endpoint)

    def start(self) -> None:
        c = self.cluster
        self.dep.db_sync()
        self.dep.start("scheduler", "services.scheduler", "sched")
        self.dep.start("node", "services.volume", "cephnode", backends="ceph",
                       extra="[ceph]\nvolume_driver = rbd\nrbd_pool = %s\n"
                       "rbd_user = %s\nrbd_ceph_conf = %s\nrbd_keyring = %s\n"
                       % (c.pool, c.client, c.conf, c.keyring(c.client)))
        self.dep.start("api", "services.api", "api")
        harness.wait_for(self.client.pools, timeout=60, what="the RBD pool")
        failover_story.failover_type(self.client, "failover", "ceph")

    def stop(self) -> None:
        self.dep.stop_all()
        self._drop_db()
        self._drop_vhost()

    def held(self, host: str, volume_id: str, mode: str = "ro",
             attachment_id: str | None = None) -> failover_story.Held:
        config = self.dep.config("agent-%s" % host, host, extra=(
            "[agent]\nrbd_keyring_dir = %s\nrbd_user = %s\n"
            % (self.cluster.dir, self.cluster.compute_client)))
        return failover_story.Held(config, volume_id, mode,
                                   attachment_id=attachment_id)

    def run(self, index: int, load: int) -> dict:
        """One takeover; its figures."""
        volume = self.client.create_volume(size=1,
                                           volume_type="failover")["id"]
        self.client.wait_status(volume, "available", timeout=60)
        active = self.held("bench-a%d" % index, volume, "rw")
        passive = self.held("bench-b%d" % index, volume, attachment_id=(
            failover_story.reserve(self.client, volume)))
        stop = threading.Event()
        cycles: list[int] = []
        loaders = [threading.Thread(target=self._cycle, args=(
            volume, "load%d-%d" % (index, n), stop, cycles))
            for n in range(load)]
        started = time.monotonic()
        for thread in loaders:
            thread.start()
        try:
            result = self._takeover(active, passive)
            if "failed" not in result:
                result["fence"] = self._fence(passive)
        finally:
            stop.set()
            for thread in loaders:
                thread.join()
            for held in (active, passive):
                held.ask("detach")
                held.close()
            self.client.delete("/volumes/%s" % volume)
        return dict(result, cycles=len(cycles),
                    seconds=time.monotonic() - started)

    def _takeover(self, active: failover_story.Held,
                  passive: failover_story.Held) -> dict:
        assert active.write(0, b"A") == {"written": 1}
        writes: list[tuple[float, str]] = []
        done = threading.Event()

        def write_until_refused() -> None:
            deadline = time.monotonic() + REFUSAL_DEADLINE
            while not done.is_set() and time.monotonic() < deadline:
                answer = active.write(4096, b"A again")
                writes.append((time.monotonic(), answer.get("error", "")))
                if answer.get("error"):
                    return
        writer = threading.Thread(target=write_until_refused, daemon=True)
        start = time.monotonic()
        writer.start()
        try:
            answer = failover_story.takeover(active, passive)
        except AssertionError as exc:
            done.set()
            return {"failed": "takeover: %s" % exc}
        returned = time.monotonic()
        writer.join(timeout=REFUSAL_DEADLINE)
        done.set()
        refusals = [(t, error) for t, error in writes if error]
        if not refusals:
            return {"failed": "A was never refused within %ss"
                              % REFUSAL_DEADLINE}
        refused_at, error = refusals[0]
        if not error.startswith(FENCED_ERROR):
            return {"failed": "A's write failed with %r, not the fence's "
                              "%s" % (error, FENCED_ERROR)}
        return {"takeover": answer["seconds"],
                "fence_to_failure": refused_at - start,
                "late_writes": sum(1 for t, error in writes
                                   if not error and t > returned)}

    def _fence(self, held: failover_story.Held) -> float:
        """A fence alone: the REST call, which returns once the storage
        refuses the host (the attachment then only detaches)."""
        start = time.monotonic()
        resp = self.client.post("/attachments/%s/action"
                                % held.attachment["id"], {"ashlar-fence": {}})
        took = time.monotonic() - start
        assert resp.status_code == 200, resp.text
        error = held.write(0, b"fenced").get("error", "")
        assert error.startswith(FENCED_ERROR), \
            "the fenced host's write: %r" % (error or "accepted")
        return took

    def _cycle(self, volume: str, host: str, stop: threading.Event,
               cycles: list[int]) -> None:
        client = harness.Client(self.dep.endpoint)
        while not stop.is_set():
            resp = client.post("/attachments", {"attachment": {
                "volume_uuid": volume, "mode": "ro",
                "connector": dict(CONNECTOR, host=host)}})
            if resp.status_code != 200:
                continue
            att = resp.json()["attachment"]["id"]
            client.post("/attachments/%s/action" % att, {"os-complete": {}})
            client.delete("/attachments/%s" % att)
            cycles.append(1)


def measure(bench: Bench, runs: int, load: int) -> dict:
    every = [bench.run(i, load) for i in range(runs)]
    results = [r for r in every if "failed" not in r]
    if not results:
        return {"phase": "under load (%d threads)" % load if load else "idle",
                "runs": runs, "failed": [r["failed"] for r in every]}
    return {"phase": "under load (%d threads)" % load if load else "idle",
            "runs": runs,
            "failed": [r["failed"] for r in every if "failed" in r],
            "takeover": summarize([r["takeover"] for r in results]),
            "fence_to_failure": summarize([r["fence_to_failure"]
                                           for r in results]),
            "fence": summarize([r["fence"] for r in results]),
            "late_writes": sum(r["late_writes"] for r in results),
            "load_cycles_per_s": round(sum(r["cycles"] for r in results)
                                       / sum(r["seconds"] for r in results),
                                       1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", type=int, default=4)
    parser.add_argument("--db", choices=["postgresql", "mysql"],
                        default="postgresql")
    args = parser.parse_args()
    ceph_component.available()
    with tempfile.TemporaryDirectory(prefix="ashlar-fence-") as folder, \
            ceph_component.Ceph(folder + "/ceph") as cluster:
        bench = Bench(folder + "/ashlar", cluster, args.db)
        try:
            bench.start()
            for load in sorted({0, args.load}):
                print(json.dumps(measure(bench, args.runs, load)), flush=True)
        finally:
            bench.stop()


if __name__ == "__main__":
    main()
