"""Snapshots, clones and revert on the file backend, on real processes
(api, scheduler, two volume nodes; PostgreSQL and MariaDB; RabbitMQ), with the
data checked through an agent's attachment (tests/functional/storage_story.py).
The same story runs on RBD in test_rbd.py."""

import pytest

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
