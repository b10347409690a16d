"""Manage and unmanage on the file backend, on real processes (api,
scheduler, a volume node; PostgreSQL; RabbitMQ): a file made outside
Ashlar becomes a volume with its bytes, is read and written through an
agent's attachment, and stays, byte for byte, once unmanaged."""

import hashlib
import os

import pytest

from deploy.testbed import harness
from tests.functional import storage_story

HEADER = os.urandom(4096)
NEW = b"written by Ashlar after the manage"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("manage-existing"),
                             vhost, db_url)
    dep.db_sync()
    try:
        yield dep, dep.start_cluster(["node1"])
    finally:
        dep.stop_all()
        drop()


def _digest(path) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _usage(client) -> tuple[int, int]:
    project = client.endpoint.rstrip("/").rsplit("/", 1)[-1]
    quota = client.get("/os-quota-sets/%s?usage=true" % project).json()[
        "quota_set"]
    return quota["volumes"]["in_use"], quota["gigabytes"]["in_use"]


def test_a_file_is_managed_used_and_unmanaged_untouched(deployment):
    dep, client = deployment
    folder = dep.tmp / "state-node1" / "volumes"
    legacy = folder / "legacy.img"
    with open(legacy, "wb") as stream:
        stream.write(HEADER)
        stream.truncate(10 * 2**20 + 1)
    before = _digest(legacy)
    listed = client.get("/manageable_volumes/detail?host=node1@file")
    assert listed.status_code == 200, listed.text
    (entry,) = [e for e in listed.json()["manageable-volumes"]
                if e["reference"] == {"source-name": "legacy.img"}]
    assert (entry["size"], entry["safe_to_manage"], entry["cinder_id"]) == (
        1, True, None)
    used = _usage(client)

    resp = client.post("/os-volume-manage", {"volume": {
        "host": "node1@file#file", "ref": {"source-name": "legacy.img"},
        "name": "legacy"}})
    assert resp.status_code == 202, resp.text
    volume = resp.json()["volume"]
    assert (volume["status"], volume["size"]) == ("creating", 1)
    client.wait_status(volume["id"], "available", timeout=60)
    adopted = folder / ("volume-%s.raw" % volume["id"])
    assert not legacy.exists() and _digest(adopted) == before
    assert _usage(client) == (used[0] + 1, used[1] + 1)

    run = storage_story.agent(dep, "compute1")
    assert storage_story.read_through(run, volume["id"], len(HEADER)) == \
        HEADER
    storage_story.write_through(run, volume["id"], NEW)
    written = _digest(adopted)
    assert written != before

    again = client.post("/os-volume-manage", {"volume": {
        "host": "node1@file", "ref": {
            "source-name": "volume-%s.raw" % volume["id"]}}})
    assert again.status_code == 400, again.text
    missing = client.post("/os-volume-manage", {"volume": {
        "host": "node1@file", "ref": {"source-name": "nothing.img"}}})
    assert missing.status_code == 400, missing.text

    resp = client.post("/volumes/%s/action" % volume["id"],
                       {"os-unmanage": None})
    assert resp.status_code == 202, resp.text
    client.wait_status(volume["id"], None, timeout=60)
    assert _digest(adopted) == written
    assert _usage(client) == used
    listed = client.get("/manageable_volumes?host=node1@file").json()
    assert {"reference": {"source-name": adopted.name}, "size": 1,
            "safe_to_manage": True} in listed["manageable-volumes"]
