"""Rolling upgrades with real processes on the real broker and database.

From release 0.1.0 to this one: the previous release's
scheduler and volume node beside this release's api (its volume calls
pinned, ``[upgrade_levels] ashlar_volume = 1.3``), and the order
docs/operations.md ("Rolling upgrades") prescribes (volume nodes first):
this release's scheduler and volume node beside the previous release's
api.  The database is at this release's schema (``db sync`` first, as
that section says).
(test_rolling_upgrade.py: a cluster's, from 0.2.0)."""

import pytest

from deploy.testbed import harness

#: Release 0.1.0: main before fencing, the operator's CLI and versions.
PREVIOUS_RELEASE = "09b5a46"
PIN = "[upgrade_levels]\nashlar_volume = 1.3\n"


@pytest.fixture(scope="module")
def previous(tmp_path_factory):
    """Release 0.1.0's source tree."""
    return harness.release_tree(tmp_path_factory.mktemp("release-0.1.0"),
                                PREVIOUS_RELEASE)


@pytest.fixture
def mixed(tmp_path, vhost, previous, request):
    """``request.param``: which side runs the previous release."""
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url)
    dep.db_sync()
    old_nodes = request.param == "nodes"
    try:
        dep.start("scheduler", "services.scheduler", "sched",
                  tree=previous if old_nodes else None)
        dep.start("volume", "services.volume", "node1",
                  tree=previous if old_nodes else None)
        dep.start("api", "services.api", "api",
                  tree=None if old_nodes else previous,
                  extra=PIN if old_nodes else "")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the volume node's pool")
        yield dep, client, old_nodes
    finally:
        dep.stop_all()
        drop()


def _attach_cycle(client, volume_id: str, host: str) -> str:
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": volume_id, "connector": {"host": host,
                                                "ip": "10.0.0.3"}}})
    assert resp.status_code == 200, resp.text
    att = resp.json()["attachment"]
    assert att["connection_info"]["driver_volume_type"] == "local"
    assert client.post("/attachments/%s/action" % att["id"],
                       {"os-complete": {}}).status_code == 204
    client.wait_status(volume_id, "in-use")
    return att["id"]


@pytest.mark.parametrize("mixed", ["nodes", "api"], indirect=True)
def test_volumes_snapshots_and_attachments_across_releases(mixed):
    dep, client, old_nodes = mixed
    resp = client.post("/types", {"volume_type": {
        "name": "shared", "extra_specs": {"multiattach": "<is> True"}}})
    assert resp.status_code == 200, resp.text
    vid = client.create_volume(volume_type="shared")["id"]
    client.wait_status(vid, "available", timeout=60)
    snap = client.post("/snapshots", {"snapshot": {"volume_id": vid}})
    assert snap.status_code == 202, snap.text
    snap_id = snap.json()["snapshot"]["id"]
    harness.wait_for(lambda: client.get("/snapshots/%s" % snap_id).json()[
        "snapshot"]["status"] == "available", timeout=60, what="the snapshot")
    att = _attach_cycle(client, vid, "cmp1")
    if old_nodes:
        # a fence needs the volume node's 1.4: refused while pinned
        resp = client.post("/attachments/%s/action" % att,
                           {"ashlar-fence": {}})
        assert resp.status_code == 503, resp.text
        assert "too old for attachment_fence" in dep.log("api")
    assert client.delete("/attachments/%s" % att).status_code == 200
    client.wait_status(vid, "available")
    assert client.delete("/snapshots/%s" % snap_id).status_code == 202
    harness.wait_for(lambda: client.get("/snapshots/%s" % snap_id)
                     .status_code == 404, timeout=60, what="the snapshot gone")
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)
    assert "Traceback" not in dep.log("volume") + dep.log("api")
