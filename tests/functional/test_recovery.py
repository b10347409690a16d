"""Recovery without humans, on real processes, PostgreSQL and RabbitMQ.

- An attachment a compute agent made through the RPC door and never
  completed (the agent vanished, or its call timed out) is removed by the
  volume node once its lease lapsed; a REST reservation stays.
- A create whose cast was lost is placed by exactly one of two schedulers.
- A volume node killed after its backend made a volume and before the row
  said so resumes into that volume (adopts it), not into an error; a
  volume the scheduler's sweep failed meanwhile is deleted by its node,
  file included, not by the api alone.
- A move whose destination died ends where it was; a copy a lost
  ``delete_migrated`` left is removed; a REST attachment connected and
  never completed is completed.
"""

import shutil

import os
import signal
import subprocess
import uuid

import pytest

from common import constants
from deploy.testbed import harness
from tests.functional import door

LEASE = "[DEFAULT]\nagent_attachment_lease = 2\nattachment_check_interval = 1\n"
MOVES = LEASE + "migration_stall_timeout = 10\n"


def _deployed(tmp_path, vhost, **options):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url, rpc_call_timeout=3,
                             **options)
    dep.db_sync()
    try:
        yield dep
    finally:
        dep.stop_all()
        drop()


@pytest.fixture
def deployment(tmp_path, vhost):
    yield from _deployed(tmp_path, vhost)



def _start(dep, schedulers=1, nodes=1):
    """Schedulers, volume nodes node1.. (file backends) and the api."""
    for i in range(schedulers):
        dep.start("scheduler%d" % i, "services.scheduler", "sched%d" % i)
    for i in range(1, nodes + 1):
        dep.start("volume%d" % i, "services.volume", "node%d" % i,
                  extra=MOVES)
    dep.start("api", "services.api", "api", extra=LEASE)
    client = harness.Client(dep.endpoint)
    harness.wait_for(lambda: len(client.pools()) == nodes, timeout=60,
                     what="the volume nodes' pools")
    return client


def test_an_attachment_its_agent_never_completed_is_removed(deployment):
    dep = deployment
    client = _start(dep)
    assert client.post("/types", {"volume_type": {
        "name": "ma", "extra_specs": {"multiattach": "<is> True"}}}
    ).status_code == 200
    volume = client.create_volume(size=1, volume_type="ma")
    client.wait_status(volume["id"], "available")
    kept = client.post("/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4())}})
    assert kept.status_code == 200, kept.text
    trans = door.transport(dep.transport_url)
    try:
        answer = door.call(trans, {"request_id": door.request_id()},
                           "attachment_create", volume_id=volume["id"],
                           connector=harness.connector("gone1"))
    finally:
        trans.cleanup()
    orphan = answer["attachment"]
    assert orphan["status"] == "attaching" and orphan["connection_info"]
    harness.wait_for(
        lambda: client.get("/attachments/%s" % orphan["id"]).status_code
        == 404, timeout=30, what="the lapsed attachment's removal")
    assert "before its lease lapsed" in dep.log("volume1")
    shown = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert shown["status"] == "reserved", shown
    left = client.get("/attachments?volume_id=%s" % volume["id"]).json()
    assert [a["id"] for a in left["attachments"]] == [
        kept.json()["attachment"]["id"]]


def _purge(vhost_url, queue):
    vhost = vhost_url.rstrip("/").rsplit("/", 1)[-1]
    subprocess.run(["rabbitmqctl", "-q", "purge_queue", "-p", vhost, queue],
                   check=True, capture_output=True, timeout=60)


def test_a_lost_create_is_placed_once_by_two_schedulers(deployment):
    if "TEST_TRANSPORT_URL" in os.environ:
        pytest.skip("the broker is not this machine's: its queue cannot be "
                    "purged")
    dep = deployment
    client = _start(dep, schedulers=2)
    for name in ("scheduler0", "scheduler1"):
        dep.stop(name)
    volume = client.create_volume(size=1)
    _purge(dep.transport_url, constants.SCHEDULER_TOPIC)
    for i in range(2):
        dep.start("scheduler%d" % i, "services.scheduler", "sched%d" % i)
    client.wait_status(volume["id"], "available", timeout=60)
    placed = [name for name in ("scheduler0", "scheduler1")
              for line in dep.log(name).splitlines()
              if "Placed volume %s" % volume["id"] in line]
    assert len(placed) == 1, placed
    created = [line for line in dep.log("volume1").splitlines()
               if "Created volume %s" % volume["id"] in line]
    assert len(created) == 1, created


@pytest.fixture
def slow_down(tmp_path, vhost):
    """A deployment whose services count as down after 15 seconds, so a
    killed volume node's pool still takes a create."""
    yield from _deployed(tmp_path, vhost, service_down_time=15)


def _made_by_a_dead_node(dep, client):
    """Kill the volume node, create a volume the scheduler places on it,
    and make its file as the node would have before it died; the volume
    and the file's path."""
    dep.stop("volume1", signal.SIGKILL)
    volume = client.create_volume(size=1)
    host = "os-vol-host-attr:host"
    harness.wait_for(lambda: client.get("/volumes/%s" % volume["id"]).json()[
        "volume"].get(host), timeout=30, what="the volume's placement")
    path = dep.tmp / "state-node1" / "volumes" / (
        "volume-%s.raw" % volume["id"])
    with open(path, "wb") as made:
        made.write(b"precious")
        made.truncate(1 << 30)
    return volume, path


def test_a_create_killed_after_its_file_was_made_resumes(slow_down):
    dep = slow_down
    client = _start(dep)
    volume, path = _made_by_a_dead_node(dep, client)
    dep.start("volume1", "services.volume", "node1", extra=MOVES)
    harness.wait_for(lambda: client.volume_status(volume["id"]) != "creating",
                     timeout=60, what="the resumed create")
    shown = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert shown["status"] == "available", shown
    assert "adopting it" in dep.log("volume1")
    with open(path, "rb") as adopted:
        assert adopted.read(8) == b"precious"


def test_a_create_the_sweep_failed_is_deleted_by_its_node(slow_down):
    dep = slow_down
    client = _start(dep)
    volume, path = _made_by_a_dead_node(dep, client)
    client.wait_status(volume["id"], "error", timeout=90)
    assert client.delete("/volumes/%s" % volume["id"]).status_code == 202
    assert client.volume_status(volume["id"]) == "deleting"
    dep.start("volume1", "services.volume", "node1", extra=MOVES)
    client.wait_status(volume["id"], None, timeout=60)
    assert not path.exists()


def _volume_on_a_node(client):
    """An available volume, its node's number and the other's."""
    volume = client.create_volume(size=1)
    client.wait_status(volume["id"], "available")
    shown = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    here = shown["os-vol-host-attr:host"].split("@")[0][-1]
    return shown, here, {"1": "2", "2": "1"}[here]


def _copy_on(dep, node, volume_id):
    return dep.tmp / ("state-node%s" % node) / "volumes" / (
        "volume-%s.raw" % volume_id)


def _migrate(client, volume_id, node):
    resp = client.post("/volumes/%s/action" % volume_id, {
        "os-migrate_volume": {"host": "node%s@file#file" % node,
                              "force_host_copy": False,
                              "lock_volume": False}})
    assert resp.status_code == 202, resp.text


def test_a_move_whose_destination_died_ends_where_it_was(slow_down):
    dep = slow_down
    client = _start(dep, nodes=2)
    volume, here, there = _volume_on_a_node(client)
    dep.stop("volume%s" % there, signal.SIGKILL)
    _migrate(client, volume["id"], there)
    harness.wait_for(lambda: client.volume_status(volume["id"])
                     != "maintenance", timeout=60, what="the move's end")
    after = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert (after["status"], after["migration_status"],
            after["os-vol-host-attr:host"]) == (
        "available", "error", volume["os-vol-host-attr:host"]), after
    assert "made no progress" in dep.log("volume%s" % here)
    assert _copy_on(dep, here, volume["id"]).exists()


def test_a_copy_a_lost_delete_migrated_left_is_removed(deployment):
    dep = deployment
    client = _start(dep, nodes=2)
    volume, here, there = _volume_on_a_node(client)
    live = client.create_volume(size=1)
    client.wait_status(live["id"], "available")
    _migrate(client, volume["id"], there)
    harness.wait_for(lambda: client.get("/volumes/%s" % volume["id"]).json()[
        "volume"]["migration_status"] == "success", timeout=60,
        what="the move")
    left = _copy_on(dep, here, volume["id"])
    harness.wait_for(lambda: not left.exists(), timeout=30,
                     what="delete_migrated")
    # NOTE(ashlar): what a delete_migrated lost on its way leaves.
    shutil.copyfile(_copy_on(dep, there, volume["id"]), left)
    harness.wait_for(lambda: not left.exists(), timeout=30,
                     what="the sweep to remove the copy left behind")
    assert "Removing the copy of volume %s" % volume["id"] in dep.log(
        "volume%s" % here)
    assert _copy_on(dep, there, volume["id"]).exists()
    shown = client.get("/volumes/%s" % live["id"]).json()["volume"]
    node = shown["os-vol-host-attr:host"].split("@")[0][-1]
    assert _copy_on(dep, node, live["id"]).exists()


def test_a_rest_attachment_never_completed_is_completed(deployment):
    dep = deployment
    client = _start(dep)
    volume = client.create_volume(size=1)
    client.wait_status(volume["id"], "available")
    made = client.post("/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": harness.connector("compute1")}})
    assert made.status_code == 200, made.text
    attachment = made.json()["attachment"]
    assert attachment["status"] == "attaching"
    assert attachment["connection_info"]
    harness.wait_for(
        lambda: client.get("/attachments/%s" % attachment["id"]).json()[
            "attachment"]["status"] == "attached", timeout=30,
        what="the attachment's completion")
    assert client.volume_status(volume["id"]) == "in-use"
    assert "never completed; completing it" in dep.log("volume1")
