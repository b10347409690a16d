"""``ashlar-manage`` against a running deployment (scheduler, api, two
volume nodes, PostgreSQL, RabbitMQ): what an operator sees and changes."""

import json
import signal
import subprocess
import sys

import pytest
import requests

from common import version
from deploy.testbed import harness

MA = "[file]\nvolume_driver = file\nfile_volume_format = raw\n"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("manage"), vhost,
                             db_url, service_down_time=3)
    dep.db_sync()
    try:
        client = dep.start_cluster(["node1", "node2"])
        resp = client.post("/types", {"volume_type": {
            "name": "shared", "extra_specs": {"multiattach": "<is> True"}}})
        assert resp.status_code == 200, resp.text
        yield dep, client
    finally:
        dep.stop_all()
        drop()


def manage(dep, *args: str) -> subprocess.CompletedProcess:
    conf = dep.config("manage", "manage")
    return subprocess.run(
        [sys.executable, "-m", "services.manage", "--config-file", conf,
         *args], cwd=harness.REPO, capture_output=True, text=True,
        timeout=120)


def listed(dep, *args: str) -> list[dict]:
    run = manage(dep, *args, "-f", "json")
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def _row(rows: list[dict], **wanted) -> dict:
    return next(r for r in rows if all(r[k] == v for k, v in wanted.items()))


def test_service_list_and_a_disabled_node_gets_no_volumes(deployment):
    dep, client = deployment
    rows = listed(dep, "service", "list")
    assert {r["Version"] for r in rows} == {version.release()} != {"unknown"}
    assert {(r["Host"], r["Binary"], r["Status"], r["State"])
            for r in rows} >= {("node1@file", "ashlar-volume", "enabled", "up"),
                               ("node2@file", "ashlar-volume", "enabled", "up"),
                               ("sched", "ashlar-scheduler", "enabled", "up")}
    # the compose healthcheck of scheduler and volume containers
    run = manage(dep, "service", "list", "--host", "node1", "-f", "value",
                 "-c", "State")
    assert run.stdout.split() == ["up"], run.stderr
    run = manage(dep, "service", "disable", "node1@file", "--reason", "disk")
    assert run.returncode == 0, run.stderr
    shown = _row(listed(dep, "service", "list", "--host", "node1"),
                 Binary="ashlar-volume")
    assert (shown["Status"], shown["Disabled reason"]) == ("disabled", "disk")
    try:
        ids = [client.create_volume()["id"] for _ in range(6)]
        for vid in ids:
            client.wait_status(vid, "available")
            assert client.get("/volumes/%s" % vid).json()["volume"][
                "os-vol-host-attr:host"].startswith("node2@")
    finally:
        assert manage(dep, "service", "enable", "node1@file").returncode == 0
    assert _row(listed(dep, "service", "list"), Host="node1@file")[
        "Status"] == "enabled"
    run = manage(dep, "service", "disable", "nowhere@file")
    assert run.returncode == 1 and "nowhere@file" in run.stderr


def test_the_api_healthcheck_answers_without_credentials(deployment):
    dep, _client = deployment
    resp = requests.get("http://127.0.0.1:%d/healthcheck" % dep.port,
                        timeout=10)
    assert resp.status_code == 200


def test_pool_list_shows_ages_and_the_types_each_pool_takes(deployment):
    dep, _client = deployment
    rows = listed(dep, "pool", "list")
    assert {r["Pool"] for r in rows} == {"node1@file#file",
                                         "node2@file#file"}
    for row in rows:
        assert row["Counts"] == "yes" and row["Report age (s)"] < 30
        assert "shared" in row["Types"].split() and row["Multiattach"]
        assert row["Fencing"] is False
    long = listed(dep, "pool", "list", "--long")
    assert json.loads(long[0]["Capabilities"])["storage_protocol"]


def test_attachments_of_a_host_reset_and_reset_state(deployment):
    dep, client = deployment
    vid = client.create_volume(volume_type="shared")["id"]
    client.wait_status(vid, "available")
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": vid, "connector": {"host": "cmp7", "ip": "10.1.1.7"}}})
    assert resp.status_code == 200, resp.text
    att = resp.json()["attachment"]["id"]
    [row] = listed(dep, "attachment", "list", "--host", "cmp7")
    assert (row["ID"], row["Volume"], row["Looks orphaned"]) == (att, vid, "")
    run = manage(dep, "attachment", "reset", att)
    assert run.returncode == 0 and "left as it is" in run.stdout, run.stderr
    assert listed(dep, "attachment", "list", "--host", "cmp7") == []
    client.wait_status(vid, "available")
    assert manage(dep, "volume", "reset-state", vid, "--state",
                  "error").returncode == 0
    assert client.volume_status(vid) == "error"
    run = manage(dep, "volume", "reset-state", vid, "--state", "deleting")
    assert run.returncode == 1 and "deleting" in run.stderr
    assert manage(dep, "volume", "reset-state", vid, "--state",
                  "available").returncode == 0
    assert client.volume_status(vid) == "available"


def test_a_dead_node_shows_down_and_its_row_is_removed_when_empty(
        deployment):
    dep, client = deployment
    dep.start("volume3", "services.volume", "node3")
    harness.wait_for(lambda: "node3@file#file" in client.pools(),
                     timeout=60, what="node3's pool")
    dep.stop("volume3", signal.SIGKILL)
    harness.wait_for(lambda: _row(listed(dep, "service", "list"),
                                  Host="node3@file")["State"] == "down",
                     timeout=30, what="node3 down")
    run = manage(dep, "service", "remove", "node1@file")
    assert run.returncode == 1 and "is up" in run.stderr
    run = manage(dep, "service", "remove", "node3@file")
    assert run.returncode == 0, run.stderr
    assert not [r for r in listed(dep, "service", "list")
                if r["Host"] == "node3@file"]
