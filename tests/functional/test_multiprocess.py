"""Separate api/scheduler/volume processes on RabbitMQ and PostgreSQL/MariaDB."""

import signal

from deploy.testbed import harness


def test_create_list_show_delete(cluster):
    dep, client = cluster
    volume = client.create_volume(size=1, name="fv1")
    assert volume["status"] == "creating"
    client.wait_status(volume["id"], "available")

    shown = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert shown["os-vol-host-attr:host"].split("@")[0] in ("node1", "node2")
    names = [v["name"] for v in client.get("/volumes").json()["volumes"]]
    assert "fv1" in names

    assert client.delete("/volumes/%s" % volume["id"]).status_code == 202
    client.wait_status(volume["id"], None)


def test_services_heartbeat(cluster):
    dep, client = cluster
    states = harness.wait_for(
        lambda: (lambda s: s if len(s) == 3 else None)(client.services_up()),
        what="three services")
    assert states == {("cinder-scheduler", "sched"): "up",
                      ("cinder-volume", "node1@file"): "up",
                      ("cinder-volume", "node2@file"): "up"}


def test_burst_spreads_and_all_become_available(cluster):
    dep, client = cluster
    ids = [client.create_volume(size=1)["id"] for _ in range(10)]
    for vid in ids:
        client.wait_status(vid, "available")
    hosts = {client.get("/volumes/%s" % vid).json()["volume"][
        "os-vol-host-attr:host"] for vid in ids}
    assert hosts == {"node1@file#file", "node2@file#file"}
    for vid in ids:
        assert client.delete("/volumes/%s" % vid).status_code == 202
    for vid in ids:
        client.wait_status(vid, None)


def test_volume_node_stopped_midway(cluster):
    """A create whose node died shows ``error`` and a user message saying
    the backend is not running; its delete ends once its node is back."""
    dep, client = cluster
    dep.stop("volume1", signal.SIGKILL)
    dep.stop("volume2", signal.SIGKILL)
    volume = client.create_volume(size=1)
    client.wait_status(volume["id"], "error", timeout=60)
    [told] = client.messages_of(volume["id"])
    assert (told["event_id"], told["user_message"]) == (
        "VOLUME_VOLUME_008_002", "create volume from backend storage:"
        "Driver is not initialized at present.")
    # Placed on a node, it may be on that node's backend after all (a slow
    # create): its node deletes it, so the nodes come back for that.
    dep.start("volume1", "services.volume", "node1")
    dep.start("volume2", "services.volume", "node2")
    assert client.delete("/volumes/%s" % volume["id"]).status_code == 202
    client.wait_status(volume["id"], None, timeout=60)


def test_bad_input_writes_nothing(cluster):
    dep, client = cluster
    before = len(client.get("/volumes").json()["volumes"])
    cases = [
        (client.post("/volumes", {"volume": {"size": 0}}), 400),
        (client.post("/volumes", {"volume": {"size": "abc"}}), 400),
        (client.post("/volumes", {"volume": {"size": 1,
                                             "volume_type": "nope"}}), 404),
        (client.request("POST", "/volumes", data="{not json"), 400),
        (client.get("/volumes/00000000-0000-0000-0000-000000000000"), 404),
    ]
    for resp, code in cases:
        assert resp.status_code == code, resp.text
        body = resp.json()
        assert list(body.values())[0]["code"] == code
    assert len(client.get("/volumes").json()["volumes"]) == before


def test_create_survives_a_scheduler_restart(cluster):
    """A create cast while no scheduler runs waits in its queue."""
    dep, client = cluster
    dep.stop("scheduler")
    volume = client.create_volume(size=1)
    assert client.volume_status(volume["id"]) == "creating"
    dep.start("scheduler", "services.scheduler", "sched")
    client.wait_status(volume["id"], "available", timeout=60)
    assert client.delete("/volumes/%s" % volume["id"]).status_code == 202
    client.wait_status(volume["id"], None)
