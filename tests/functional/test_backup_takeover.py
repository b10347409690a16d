"""A dead backup service's backup is taken over by a live one.

Two ``ashlar-backup`` processes share one POSIX folder
(``backup_takeover``).  The first is killed with SIGKILL while it writes
a 1 GiB volume's backup in 256 KiB chunks; once it is seen down
(``service_down_time``) the second takes the row over, logs it, and
finishes the backup, which restores byte for byte through an agent.
On MariaDB (the row lock of ``backup_take_over`` under REPEATABLE READ)."""

import os
import signal

import pytest
import sqlalchemy as sa

from common.db import models
from deploy.testbed import harness
from tests.functional import storage_story

MIB = 1024 * 1024
CHUNK = 256 * 1024
WRITTEN = os.urandom(16 * MIB)


@pytest.fixture
def deployment(tmp_path, vhost):
    db_url, drop = harness.database("mysql")
    dep = harness.Deployment(tmp_path, vhost, db_url)
    dep.db_sync()
    store = tmp_path / "shared-backups"
    try:
        client = dep.start_cluster(["node1"])
        for host in ("backup1", "backup2"):
            dep.start_backup(host, chunk_bytes=CHUNK, name=host, store=store,
                             takeover_interval=1)
        harness.wait_for(lambda: {
            state for (binary, _), state in client.services_up().items()
            if binary == "cinder-backup"} == {"up"} and len(
                client.services_up()) >= 4, timeout=60,
            what="both backup services")
        yield dep, client, store
    finally:
        dep.stop_all()
        drop()


def _shown(client, backup_id: str) -> dict:
    resp = client.get("/backups/%s" % backup_id)
    resp.raise_for_status()
    return resp.json()["backup"]


def _host(db_url: str, backup_id: str) -> str:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(models.Backup.host).where(
                models.Backup.id == backup_id)).scalar_one()
    finally:
        engine.dispose()


def test_a_live_service_finishes_a_dead_ones_backup(deployment):
    dep, client, store = deployment
    run = storage_story.agent(dep, "compute1")
    vid = client.create_volume(size=1, name="large")["id"]
    client.wait_status(vid, "available")
    storage_story.write_through(run, vid, WRITTEN)

    resp = client.post("/backups", {"backup": {
        "volume_id": vid, "name": "taken", "container": "takeover"}})
    assert resp.status_code == 202, resp.text
    backup_id = resp.json()["backup"]["id"]
    folder = store / "takeover" / backup_id
    # The api places it on the first backup service by name.
    harness.wait_for(
        lambda: _shown(client, backup_id)["status"] == "creating"
        and folder.is_dir() and any(
            name.startswith("chunk-") for name in os.listdir(folder)),
        timeout=60, interval=0.01, what="the backup's first chunks")
    assert _host(dep.db_url, backup_id) == "backup1"
    dep.stop("backup1", signal.SIGKILL)
    assert _shown(client, backup_id)["status"] == "creating", \
        "the backup ended before its service was killed: make it larger"

    harness.wait_for(lambda: client.services_up().get(
        ("cinder-backup", "backup1")) == "down", timeout=60,
        what="backup1 seen down")
    harness.wait_for(lambda: _shown(client, backup_id)["status"] ==
                     "available", timeout=120, what="the backup taken over")
    done = _shown(client, backup_id)
    assert done["object_count"] == len(WRITTEN) // CHUNK
    assert _host(dep.db_url, backup_id) == "backup2"
    assert "backup1 is down: backup2 takes over the creating of backup " \
        "%s" % backup_id in dep.log("backup2")
    client.wait_status(vid, "available")

    resp = client.post("/backups/%s/restore" % backup_id,
                       {"restore": {"name": "restored"}})
    assert resp.status_code == 202, resp.text
    new = resp.json()["restore"]["volume_id"]
    # The new volume is available, then restoring-backup, then available
    # again before the backup is: wait for the backup.
    harness.wait_for(lambda: _shown(client, backup_id)["status"] ==
                     "available", timeout=120, what="the restore")
    client.wait_status(new, "available")
    assert storage_story.read_through(run, new, len(WRITTEN)) == WRITTEN
