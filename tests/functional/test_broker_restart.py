"""Nothing is lost when RabbitMQ restarts.

A create cast waiting in a queue when the broker restarts is dropped with
the (transient) queue; the scheduler's sweep places it from the database.
Every process reconnects on its own.  Needs ``rabbitmqctl`` (the broker on
this machine); the broker is always started again, even if the test fails.
"""

import os
import subprocess

import pytest

from deploy.testbed import harness


def _rabbitmqctl(*args):
    subprocess.run(["rabbitmqctl", "-q", *args], check=True,
                   capture_output=True, timeout=120)


@pytest.fixture
def deployment(tmp_path, vhost):
    if "TEST_TRANSPORT_URL" in os.environ:
        pytest.skip("the broker is not this machine's: it is not restarted")
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url, rpc_call_timeout=3)
    dep.db_sync()
    try:
        yield dep, dep.start_cluster(["node1"])
    finally:
        dep.stop_all()
        drop()


def test_a_create_queued_across_a_broker_restart_completes(deployment):
    dep, client = deployment
    dep.stop("scheduler")
    waiting = client.create_volume(size=1)
    try:
        _rabbitmqctl("stop_app")
    finally:
        _rabbitmqctl("start_app")
    _rabbitmqctl("await_startup")
    dep.start("scheduler", "services.scheduler", "sched")
    client.wait_status(waiting["id"], "available", timeout=90)
    after = client.create_volume(size=1)
    client.wait_status(after["id"], "available", timeout=60)
    for vid in (waiting["id"], after["id"]):
        assert client.delete("/volumes/%s" % vid).status_code == 202
        client.wait_status(vid, None, timeout=60)
