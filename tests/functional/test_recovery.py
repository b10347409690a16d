"""Recovery without humans, on real processes, PostgreSQL and RabbitMQ.

- An attachment a compute agent made through the RPC door and never
  completed (the agent vanished, or its call timed out) is removed by the
  volume node once its lease lapsed; a REST reservation stays.
- A create whose cast was lost is placed by exactly one of two schedulers.
"""

import os
import subprocess
import uuid

import pytest

from common import constants
from deploy.testbed import harness
from tests.functional import door

LEASE = "[DEFAULT]\nagent_attachment_lease = 2\nattachment_check_interval = 1\n"


@pytest.fixture
def deployment(tmp_path, vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url, rpc_call_timeout=3)
    dep.db_sync()
    try:
        yield dep
    finally:
        dep.stop_all()
        drop()



def _start(dep, schedulers=1):
    for i in range(schedulers):
        dep.start("scheduler%d" % i, "services.scheduler", "sched%d" % i)
    dep.start("volume1", "services.volume", "node1", extra=LEASE)
    dep.start("api", "services.api", "api", extra=LEASE)
    client = harness.Client(dep.endpoint)
    harness.wait_for(lambda: len(client.pools()) == 1, timeout=60,
                     what="the volume node's pool")
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
