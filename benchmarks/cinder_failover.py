"""One member of Cinder's active-active cluster killed under attach cycles
(issue 39, Cinder's side): its gap, what is stuck a window later, and
what ``POST /workers/cleanup`` and the member's restart resolve.

Starts a throwaway Ceph (``components/ceph.py``), etcd
(``components/etcd.py``) and ``cinder_cluster.CinderCluster`` (two
members of cluster ``c1`` on RBD).  ``--threads`` clients run the attach
cycle (``POST /attachments`` with a connector, ``os-complete``, ``DELETE``)
over ``--volumes`` multiattach volumes, and ``--churn`` clients create
and delete volumes; after ``--before`` seconds ``member0`` is killed
(kill -9 of its group; with ``--kill-during create``, then once its log
shows a volume's create begun and not finished; with ``attach``, once it
runs ``ceph mon dump``, as Cinder's RBD driver does for each connect).
The load goes on ``--after`` seconds and stops; ``--window`` seconds
after the kill the rows in a transitional state are listed, and again
after ``POST /workers/cleanup``, after ``member0`` started again and
after a client deleted the attachments left unattached.
One JSON line each: the load (cycles before and after the kill, the
longest time without a completed cycle, the first cycle begun after the
kill to complete, errors by kind), then each snapshot (services, stuck
volumes and attachments, the ``workers`` rows, cycles each member logged)::

    python -m benchmarks.cinder_failover --anchor ANCHOR_DIR \\
        --anchor-home ANCHOR_HOME [--threads 4] [--volumes 4] [--churn 2]
        [--before 15] [--kill-during any|create|attach] [--after 20] [--window 60]
        [--service-down-time 60] [--report-interval 10] [--keep]
"""

import argparse
import collections
import itertools
import json
import os
import pathlib
import random
import shutil
import tempfile
import threading
import time
import uuid
from typing import Any

import requests
import sqlalchemy as sa

from benchmarks.cinder_cluster import CinderCluster
from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from deploy.testbed.components import etcd as etcd_component

MA_SPECS = {"multiattach": "<is> True"}
TRANSITIONAL = ("creating", "deleting", "attaching", "detaching",
                "reserved", "extending", "maintenance")
#: What a member logs for each attachment it connected.
CONNECTED = "attachment_update completed successfully"
#: What a member logs when it begins and ends a volume's create.
CREATING = "being created as"
CREATED = "Created volume successfully"
HTTP_TIMEOUT = 120


class Load:
    """Attach-cycle threads and one create/delete thread, recording when
    each cycle began and ended and each error's kind and time."""

    def __init__(self, cluster: CinderCluster, volumes: list[str],
                 threads: int, churn: int) -> None:
        self.cluster = cluster
        self.volumes = volumes
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.cycles: list[tuple[float, float]] = []
        self.errors: list[tuple[float, str]] = []
        self.samples: dict[str, str] = {}
        self.churned: list[tuple[float, str]] = []
        self.threads = [threading.Thread(target=self._cycles, args=(n,))
                        for n in range(threads)]
        self.threads += [threading.Thread(target=self._churn)
                         for _ in range(churn)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def _error(self, step: str, outcome: Any) -> None:
        kind = "%s %s" % (step, outcome.status_code if isinstance(
            outcome, requests.Response) else type(outcome).__name__)
        with self.lock:
            self.errors.append((time.monotonic(), kind))
            self.samples.setdefault(kind, getattr(outcome, "text", repr(
                outcome))[:300])

    def _call(self, client: harness.Client, step: str, method: str,
              path: str, body: Any = None, ok: tuple = (200, 202, 204)
              ) -> requests.Response | None:
        try:
            resp = client.session.request(method, client.endpoint + path,
                                          json=body, timeout=HTTP_TIMEOUT)
        except requests.RequestException as exc:
            self._error(step, exc)
            return None
        if resp.status_code not in ok:
            self._error(step, resp)
            return None
        return resp

    def _cycles(self, n: int) -> None:
        client = self.cluster.client()
        turn = n
        while not self.stopping.is_set():
            volume = self.volumes[turn % len(self.volumes)]
            turn += 1
            began = time.monotonic()
            resp = self._call(client, "create", "POST", "/attachments", {
                "attachment": {"volume_uuid": volume, "mode": "rw",
                               "instance_uuid": str(uuid.uuid4()),
                               "connector": harness.connector("h%d" % n)}})
            if resp is None:
                # NOTE: Cinder refuses (400) a create that races another
                # on the volume; a client retries after a jittered pause.
                time.sleep(random.uniform(0.05, 0.25))
                continue
            attachment = resp.json()["attachment"]["id"]
            done = self._call(client, "complete", "POST",
                              "/attachments/%s/action" % attachment,
                              {"os-complete": None})
            gone = self._call(client, "delete", "DELETE",
                              "/attachments/%s" % attachment)
            if done is not None and gone is not None:
                with self.lock:
                    self.cycles.append((began, time.monotonic()))

    def _churn(self) -> None:
        client = self.cluster.client()
        while not self.stopping.is_set():
            resp = self._call(client, "volume create", "POST", "/volumes",
                              {"volume": {"size": 1}})
            if resp is None:
                continue
            volume = resp.json()["volume"]["id"]
            status = self._await(client, volume, ("available", "error"))
            if status in ("available", "error") and self._call(
                    client, "volume delete", "DELETE", "/volumes/%s" % volume):
                status = self._await(client, volume, ("gone",
                                                      "error_deleting"))
            with self.lock:
                self.churned.append((time.monotonic(), status or "?"))

    def _await(self, client: harness.Client, volume: str,
               wanted: tuple[str, ...]) -> str | None:
        """The volume's status once in ``wanted`` (or at the load's end)."""
        status = None
        while status not in wanted and not self.stopping.is_set():
            resp = self._call(client, "show", "GET", "/volumes/%s" % volume,
                              ok=(200, 404))
            if resp is not None:
                status = "gone" if resp.status_code == 404 else \
                    resp.json()["volume"]["status"]
            time.sleep(0.5)
        return status

    def figures(self, killed: float) -> dict[str, Any]:
        """The load's figures, times in seconds from the kill."""
        ends = sorted(end for _began, end in self.cycles)
        gaps = [(b - a, a) for a, b in itertools.pairwise(ends)]
        longest = max(gaps, default=(0.0, killed))
        first = min((end for began, end in self.cycles if began >= killed),
                    default=None)
        errors: dict[str, list[float]] = collections.defaultdict(list)
        for when, kind in self.errors:
            errors[kind].append(round(when - killed, 1))
        return {"cycles_before": sum(1 for e in ends if e < killed),
                "cycles_after": sum(1 for e in ends if e >= killed),
                "longest_gap_s": round(longest[0], 2),
                "longest_gap_from_s": round(longest[1] - killed, 2),
                "first_new_cycle_done_s": first and round(first - killed, 2),
                "errors_at_s": {kind: times if len(times) <= 10 else
                                "%d from %s to %s s" % (len(times), times[0],
                                                        times[-1])
                                for kind, times in errors.items()},
                "error_samples": self.samples,
                "churn": [(round(t - killed, 1), s) for t, s in self.churned]}


def snapshot(cluster: CinderCluster, engine: sa.engine.Engine,
             killed: float, label: str) -> dict[str, Any]:
    """Services, rows in a transitional state, ``workers`` rows and each
    member's logged connects."""
    client = cluster.client()
    volumes = client.get("/volumes/detail", params={"all_tenants": 1}).json()
    attachments = client.get("/attachments/detail").json()
    with engine.connect() as conn:
        workers = [dict(r._mapping) for r in conn.execute(sa.text(
            "SELECT resource_type, resource_id, status, service_id "
            "FROM workers WHERE deleted = 0 AND resource_type != 'SENTINEL'"))]
    return {"at": label, "s_after_kill": round(time.monotonic() - killed, 1),
            "services": [(s["host"], s["state"]) for s in cluster.services()],
            "volumes_by_status": dict(collections.Counter(
                v["status"] for v in volumes["volumes"])),
            "stuck_volumes": sorted("%s %s" % (v["status"], v["id"])
                                    for v in volumes["volumes"]
                                    if v["status"] in TRANSITIONAL),
            "attachments_by_status": dict(collections.Counter(
                a["status"] for a in attachments["attachments"])),
            "workers": [{**w, "resource_id": str(w["resource_id"])}
                        for w in workers],
            "connects_logged": {
                name: cluster.log(name).count(CONNECTED)
                for name in ("member0", "member1")}}


def creating(cluster: CinderCluster) -> bool:
    """member0 has begun creating a volume it has not finished (its log)."""
    log = cluster.log("member0")
    return log.count(CREATING) > log.count(CREATED)


def attaching(cluster: CinderCluster) -> bool:
    """member0 connects an attachment: Cinder's RBD driver runs ``ceph mon
    dump`` for each (a process of member0's session)."""
    session = cluster.procs["member0"].pid
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = pathlib.Path("/proc", entry, "stat").read_text()
            argv = pathlib.Path("/proc", entry, "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[3]) == session \
                and b"mon\0dump" in argv:
            return True
    return False


#: What ``--kill-during`` waits for, after ``--before``.
BUSY = {"create": creating, "attach": attaching}


def settle(cluster: CinderCluster, engine: sa.engine.Engine, killed: float,
           timeout: float) -> float | None:
    """Seconds until nothing is stuck (None: not within ``timeout``)."""
    started = time.monotonic()

    def calm() -> bool:
        shot = snapshot(cluster, engine, killed, "")
        return not (shot["stuck_volumes"] or shot["workers"] or set(
            shot["attachments_by_status"]) - {"attached", "detached"})
    try:
        harness.wait_for(calm, timeout=timeout, interval=1)
    except AssertionError:
        return None
    return round(time.monotonic() - started, 1)


def delete_stuck_attachments(cluster: CinderCluster) -> list[int]:
    """What a client does with an attachment its create got a 500 for (it
    finds it by its instance): DELETE each attachment not attached; the
    answers' status codes."""
    client = cluster.client()
    rows = client.get("/attachments/detail").json()["attachments"]
    return [client.delete("/attachments/%s" % row["id"]).status_code
            for row in rows if row["status"] != "attached"]


def make_volumes(cluster: CinderCluster, count: int) -> list[str]:
    client = cluster.client()
    resp = client.post("/types", {"volume_type": {
        "name": "multiattach", "extra_specs": MA_SPECS}})
    assert resp.status_code == 200, resp.text
    volumes = []
    for _ in range(count):
        volume = client.create_volume(size=1, volume_type="multiattach")["id"]
        client.wait_status(volume, "available", timeout=120)
        volumes.append(volume)
    return volumes


def kill_under(load: Load, cluster: CinderCluster,
               args: argparse.Namespace) -> float:
    """Kill member0 after ``--before`` s of load (and once it is busy as
    ``--kill-during`` says); when."""
    time.sleep(args.before)  # the load's length, not a synchronisation
    if args.kill_during != "any":
        harness.wait_for(lambda: BUSY[args.kill_during](cluster),
                         timeout=120, interval=0.02,
                         what="member0 to be busy with a %s"
                         % args.kill_during)
    killed = time.monotonic()
    cluster.kill_member(0)
    return killed


def run(args: argparse.Namespace, root: pathlib.Path) -> None:
    with ceph_component.Ceph(root / "ceph") as ceph, \
            etcd_component.Etcd(root / "etcd") as etcd, CinderCluster(
                args.anchor, args.anchor_home, root / "cinder",
                ceph_conf=ceph.conf, ceph_keyring=ceph.keyring(ceph.client),
                ceph_user=ceph.client, ceph_pool=ceph.pool,
                coordination_url=etcd.tooz_url(),
                service_down_time=args.service_down_time,
                report_interval=args.report_interval) as cluster:
        engine = sa.create_engine(cluster.db_url or "",
                                  poolclass=sa.pool.NullPool)
        load = Load(cluster, make_volumes(cluster, args.volumes),
                    args.threads, args.churn)
        load.start()
        try:
            killed = kill_under(load, cluster, args)
            time.sleep(args.after)  # the load's length after the kill
        finally:
            load.stop()
        print(json.dumps({"kill_during": args.kill_during,
                          "load": load.figures(killed)}), flush=True)
        time.sleep(max(0.0, killed + args.window - time.monotonic()))
        print(json.dumps(snapshot(cluster, engine, killed, "window")),
              flush=True)
        cleaned = cluster.cleanup_workers()
        settled = settle(cluster, engine, killed, args.settle)
        print(json.dumps(dict(snapshot(cluster, engine, killed, "cleanup"),
                              cleanup=cleaned, settled_s=settled),
                         default=str), flush=True)
        cluster.start_member(0)
        settled = settle(cluster, engine, killed, args.settle)
        print(json.dumps(dict(snapshot(cluster, engine, killed, "restarted"),
                              settled_s=settled)), flush=True)
        deleted = delete_stuck_attachments(cluster)
        settled = settle(cluster, engine, killed, args.settle)
        print(json.dumps(dict(snapshot(cluster, engine, killed,
                                      "client deleted"),
                              deleted=deleted, settled_s=settled)),
              flush=True)
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--anchor", type=pathlib.Path, required=True)
    parser.add_argument("--anchor-home", type=pathlib.Path, required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--volumes", type=int, default=4)
    parser.add_argument("--churn", type=int, default=2,
                        help="threads that create and delete volumes")
    for name, default in (("before", 15.0), ("after", 20.0),
                          ("window", 60.0), ("settle", 30.0)):
        parser.add_argument("--" + name, type=float, default=default)
    parser.add_argument("--service-down-time", type=int, default=60)
    parser.add_argument("--report-interval", type=int, default=10)
    parser.add_argument("--kill-during", choices=["any", "create", "attach"],
                        default="any",
                        help="after --before, kill member0 once it creates "
                        "a volume or connects an attachment")
    parser.add_argument("--keep", action="store_true",
                        help="keep the folder of configs and logs")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="cinder-failover-"))
    print(json.dumps({"logs": str(root)}), flush=True)
    try:
        run(args, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
