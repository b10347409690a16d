"""Nothing is lost when RabbitMQ crashes.

A create cast waiting in a queue when the broker dies is dropped with the
(transient) queue; the scheduler's sweep places it from the database.
Every process reconnects on its own.  The broker is a RabbitMQ node of
the test's own (``components/rabbit_cluster.py`` with one node, on ports
of its own), killed with ``kill -9`` and started again on its data: the
machine's broker, which other tests use at the same time, is untouched.
"""

import pytest

from deploy.testbed import harness
from deploy.testbed.components import rabbit_cluster


@pytest.fixture
def deployment(tmp_path):
    rabbit_cluster.available()
    db_url, drop = harness.database("postgresql")
    try:
        with rabbit_cluster.RabbitCluster(tmp_path / "rabbitmq",
                                          size=1) as broker:
            dep = harness.Deployment(tmp_path, broker.transport_url(), db_url,
                                     rpc_call_timeout=3)
            dep.db_sync()
            try:
                yield dep, dep.start_cluster(["node1"]), broker
            finally:
                dep.stop_all()
    finally:
        drop()


def test_a_create_queued_across_a_broker_crash_completes(deployment):
    dep, client, broker = deployment
    dep.stop("scheduler")
    waiting = client.create_volume(size=1)
    [node] = broker.names
    broker.kill(node)
    broker.start(node)
    dep.start("scheduler", "services.scheduler", "sched")
    client.wait_status(waiting["id"], "available", timeout=90)
    after = client.create_volume(size=1)
    client.wait_status(after["id"], "available", timeout=60)
    for vid in (waiting["id"], after["id"]):
        assert client.delete("/volumes/%s" % vid).status_code == 202
        client.wait_status(vid, None, timeout=60)
