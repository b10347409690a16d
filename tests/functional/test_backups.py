"""Backups on real processes: api, scheduler, a volume node (file
backend) and ``ashlar-backup`` (POSIX driver, 1 MiB chunks), on RabbitMQ
and PostgreSQL.  Known bytes are written through a compute agent's
attachment, backed up full and incremental, changed, restored into a new
volume and into an existing one, and read back through the agent."""

import os

import pytest

from deploy.testbed import harness
from tests.functional import storage_story

MIB = 1024 * 1024
CHUNK = MIB
ORIGINAL = os.urandom(4 * MIB)
CHANGE_AT = 2 * MIB + 100
CHANGE = b"changed after the full backup"
CHANGED = ORIGINAL[:CHANGE_AT] + CHANGE + ORIGINAL[CHANGE_AT + len(CHANGE):]


@pytest.fixture
def deployment(tmp_path, vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url)
    dep.db_sync()
    try:
        client = dep.start_cluster(["node1"])
        dep.start_backup("backup1", chunk_bytes=CHUNK)
        harness.wait_for(lambda: client.services_up().get(
            ("cinder-backup", "backup1")) == "up", timeout=60,
            what="the backup service")
        yield dep, client
    finally:
        dep.stop_all()
        drop()


def _backup(client, volume_id: str, **fields) -> dict:
    resp = client.post("/backups", {"backup": {"volume_id": volume_id,
                                               **fields}})
    assert resp.status_code == 202, resp.text
    return resp.json()["backup"]


def _shown(client, backup_id: str) -> dict | None:
    resp = client.get("/backups/%s" % backup_id)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    return resp.json()["backup"]


def _wait(client, backup_id: str, status: str | None) -> dict | None:
    def now():
        shown = _shown(client, backup_id)
        return (shown or {}).get("status") == status if status else \
            shown is None
    harness.wait_for(now, timeout=60, what="backup %s" % status)
    return _shown(client, backup_id)


def test_full_and_incremental_backup_restore_byte_for_byte(deployment):
    dep, client = deployment
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(name="source")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, ORIGINAL)

    full = _backup(client, vid, name="full", container="story")
    full = _wait(client, full["id"], "available")
    assert (full["object_count"], full["is_incremental"],
            full["container"]) == (4, False, "story")
    client.wait_status(vid, "available")

    storage_story.write_through(run, vid, ORIGINAL[:CHANGE_AT] + CHANGE)
    incr = _backup(client, vid, name="incr", incremental=True)
    incr = _wait(client, incr["id"], "available")
    # only the changed chunk was stored
    assert (incr["object_count"], incr["is_incremental"],
            incr["container"]) == (1, True, "story")
    assert _shown(client, full["id"])["has_dependent_backups"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, b"\0" * len(ORIGINAL))

    resp = client.post("/backups/%s/restore" % incr["id"],
                       {"restore": {"name": "restored"}})
    assert resp.status_code == 202, resp.text
    new = resp.json()["restore"]["volume_id"]
    client.wait_status(new, "available", timeout=60)
    _wait(client, incr["id"], "available")
    assert storage_story.read_through(run, new, len(CHANGED)) == CHANGED

    resp = client.post("/backups/%s/restore" % full["id"],
                       {"restore": {"volume_id": vid}})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    assert storage_story.read_through(run, vid, len(ORIGINAL)) == ORIGINAL

    refused = client.delete("/backups/%s" % full["id"])
    assert refused.status_code == 400, refused.text
    assert client.delete("/backups/%s" % incr["id"]).status_code == 202
    _wait(client, incr["id"], None)
    assert client.delete("/backups/%s" % full["id"]).status_code == 202
    _wait(client, full["id"], None)
    store = dep.tmp / "state-backup1" / "backup" / "story"
    assert sorted(os.listdir(store)) == []
