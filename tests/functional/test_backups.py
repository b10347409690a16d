"""Backups on real processes: api, scheduler, a volume node (file
backend) and ``ashlar-backup`` (POSIX driver, 1 MiB chunks), on RabbitMQ
and PostgreSQL.  Known bytes are written through a compute agent's
attachment, backed up full and incremental, changed, restored into a new
volume and into an existing one, and read back through the agent; a
snapshot's backup; an exported record imported after its row was lost."""

import os

import pytest
import sqlalchemy as sa

from common.db import models
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


def test_full_and_incremental_backup_restore_byte_for_byte(deployment):
    dep, client = deployment
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(name="source")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, ORIGINAL)

    full = storage_story.create_backup(client, vid, name="full", container="story")
    full = storage_story.wait_backup(client, full["id"], "available")
    assert (full["object_count"], full["is_incremental"],
            full["container"]) == (4, False, "story")
    client.wait_status(vid, "available")

    storage_story.write_through(run, vid, ORIGINAL[:CHANGE_AT] + CHANGE)
    incr = storage_story.create_backup(client, vid, name="incr", incremental=True)
    incr = storage_story.wait_backup(client, incr["id"], "available")
    # only the changed chunk was stored
    assert (incr["object_count"], incr["is_incremental"],
            incr["container"]) == (1, True, "story")
    assert storage_story.backup_shown(client, full["id"])["has_dependent_backups"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, b"\0" * len(ORIGINAL))

    resp = client.post("/backups/%s/restore" % incr["id"],
                       {"restore": {"name": "restored"}})
    assert resp.status_code == 202, resp.text
    new = resp.json()["restore"]["volume_id"]
    client.wait_status(new, "available", timeout=60)
    storage_story.wait_backup(client, incr["id"], "available")
    assert storage_story.read_through(run, new, len(CHANGED)) == CHANGED

    resp = client.post("/backups/%s/restore" % full["id"],
                       {"restore": {"volume_id": vid}})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    assert storage_story.read_through(run, vid, len(ORIGINAL)) == ORIGINAL

    refused = client.delete("/backups/%s" % full["id"])
    assert refused.status_code == 400, refused.text
    assert client.delete("/backups/%s" % incr["id"]).status_code == 202
    storage_story.wait_backup(client, incr["id"], None)
    assert client.delete("/backups/%s" % full["id"]).status_code == 202
    storage_story.wait_backup(client, full["id"], None)
    store = dep.tmp / "state-backup1" / "backup" / "story"
    assert sorted(os.listdir(store)) == []


def test_a_snapshot_backup_restores_the_snapshots_bytes(deployment):
    """A backup of a snapshot reads the snapshot through its node: the
    volume written after the snapshot restores to what the snapshot
    held, byte for byte."""
    dep, client = deployment
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(name="snap-source")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, ORIGINAL)
    resp = client.post("/snapshots", {"snapshot": {"volume_id": vid}})
    assert resp.status_code == 202, resp.text
    snap = resp.json()["snapshot"]["id"]
    storage_story._wait_snapshot(client, snap, "available")
    storage_story.write_through(run, vid, CHANGED)

    made = storage_story.create_backup(client, vid, name="of-snap", snapshot_id=snap)
    done = storage_story.wait_backup(client, made["id"], "available")
    assert (done["snapshot_id"], done["object_count"]) == (snap, 4)
    storage_story._wait_snapshot(client, snap, "available")
    client.wait_status(vid, "available")

    resp = client.post("/backups/%s/restore" % made["id"],
                       {"restore": {"name": "from-snap"}})
    assert resp.status_code == 202, resp.text
    new = resp.json()["restore"]["volume_id"]
    client.wait_status(new, "available", timeout=60)
    storage_story.wait_backup(client, made["id"], "available")
    assert storage_story.read_through(run, new, len(ORIGINAL)) == ORIGINAL
    assert storage_story.read_through(run, vid, len(CHANGED)) == CHANGED


def _lose_row(db_url: str, backup_id: str) -> None:
    """The database loses the backup's row (Cinder's case for an import:
    a database rebuilt, or another deployment on the same store); its
    data stays in the backup service's store."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(models.BackupMetadata.__table__.delete().where(
                models.BackupMetadata.backup_id == backup_id))
            assert conn.execute(models.Backup.__table__.delete().where(
                models.Backup.id == backup_id)).rowcount == 1
    finally:
        engine.dispose()


def test_export_import_round_trip_restores_byte_for_byte(deployment):
    dep, client = deployment
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(name="exported")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, ORIGINAL)
    made = storage_story.create_backup(client, vid, name="kept",
                                       description="round trip")
    storage_story.wait_backup(client, made["id"], "available")
    client.wait_status(vid, "available")

    resp = client.get("/backups/%s/export_record" % made["id"])
    assert resp.status_code == 200, resp.text
    record = resp.json()["backup-record"]
    assert record["backup_service"] == "drivers.backup.posix"
    _lose_row(dep.db_url, made["id"])
    assert storage_story.backup_shown(client, made["id"]) is None

    resp = client.post("/backups/import_record", {"backup-record": record})
    assert resp.status_code == 201, resp.text
    assert resp.json()["backup"]["id"] == made["id"]
    back = storage_story.wait_backup(client, made["id"], "available")
    assert (back["volume_id"], back["name"], back["description"],
            back["object_count"], back["size"]) == (
        vid, "kept", "round trip", 4, 1)
    again = client.post("/backups/import_record", {"backup-record": record})
    assert again.status_code == 400, again.text

    storage_story.write_through(run, vid, b"\0" * len(ORIGINAL))
    resp = client.post("/backups/%s/restore" % made["id"],
                       {"restore": {"volume_id": vid}})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    storage_story.wait_backup(client, made["id"], "available")
    assert storage_story.read_through(run, vid, len(ORIGINAL)) == ORIGINAL
