"""Attachments on real processes: races, fan-out, rules, the agent over RPC.

One deployment per database (api with 4 gunicorn workers, a scheduler and
one volume node) serves every test of this module.
"""

import concurrent.futures
import json
import subprocess
import sys
import time
import uuid

import pytest

from common.db.api import dialects
from deploy.testbed import harness

MA_TYPE = {"volume_type": {"name": "multiattach",
                           "extra_specs": {"multiattach": "<is> True"}}}


@pytest.fixture(scope="module", params=["postgresql", "mysql", "mysqldb"])
def deployment(request, tmp_path_factory, vhost):
    db_url, drop = harness.database(request.param)
    dep = harness.Deployment(tmp_path_factory.mktemp(request.param), vhost,
                             db_url, api_workers=4)
    dep.db_sync()
    try:
        client = dep.start_cluster(["node1"])
        assert client.post("/types", MA_TYPE).status_code == 200
        yield dep, client
    finally:
        dep.stop_all()
        drop()


def _volume(client, **fields):
    volume = client.create_volume(size=1, **fields)
    client.wait_status(volume["id"], "available")
    return volume["id"]



def _attach(client, volume_id, host="h1", connector=True):
    body = {"volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4())}
    if connector:
        body["connector"] = harness.connector(host)
    return client.post("/attachments", {"attachment": body})


def _in_parallel(count, fn):
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(fn, range(count)))


def _odd(answers, usual):
    """Every answer but the usual ones (and the one 200), for a failure."""
    return [(r.status_code, r.text[:300]) for r in answers
            if r.status_code not in (usual, 200)] or sorted(
                r.status_code for r in answers)


def test_64_racing_creates_on_a_plain_volume_leave_exactly_one(deployment):
    _dep, client = deployment
    vid = _volume(client)
    answers = _in_parallel(64, lambda _i: _attach(client, vid,
                                                  connector=False))
    codes = sorted(r.status_code for r in answers)
    assert codes.count(200) == 1 and codes.count(400) == 63, _odd(
        answers, 400)
    listed = client.get("/attachments", params={"volume_id": vid}).json()
    assert len(listed["attachments"]) == 1
    winner = next(r.json()["attachment"] for r in answers
                  if r.status_code == 200)
    assert client.delete("/attachments/%s" % winner["id"]).status_code == 200
    assert client.volume_status(vid) == "available"


def test_16_concurrent_attachments_on_a_multiattach_volume(deployment):
    _dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    answers = _in_parallel(16, lambda i: _attach(client, vid, host="h%d" % i))
    assert [r.status_code for r in answers] == [200] * 16, _odd(answers, 200)
    ids = [r.json()["attachment"]["id"] for r in answers]
    for aid in ids:
        resp = client.post("/attachments/%s/action" % aid,
                           {"os-complete": None})
        assert resp.status_code == 204, (resp.status_code, resp.text)
    volume = client.get("/volumes/%s" % vid).json()["volume"]
    assert volume["status"] == "in-use" and volume["multiattach"] is True
    assert len(volume["attachments"]) == 16
    deleted = _in_parallel(16, lambda i: client.delete(
        "/attachments/%s" % ids[i]))
    assert [r.status_code for r in deleted] == [200] * 16
    volume = client.get("/volumes/%s" % vid).json()["volume"]
    assert volume["status"] == "available" and volume["attachments"] == []


def test_status_follows_the_last_attachment(deployment):
    _dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    first = _attach(client, vid).json()["attachment"]["id"]
    second = _attach(client, vid, connector=False).json()["attachment"]["id"]
    client.post("/attachments/%s/action" % first, {"os-complete": None})
    assert client.volume_status(vid) == "in-use"
    client.delete("/attachments/%s" % first)
    assert client.volume_status(vid) == "reserved"
    client.delete("/attachments/%s" % second)
    assert client.volume_status(vid) == "available"


def test_rules_are_refused_with_their_codes(deployment):
    _dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    aid = _attach(client, vid).json()["attachment"]["id"]
    client.post("/attachments/%s/action" % aid, {"os-complete": None})
    # A volume with attachments cannot be deleted.
    assert client.delete("/volumes/%s" % vid).status_code == 400
    # Retype that changes multiattach needs an available volume.
    retype = client.post("/volumes/%s/action" % vid,
                         {"os-retype": {"new_type": "__DEFAULT__"}})
    assert retype.status_code == 400
    assert "multiattach" in retype.text
    # A plain user may not delete what a compute host holds connected.
    member = harness.Client(client.endpoint, headers={"X-Roles": "member"})
    assert member.delete("/attachments/%s" % aid).status_code == 409
    # Another project sees nothing.
    stranger = harness.Client(client.endpoint.rsplit("/", 1)[0] + "/other",
                              token="eve:other", headers={"X-Roles": "member"})
    assert stranger.get("/attachments/%s" % aid).status_code == 404
    # A plain user may not create a multiattach volume if policy says no:
    # here the default allows owners, so it succeeds (202).
    assert member.post("/volumes", {"volume": {
        "size": 1, "volume_type": "multiattach"}}).status_code == 202
    assert client.delete("/attachments/%s" % aid).status_code == 200


def _cycle(client, volume_id, host):
    """Create with a connector, complete, show, delete: each answer."""
    created = _attach(client, volume_id, host)
    if created.status_code != 200:
        return [created]
    aid = created.json()["attachment"]["id"]
    return [created,
            client.post("/attachments/%s/action" % aid, {"os-complete": None}),
            client.get("/attachments/%s" % aid),
            client.delete("/attachments/%s" % aid)]


def test_cycles_go_on_after_every_database_connection_is_cut(deployment):
    """A database restart leaves every pooled connection dead; pools test
    a connection that sat idle (``common.db.api.dialects.ping_when_idle``)."""
    dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    warm = _in_parallel(8, lambda i: _cycle(client, vid, "warm%d" % i))
    assert all(r.status_code in (200, 204) for c in warm for r in c)
    assert harness.cut_connections(dep.db_url) > 0
    # NOTE: the restart's own duration, not a synchronisation: no request
    # runs while the database is "down".
    time.sleep(dialects.PING_IDLE_SECONDS * 1.5)
    after = _in_parallel(8, lambda i: _cycle(client, vid, "after%d" % i))
    failed = [(r.status_code, r.text[:200]) for c in after for r in c
              if r.status_code not in (200, 204)]
    assert not failed
    assert client.volume_status(vid) == "available"


def test_shared_connections_by_attachment(deployment):
    _dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    a = _attach(client, vid, host="hostA").json()["attachment"]["id"]
    b = _attach(client, vid, host="hostA").json()["attachment"]["id"]
    c = _attach(client, vid, host="hostB").json()["attachment"]["id"]
    shown = client.get("/attachments/%s" % a).json()["attachment"]
    assert shown["shared_connections_by_attachment"] == [b]
    gone = client.delete("/attachments/%s" % a).json()
    assert gone["shared_connections_by_attachment"] == [b]
    gone = client.delete("/attachments/%s" % b).json()
    assert gone["shared_connections_by_attachment"] == []
    assert [x["id"] for x in gone["attachments"]] == [c]
    client.delete("/attachments/%s" % c)


def test_agent_attaches_and_detaches_over_rpc(deployment):
    """ashlar-agent: os-brick connector, RPC to the api, LOCAL device path."""
    dep, client = deployment
    vid = _volume(client, volume_type="multiattach")
    conf = dep.config("agent", "compute1")

    def agent(*args):
        out = subprocess.run(
            [sys.executable, "-m", "services.agent", "--config-file", conf]
            + list(args), cwd=harness.REPO, capture_output=True, text=True,
            timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    one = agent("attach", vid, "--instance", str(uuid.uuid4()))
    two = agent("attach", vid, "--instance", str(uuid.uuid4()), "--mode", "ro")
    assert one["device"]["path"].endswith(".raw")
    assert two["connection_info"]["access_mode"] == "ro"
    volume = client.get("/volumes/%s" % vid).json()["volume"]
    assert volume["status"] == "in-use" and len(volume["attachments"]) == 2
    first = agent("detach", one["id"])
    assert first == {"attachment_id": one["id"], "disconnected": False,
                     "still_sharing": [two["id"]]}
    last = agent("detach", two["id"])
    assert last["disconnected"] is True
    assert client.volume_status(vid) == "available"
