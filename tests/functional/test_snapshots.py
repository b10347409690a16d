"""Snapshots, clones and revert on the file backend, on real processes
(api, scheduler, two volume nodes; PostgreSQL and MariaDB; RabbitMQ), with the
data checked through an agent's attachment (tests/functional/storage_story.py).
The same story runs on RBD in test_rbd.py."""

import pytest

from deploy.testbed import harness
from tests.functional import storage_story

MA_TYPE = {"volume_type": {"name": "multiattach",
                           "extra_specs": {"multiattach": "<is> True"}}}


@pytest.fixture
def deployment(cluster):
    """conftest's ``cluster`` (PostgreSQL and MariaDB) with a multiattach
    type."""
    _dep, client = cluster
    assert client.post("/types", MA_TYPE).status_code == 200
    return cluster


def test_snapshot_story_on_raw_files(deployment):
    dep, client = deployment
    storage_story.tell(client, storage_story.agent(dep, "compute1"),
                       "multiattach")


def test_a_clone_of_a_raw_multiattach_volume_stays_multiattach(deployment):
    _dep, client = deployment
    source = client.create_volume(volume_type="multiattach")
    client.wait_status(source["id"], "available")
    clone = client.create_volume(source_volid=source["id"])
    client.wait_status(clone["id"], "available")
    shown = client.get("/volumes/%s" % clone["id"]).json()["volume"]
    assert (shown["multiattach"], shown["volume_type"], shown["source_volid"]
            ) == (True, "multiattach", source["id"])
    for volume_id in (clone["id"], source["id"]):
        client.delete("/volumes/%s" % volume_id)
        client.wait_status(volume_id, None)


def _left_copy(dep, volume: dict):
    """The file a volume's node keeps for it."""
    return dep.tmp / ("state-%s" % volume["os-vol-host-attr:host"].split(
        "@")[0]) / "volumes" / ("volume-%s.raw" % volume["id"])


def test_a_retype_moves_the_volume_with_its_data(deployment):
    """``os-retype`` with ``on-demand`` to a type only another backend
    offers: the volume moves there (node3's ``other``) with its data, its
    id and name, ``migration_status`` ``success``; the copy it left is
    gone.  ``never`` to the same type is refused at once.  An admin's
    ``os-migrate_volume`` moves a volume to the pool it names."""
    dep, client = deployment
    dep.start("volume3", "services.volume", "node3", backends="other")
    harness.wait_for(lambda: len(client.pools()) == 3, timeout=60,
                     what="node3's pool")
    assert client.post("/types", {"volume_type": {
        "name": "other", "extra_specs": {
            "volume_backend_name": "other"}}}).status_code == 200
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(name="moving")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, storage_story.BEFORE)
    left = _left_copy(dep, client.get("/volumes/%s" % vid).json()["volume"])
    assert left.exists()
    refused = client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "other", "migration_policy": "never"}})
    assert refused.status_code == 400, refused.text
    resp = client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "other", "migration_policy": "on-demand"}})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    after = client.get("/volumes/%s" % vid).json()["volume"]
    assert (after["volume_type"], after["os-vol-host-attr:host"],
            after["migration_status"], after["name"]) == (
        "other", "node3@other#other", "success", "moving")
    assert storage_story.read_through(
        run, vid, len(storage_story.BEFORE)) == storage_story.BEFORE
    harness.wait_for(lambda: not left.exists(), timeout=30,
                     what="the source's copy to go")
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)

    vid = client.create_volume()["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, storage_story.AFTER)
    before = client.get("/volumes/%s" % vid).json()["volume"]
    there = {"node1@file#file": "node2@file#file",
             "node2@file#file": "node1@file#file"}[
        before["os-vol-host-attr:host"]]
    resp = client.post("/volumes/%s/action" % vid, {"os-migrate_volume": {
        "host": there, "force_host_copy": False, "lock_volume": False}})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    after = client.get("/volumes/%s" % vid).json()["volume"]
    assert (after["os-vol-host-attr:host"], after["migration_status"],
            after["volume_type"]) == (there, "success", before["volume_type"])
    assert storage_story.read_through(
        run, vid, len(storage_story.AFTER)) == storage_story.AFTER
    harness.wait_for(lambda: not _left_copy(dep, before).exists(),
                     timeout=30, what="the source's copy to go")
