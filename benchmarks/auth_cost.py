#!/usr/bin/env python3
"""What authentication costs per request, in each mode, on one machine.

Starts a real Keystone (deploy/testbed/components/keystone.py) and three
Ashlar deployments side by side (api with 2 workers, scheduler, one volume
node, PostgreSQL, a RabbitMQ vhost each): noauth, keystone (tokens checked
by keystonemiddleware, whose cache is warm after the first request of a
token) and http_basic (bcrypt, a verified pair remembered).  Then, in
rounds that alternate the modes, it times ``GET /v3/types`` and ``GET
/v3/volumes/{id}`` on a kept-alive connection, and ``attachment_get`` over
the RPC door, and prints p50/p95/max per mode and the difference to
noauth::

    python3 -m benchmarks.auth_cost --requests 2000 --rounds 3
"""

import argparse
import base64
import pathlib
import tempfile
import time
import uuid

import bcrypt
import requests

from tests.functional import door
from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component

PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
OPERATOR = ("operator", "operator-secret")


class Mode:
    """One running deployment, its REST headers and its door credential."""

    def __init__(self, name: str, dep: harness.Deployment, vhost: str,
                 headers: dict, credential: dict, project: str) -> None:
        self.name, self.dep, self.vhost = name, dep, vhost
        self.credential = credential
        self.base = "http://127.0.0.1:%d/v3/%s" % (dep.port, project)
        self.session = requests.Session()
        self.session.headers.update(headers)
        self.session.headers["OpenStack-API-Version"] = "volume 3.60"
        self.trans = door.transport(vhost)
        self.volume = self.attachment = None

    def prepare(self) -> None:
        """A volume with an attachment to read."""
        made = self.session.post(self.base + "/volumes",
                                 json={"volume": {"size": 1}}).json()
        vid = made["volume"]["id"]
        harness.wait_for(lambda: self.session.get(
            self.base + "/volumes/" + vid).json()["volume"]["status"]
            == "available", what="the volume")
        self.volume = vid
        self.attachment = self.session.post(self.base + "/attachments", json={
            "attachment": {"volume_uuid": vid,
                           "instance_uuid": str(uuid.uuid4())}}).json()[
            "attachment"]["id"]

    def timed(self, what: str) -> float:
        start = time.perf_counter()
        if what == "types":
            resp = self.session.get(self.base + "/types")
        elif what == "volume":
            resp = self.session.get(self.base + "/volumes/" + self.volume)
        else:
            door.call(self.trans, {"request_id": door.request_id(),
                                   "credential": self.credential},
                      "attachment_get", attachment_id=self.attachment)
            return time.perf_counter() - start
        assert resp.status_code == 200, resp.text
        return time.perf_counter() - start


def _deployment(tmp: pathlib.Path, name: str, extra: str) -> tuple:
    vhost, remove_vhost = harness.broker_vhost()
    db_url, drop = harness.database("postgresql")
    folder = tmp / ("ashlar-" + name)
    folder.mkdir()
    dep = harness.Deployment(folder, vhost, db_url)
    dep.db_sync()
    dep.start("scheduler", "services.scheduler", name + "-sched")
    dep.start("volume", "services.volume", name + "-node")
    dep.start("api", "services.api", name + "-api", extra=extra)

    def stop() -> None:
        dep.stop_all()
        drop()
        remove_vhost()
    return dep, vhost, stop


def _modes(tmp: pathlib.Path, ks: keystone_component.Keystone,
           stops: list) -> list[Mode]:
    personas = ks.personas(projects=("bench",))
    admin = personas["bench-admin"]
    token = ks.project_token(admin)
    user_file = tmp / "htpasswd"
    user_file.write_text("%s:%s\n" % (OPERATOR[0], bcrypt.hashpw(
        OPERATOR[1].encode(), bcrypt.gensalt(rounds=12)).decode()))
    basic = "Basic " + base64.b64encode(":".join(OPERATOR).encode()).decode()
    found = []
    for name, extra, headers, credential, project in (
            ("noauth", "", {"X-Auth-Token": "admin:" + PROJECT},
             {"X-Auth-Token": "admin:" + PROJECT}, PROJECT),
            ("keystone", "[api]\nauth_strategy = keystone\n"
             + ks.authtoken_section(personas.service),
             {"X-Auth-Token": token}, {"X-Auth-Token": token},
             personas.projects["bench"]),
            ("http_basic", "[api]\nauth_strategy = http_basic\n"
             "[http_basic]\nuser_file = %s\nproject_id = %s\n"
             % (user_file, PROJECT), {"Authorization": basic},
             {"Authorization": basic}, PROJECT)):
        dep, vhost, stop = _deployment(tmp, name, extra)
        stops.append(stop)
        found.append(Mode(name, dep, vhost, headers, credential, project))
    for mode in found:
        harness.wait_for(lambda m=mode: m.session.get(
            m.base + "/scheduler-stats/get_pools").json().get("pools"),
            timeout=60, what="%s's pool" % mode.name)
        mode.prepare()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000,
                        help="requests of each kind per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ashlar-auth-cost-"))
    stops: list = []
    with keystone_component.Keystone(tmp / "keystone", workers=2) as ks:
        modes: list[Mode] = []
        try:
            modes = _modes(tmp, ks, stops)
            _measure(modes, args.requests, args.rounds)
        finally:
            for mode in modes:
                mode.trans.cleanup()
            for stop in stops:
                stop()


def _measure(modes: list[Mode], count: int, rounds: int) -> None:
    kinds = ("types", "volume", "door")
    times = {(m.name, k): [] for m in modes for k in kinds}
    for mode in modes:  # warm: first requests, token caches, pools
        for kind in kinds:
            for _ in range(50):
                mode.timed(kind)
    for round_no in range(rounds):
        for mode in modes:
            for kind in kinds:
                times[(mode.name, kind)] += [mode.timed(kind)
                                             for _ in range(count)]
        print("round %d done" % (round_no + 1), flush=True)
    base = {k: _ms(times[("noauth", k)], 0.5) for k in kinds}
    print("%-10s %-7s %6s %8s %8s %8s %10s" % (
        "mode", "request", "n", "p50_ms", "p95_ms", "max_ms", "p50-noauth"))
    for mode in modes:
        for kind in kinds:
            got = times[(mode.name, kind)]
            print("%-10s %-7s %6d %8.2f %8.2f %8.1f %+10.2f" % (
                mode.name, kind, len(got), _ms(got, 0.5), _ms(got, 0.95),
                max(got) * 1000, _ms(got, 0.5) - base[kind]))


def _ms(seconds: list[float], fraction: float) -> float:
    """The ``fraction`` percentile in milliseconds (nearest rank)."""
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


if __name__ == "__main__":
    main()
