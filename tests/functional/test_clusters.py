"""Clustered volume services (``[DEFAULT] cluster``) as real processes:
two members of cluster ``c1`` serve one backend, reported and placed once
as ``c1@fake``; any live member takes a message for the cluster's volumes,
and a member killed in the middle of a create leaves it to a live member,
which finishes it once the dead one's lock lapses, exactly once.
Operators see and switch the cluster through os-clusters (3.7),
``ashlar-manage cluster list`` and ``POST /workers/cleanup`` (3.24).

The members lock through tooz's file driver here (members on one host);
tests/functional/test_ha.py runs a cluster on a real etcd.
"""

import json
import signal
import subprocess
import sys

import pytest

from deploy.testbed import harness

#: The backend both members run (the fake driver: no shared storage is
#: needed for what is checked here; each member's gate can stop a create).
BACKEND = "[fake]\nvolume_driver = fake\n"
#: The microversion of os-clusters (3.7) and of workers/cleanup (3.24).
CLUSTERS = {"OpenStack-API-Version": "volume 3.7"}
CLEANUP = {"OpenStack-API-Version": "volume 3.24"}


def _member(dep, name: str, host: str, gate: str = "") -> None:
    extra = ("[DEFAULT]\ncluster = c1\n[coordination]\nbackend_url = "
             "file://%s\n%s" % (dep.tmp / "coordination", BACKEND))
    if gate:
        extra += "fake_gate = %s\n" % gate
    dep.start(name, "services.volume", host, backends="fake", extra=extra)


@pytest.fixture
def deployment(tmp_path, vhost):
    db_url, drop = harness.database("postgresql")
    # rpc_call_timeout: how old lost work must be before a sweep takes it.
    dep = harness.Deployment(tmp_path, vhost, db_url, rpc_call_timeout=3)
    dep.db_sync()
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("api", "services.api", "api")
        yield dep, harness.Client(dep.endpoint)
    finally:
        dep.stop_all()
        drop()


def _volume(client, volume_id: str) -> dict:
    return client.get("/volumes/%s" % volume_id).json()["volume"]


def test_a_cluster_is_reported_once_and_served_by_any_member(deployment):
    dep, client = deployment
    _member(dep, "member1", "node1")
    _member(dep, "member2", "node2")
    harness.wait_for(lambda: set(client.pools()) == {"c1@fake#fake"},
                     timeout=60, what="the cluster's one pool")
    services = {s["host"]: s for s in client.get("/os-services").json()[
        "services"] if s["binary"] == "cinder-volume"}
    assert set(services) == {"node1@fake", "node2@fake"}
    made = client.create_volume()
    client.wait_status(made["id"], "available")
    shown = client.get("/volumes/%s" % made["id"], headers={
        "OpenStack-API-Version": "volume 3.61"}).json()["volume"]
    assert shown["os-vol-host-attr:host"] == "c1@fake#fake"
    assert shown["cluster_name"] == "c1@fake"
    # one member killed: the cluster's queue is served by the other
    dep.stop("member1", signal.SIGKILL)
    for _ in range(3):
        made = client.create_volume()
        client.wait_status(made["id"], "available")
        attachment = client.attach(made["id"], "compute-1")
        assert client.delete("/attachments/%s" % attachment
                             ).status_code == 200
        assert client.delete("/volumes/%s" % made["id"]).status_code == 202
        client.wait_status(made["id"], None)


def test_a_graceful_stop_of_one_member_keeps_the_clusters_pools(deployment):
    dep, client = deployment
    _member(dep, "member1", "node1")
    _member(dep, "member2", "node2")
    harness.wait_for(lambda: set(client.pools()) == {"c1@fake#fake"},
                     timeout=60, what="the cluster's one pool")
    dep.stop("member1")
    assert set(client.pools()) == {"c1@fake#fake"}
    made = client.create_volume()
    client.wait_status(made["id"], "available")
    dep.stop("member2")
    harness.wait_for(lambda: not client.pools(), timeout=30,
                     what="the last member's withdrawal")


def test_a_dead_members_create_is_finished_by_a_live_one(deployment,
                                                         tmp_path):
    """member1 takes a create and dies in the middle of it; member2 (up
    all along, or started since) finishes it once member1's lock lapsed,
    and the volume is made once."""
    dep, client = deployment
    gate = tmp_path / "gate"
    _member(dep, "member1", "node1", gate=str(gate))
    harness.wait_for(lambda: set(client.pools()) == {"c1@fake#fake"},
                     timeout=60, what="the cluster's pool")
    made = client.create_volume()
    waiting = tmp_path / ("gate.%s" % made["id"])
    harness.wait_for(waiting.exists, timeout=30,
                     what="member1 in the middle of the create")
    _member(dep, "member2", "node2")
    harness.wait_for(lambda: "Started ashlar-volume" in dep.log("member2"),
                     timeout=60, what="member2")
    assert _volume(client, made["id"])["status"] == "creating"
    dep.stop("member1", signal.SIGKILL)
    client.wait_status(made["id"], "available", timeout=60)
    log = dep.log("member2")
    # NOTE: its first sweep (at its start) found the volume held by
    # member1, alive then, and left it; the one after member1's death made
    # it.
    assert log.count("Created fake volume %s" % made["id"]) == 1, log
    assert "Created fake volume" not in dep.log("member1")


def _manage(dep, *args: str) -> list[dict]:
    conf = dep.config("manage", "manage")
    run = subprocess.run(
        [sys.executable, "-m", "services.manage", "--config-file", conf,
         *args, "-f", "json"], cwd=harness.REPO, capture_output=True,
        text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def _cluster(client) -> dict:
    resp = client.get("/clusters/detail", headers=CLUSTERS)
    assert resp.status_code == 200, resp.text
    (cluster,) = resp.json()["clusters"]
    return cluster



def test_os_clusters_a_disabled_cluster_and_a_dead_member(deployment):
    """os-clusters counts the members, a disabled cluster takes no new
    volume (the scheduler finds no backend, as Cinder's), a killed member
    counts as down once its heartbeat is older than service_down_time,
    and a cleanup of it is resumed by the live member."""
    dep, client = deployment
    _member(dep, "member1", "node1")
    _member(dep, "member2", "node2")
    harness.wait_for(lambda: set(client.pools()) == {"c1@fake#fake"},
                     timeout=60, what="the cluster's one pool")
    cluster = _cluster(client)
    assert (cluster["name"], cluster["state"], cluster["status"],
            cluster["num_hosts"], cluster["num_down_hosts"]) == (
        "c1@fake", "up", "enabled", 2, 0)
    services = client.get("/os-services", headers=CLUSTERS).json()[
        "services"]
    assert {s["host"]: s["cluster"] for s in services
            if s["binary"] == "cinder-volume"} == {
        "node1@fake": "c1@fake", "node2@fake": "c1@fake"}
    (listed,) = _manage(dep, "cluster", "list", "--services")
    assert (listed["Name"], listed["Hosts"], listed["Down hosts"]) == (
        "c1@fake", 2, 0)
    assert listed["Services"] == "node1@fake, node2@fake"

    resp = client.put("/clusters/disable", {
        "name": "c1@fake", "disabled_reason": "maintenance"},
        headers=CLUSTERS)
    assert resp.status_code == 200, resp.text
    assert resp.json()["cluster"]["status"] == "disabled"
    refused = client.create_volume()
    client.wait_status(refused["id"], "error")
    assert "Created fake volume %s" % refused["id"] not in (
        dep.log("member1") + dep.log("member2"))
    resp = client.put("/clusters/enable", {"name": "c1@fake"},
                      headers=CLUSTERS)
    assert resp.json()["cluster"]["status"] == "enabled"
    made = client.create_volume()
    client.wait_status(made["id"], "available")

    dep.stop("member1", signal.SIGKILL)
    harness.wait_for(lambda: _cluster(client)["num_down_hosts"] == 1,
                     timeout=30, what="member1 seen down")
    assert _cluster(client)["state"] == "up"
    resp = client.post("/workers/cleanup", {}, headers=CLEANUP)
    assert resp.status_code == 202, resp.text
    assert [(s["host"], s["cluster_name"]) for s in resp.json()[
        "cleaning"]] == [("node1@fake", "c1@fake")]
    assert resp.json()["unavailable"] == []
    harness.wait_for(lambda: "Cleanup of c1@fake requested" in dep.log(
        "member2"), timeout=30, what="member2 running the cleanup")
