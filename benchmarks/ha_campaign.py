#!/usr/bin/env python3
"""The failover campaign on the "ha" deployment (issue 39): faults under
attach cycles on RBD, each repeated, every count checked.

Starts a throwaway Ceph (``components/ceph.py``) and the ha deployment
(``deploy/testbed/ha.py``): two api hosts behind haproxy, a scheduler,
``--members`` (3) volume members of cluster ``c1`` on one RBD pool, tooz
on three etcd members, a three-node RabbitMQ cluster with quorum queues,
Galera (three nodes) behind haproxy.  The load is
``benchmarks/fault_campaign.py``'s: ``--concurrency`` (8) threads take
turns on every volume of a pool of multiattach volumes (so they contend
for each one), and ``--churn`` threads create and delete volumes.  The
faults, one at a time, each ``--runs`` (3) times, each a crash (kill -9)
held past its detection:

* ``member``: a volume member (the next one each run), held until the
  api shows it down, started again;
* ``broker``: the RabbitMQ node most volume members are connected to;
* ``database``: the Galera writer (haproxy moves to a backup); it rejoins;
* ``api``: api host ``api2`` (gunicorn's master and workers);
* ``etcd``: the etcd leader.

All but ``member`` are held ``--hold`` seconds (default: the detection
time, ``service_down_time`` plus a report interval), then started again.
Per run, one JSON line with ``fault_campaign``'s figures (cycles, the
errors the client saw by kind and which were not retryable, recovery,
``longest_gap_s`` between two completed cycles (the figure that says
whether the load stalled; ``recovery_s`` runs from the kill until a probe
cycle succeeded once the fault was over, so it includes the hold and the
restart), stuck, lost, leaked
images, orphaned rows, counter drift) and ``duplicated``: volumes created
or attachments connected twice by the members (their logs).  Then one
line of totals::

    python -m benchmarks.ha_campaign [--runs 3] [--concurrency 8]
        [--faults member,broker,database,api,etcd] [--service-down-time 15]

Needs root and the engines (``python -m deploy.testbed.ha install``,
``python -m deploy.testbed.components.ceph install``).
"""

import argparse
import collections
import json
import pathlib
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from benchmarks import fault_campaign
from deploy.testbed import harness
from deploy.testbed import ha as ha_deployment
from deploy.testbed.components import ceph as ceph_component

FAULTS = ("member", "broker", "database", "api", "etcd")
#: The backend of the members: Ceph RBD, its own section.
BACKEND = "rbd"


class HACampaign(fault_campaign.Campaign):
    """``fault_campaign.Campaign`` on the ha deployment with RBD."""

    def __init__(self, folder: pathlib.Path,
                 settings: fault_campaign.Settings, members: int,
                 service_down_time: int, hold: float | None) -> None:
        super().__init__(folder, settings)
        self.members = members
        self.service_down_time = service_down_time
        #: How long a fault other than a member's is held.
        self.hold_s = hold if hold is not None else service_down_time + 1.0
        self.nodes_wanted = 1
        self.turn = 0
        self.ha: ha_deployment.HA | None = None

    # setting up
    def _start(self) -> None:
        ha_deployment.HA.available()
        ceph_component.available()
        self.ceph = ceph_component.Ceph(self.folder / "ceph")
        self.cleanups.append(self.ceph.stop)
        self.ceph.start()
        ceph = self.ceph
        section = ("[%s]\nvolume_driver = rbd\nrbd_pool = %s\n"
                   "rbd_user = %s\nrbd_ceph_conf = %s\nrbd_keyring = %s\n"
                   % (BACKEND, ceph.pool, ceph.client, ceph.conf,
                      ceph.keyring(ceph.client)))
        s = self.settings
        self.ha = ha_deployment.HA(
            self.folder / "ha", members=self.members, backend=BACKEND,
            backend_section=section, rpc_call_timeout=s.rpc_call_timeout,
            service_down_time=self.service_down_time)
        self.ha.__enter__()
        self.cleanups.append(self.ha.__exit__)
        assert self.ha.dep is not None and self.ha.client is not None
        self.dep = self.ha.dep
        self.client = self.ha.client
        self.db_url = self.ha.galera.url()
        self.db_note = "Galera, three nodes behind haproxy"
        self._make_pool()
        self.engine = sa.create_engine(self.db_url,
                                       poolclass=sa.pool.NullPool)
        self.cleanups.append(self.engine.dispose)
        self.load = fault_campaign.Load(self.dep.endpoint, self.pool,
                                        self.ledger, s)

    # the faults: each returns what it did
    def _hold(self) -> None:
        threading.Event().wait(self.hold_s)

    @staticmethod
    def _timed(action: Callable[[], object]) -> float:
        started = time.monotonic()
        action()
        return time.monotonic() - started

    def _service(self, host: str) -> str | None:
        return self.client.services_up().get(("cinder-volume",
                                              "%s@%s" % (host, BACKEND)))

    def fault_member(self, _hold: Callable[[], None]) -> str:
        ha = self._ha()
        index = self.turn % len(ha.members)
        self.turn += 1
        host = ha.members[index]
        self.dep.stop("volume%d" % (index + 1), signal.SIGKILL)
        started = time.monotonic()
        seen = fault_campaign.waited(
            lambda: self._service(host) == "down", self.settings.window,
            interval=0.2)
        down_s = time.monotonic() - started
        ha.start_member(index)
        fault_campaign.waited(lambda: self._service(host) == "up",
                               self.settings.window, interval=0.2)
        return ("kill -9 of volume member %s, %s down after %.1f s, started "
                "again" % (host, "seen" if seen else "never seen", down_s))

    def fault_broker(self, _hold: Callable[[], None]) -> str:
        ha = self._ha()
        on = collections.Counter(node for nodes in
                                 ha.volume_members_on().values()
                                 for node in nodes)
        node = on.most_common(1)[0][0] if on else ha.rabbit.names[0]
        ha.rabbit.kill(node)
        try:
            self._hold()
        finally:
            back = self._timed(lambda: ha.rabbit.start(node))
        return ("kill -9 of RabbitMQ node %s (connections of the members: "
                "%s), held %.0f s, started again in %.1f s"
                % (node, dict(on), self.hold_s, back))

    def fault_database(self, _hold: Callable[[], None]) -> str:
        ha = self._ha()
        writer = ha.galera.writer()
        assert writer is not None, "no Galera writer"
        ha.galera.kill(writer)
        try:
            self._hold()
            moved = ha.galera.writer()
        finally:
            back = self._timed(lambda: ha.galera.join(writer))
        return ("kill -9 of the Galera writer %s, %s wrote meanwhile; held "
                "%.0f s, rejoined in %.1f s" % (writer, moved, self.hold_s,
                                                back))

    def fault_api(self, _hold: Callable[[], None]) -> str:
        ha = self._ha()
        self.dep.stop("api2", signal.SIGKILL)
        try:
            self._hold()
        finally:
            ha.start_api("api2")
        own = harness.Client(ha.api_endpoints["api2"])
        harness.wait_for(lambda: own.get("/volumes").status_code == 200,
                         timeout=60, what="api2 answering again")
        return "kill -9 of api host api2, held %.0f s, started again" % (
            self.hold_s)

    def fault_etcd(self, _hold: Callable[[], None]) -> str:
        ha = self._ha()
        leader = ha.etcd.leader()
        assert leader is not None, "no etcd leader"
        ha.etcd.kill(leader)
        try:
            self._hold()
            elected = ha.etcd.leader()
        finally:
            back = self._timed(lambda: ha.etcd.start(leader))
        return ("kill -9 of the etcd leader %s, %s elected; held %.0f s, "
                "started again in %.1f s" % (leader, elected, self.hold_s,
                                             back))

    def _ha(self) -> ha_deployment.HA:
        assert self.ha is not None
        return self.ha

    # the checks, on RBD images instead of files
    def images(self) -> set[str]:
        """The RBD images of the members' pool."""
        return set(self.ceph.ceph_rbd("ls", "-p", self.ceph.pool).split())

    def lost(self, rows: dict[str, list[dict]]) -> list[str]:
        present = {v["id"] for v in rows["volumes"]}
        missing = ["volume %s has no row" % vid for vid, state
                   in self.ledger.volumes.items()
                   if state == "live" and vid not in present]
        images = self.images()
        missing += ["volume %s (%s) has no image" % (v["id"], v["status"])
                    for v in rows["volumes"]
                    if v["status"] in fault_campaign.HOLDS_FILE
                    and "volume-%s" % v["id"] not in images]
        return missing

    def leaked(self, rows: dict[str, list[dict]]) -> list[str]:
        mine = {"volume-%s" % v["id"] for v in rows["volumes"]}
        return sorted(self.images() - mine)

    def duplicated(self) -> dict[str, int]:
        """Volumes created, and attachments connected, more than once."""
        ha = self._ha()
        with self.ledger.lock:
            volumes = set(self.ledger.volumes)
            told_of = dict(self.ledger.told_of)
        found = ha.done_more_than_once("Created volume %s ", volumes)
        found.update(ha.connected_more_than_once(told_of))
        return found

    def run_fault(self, name: str) -> dict:
        result = super().run_fault(name)
        twice = self.duplicated()
        result.update(duplicated=len(twice), duplicated_ops=sorted(twice))
        return result


def totals(results: list[dict]) -> dict[str, Any]:
    """Per fault, the worst of its runs; overall, the sums."""
    line: dict[str, Any] = fault_campaign.overall(results)
    line["duplicated"] = sum(r["duplicated"] for r in results)
    by_fault: dict[str, dict] = {}
    for r in results:
        worst = by_fault.setdefault(r["fault"], collections.Counter())
        worst["runs"] += 1
        worst["errors"] += sum(r["errors"].values())
        worst["longest_gap_s"] = max(worst["longest_gap_s"],
                                     r["longest_gap_s"])
        for key in ("stuck", "lost", "leaked", "orphaned", "duplicated"):
            worst[key] += r[key]
    line["by_fault"] = {k: dict(v) for k, v in by_fault.items()}
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--churn", type=int, default=1)
    parser.add_argument("--pool", type=int, default=8)
    parser.add_argument("--load-seconds", type=float, default=10.0)
    parser.add_argument("--window", type=float, default=90.0)
    parser.add_argument("--rpc-call-timeout", type=int, default=30)
    parser.add_argument("--service-down-time", type=int, default=15)
    parser.add_argument("--hold", type=float, default=None)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--keep", action="store_true",
                        help="keep the folder of configs and logs")
    args = parser.parse_args()
    faults = tuple(f for f in args.faults.split(",") if f)
    unknown = set(faults) - set(FAULTS)
    if unknown:
        raise SystemExit("unknown faults: %s" % ", ".join(sorted(unknown)))
    settings = fault_campaign.Settings(
        concurrency=args.concurrency, pool=args.pool, churn=args.churn,
        load_seconds=args.load_seconds, window=args.window,
        rpc_call_timeout=args.rpc_call_timeout, faults=faults)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ashlar-ha-campaign-"))
    try:
        with HACampaign(folder, settings, args.members,
                        args.service_down_time, args.hold) as campaign:
            assert campaign.ha is not None
            print(json.dumps({"database": campaign.db_note,
                              "start_s": round(campaign.ha.start_seconds
                                               or 0.0, 1),
                              "pss_mib": campaign.ha.pss_parts(),
                              "logs": str(folder)}), flush=True)
            results = []
            for name in faults:
                for _ in range(args.runs):
                    results.append(campaign.run_fault(name))
                    shown = {k: v for k, v in results[-1].items()
                             if not k.startswith("_")}
                    print(json.dumps(shown), flush=True)
            print(json.dumps(totals(results)), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
