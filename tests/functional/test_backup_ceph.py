"""The Ceph backup driver on the session's real Ceph (components/ceph.py).

api, scheduler, a volume node with the ``rbd`` backend (1 MiB objects), one
with the raw ``file`` backend, and ``ashlar-backup`` with
``backup_driver = drivers.backup.ceph`` (pool ``backups``, 1 MiB chunks,
its own cephx user; it reads the volumes as the volume pool's user), on
RabbitMQ and PostgreSQL.  Bytes are written and read back through a
compute agent's attachment; the pools are looked at with the ``rbd``
command as client.admin.
"""

import json
import os

import pytest

from deploy.testbed import harness
from tests.functional import storage_story

MIB = 1024 * 1024
ORIGINAL = os.urandom(4 * MIB)
CHANGE_AT = 2 * MIB + 100
CHANGE = b"changed after the full backup"
CHANGED = ORIGINAL[:CHANGE_AT] + CHANGE + ORIGINAL[CHANGE_AT + len(CHANGE):]
POOL = "backups"
TYPES = {"rbd": "ceph", "raw-file": "file"}


def _sections(ceph) -> str:
    return ("[ceph]\nvolume_driver = rbd\nrbd_pool = %s\nrbd_user = %s\n"
            "rbd_ceph_conf = %s\nrbd_keyring = %s\nrbd_store_chunk_size = 1\n"
            % (ceph.pool, ceph.client, ceph.conf, ceph.keyring(ceph.client)))


def _backup_conf(ceph) -> str:
    return ("[DEFAULT]\nbackup_driver = drivers.backup.ceph\n"
            "backup_ceph_conf = %s\nbackup_ceph_user = backup\n"
            "backup_ceph_keyring = %s\nbackup_ceph_pool = %s\n"
            "backup_ceph_chunk_size = %d\n"
            "[agent]\nrbd_keyring_dir = %s\nrbd_user = %s\n"
            % (ceph.conf, ceph.keyring("backup"), POOL, MIB, ceph.dir,
               ceph.client))


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, ceph):
    ceph.add_pool(POOL)
    ceph.add_client("backup", pool=POOL)
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("cephbackup"), vhost,
                             db_url)
    dep.db_sync()
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "cephnode", backends="ceph",
                  extra=_sections(ceph))
        dep.start("volume2", "services.volume", "filenode", backends="file",
                  extra="[file]\nvolume_driver = file\n"
                  "file_volume_format = raw\n")
        dep.start("api", "services.api", "api",
                  extra="[DEFAULT]\ndefault_volume_type = rbd\n")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: len(client.pools()) == 2, timeout=60,
                         what="both pools")
        for name, backend in TYPES.items():
            assert client.post("/types", {"volume_type": {
                "name": name, "extra_specs": {
                    "volume_backend_name": backend}}}).status_code == 200
        dep.start("backup", "services.backup", "backup1",
                  extra=_backup_conf(ceph))
        harness.wait_for(lambda: client.services_up().get(
            ("cinder-backup", "backup1")) == "up", timeout=60,
            what="the backup service")
        yield dep, client
    finally:
        dep.stop_all()
        drop()
        ceph.remove_pool(POOL)


def _agent(dep, ceph):
    return storage_story.agent(dep, "compute1", extra=(
        "[agent]\nrbd_keyring_dir = %s\nrbd_user = %s\n"
        % (ceph.dir, ceph.compute_client)))


def _write_at(run, volume_id: str, offset: int, data: bytes) -> None:
    """Write only ``data`` at ``offset`` (what a diff sees as changed)."""
    attachment = json.loads(storage_story.ok(run("attach", volume_id)))
    try:
        storage_story.ok(run("write", attachment["id"], "--offset",
                             str(offset), stdin=data))
    finally:
        storage_story.ok(run("detach", attachment["id"]))


def _volume(client, type_name: str) -> str:
    vid = client.create_volume(volume_type=type_name)["id"]
    client.wait_status(vid, "available", timeout=60)
    return vid


def _restore(client, backup_id: str, volume_id: str | None = None) -> str:
    body = {"volume_id": volume_id} if volume_id else {"name": "restored"}
    resp = client.post("/backups/%s/restore" % backup_id, {"restore": body})
    assert resp.status_code == 202, resp.text
    target = resp.json()["restore"]["volume_id"]
    client.wait_status(target, "available", timeout=90)
    storage_story.wait_backup(client, backup_id, "available", timeout=90)
    return target


def _images(ceph, pool: str) -> list[str]:
    return ceph.ceph_rbd("ls", pool).split()


def _snaps(ceph, pool: str, image: str) -> list[str]:
    lines = ceph.ceph_rbd("snap", "ls", "%s/%s" % (pool, image)).splitlines()
    return [line.split()[1] for line in lines[1:]]


def _delete(client, backup_id: str) -> None:
    resp = client.delete("/backups/%s" % backup_id)
    assert resp.status_code == 202, resp.text
    storage_story.wait_backup(client, backup_id, None, timeout=90)


def test_rbd_full_and_incremental_restore_and_delete_in_order(deployment,
                                                              ceph):
    dep, client = deployment
    run = _agent(dep, ceph)
    vid = _volume(client, "rbd")
    source = "volume-%s" % vid
    storage_story.write_through(run, vid, ORIGINAL)

    made = storage_story.create_backup(client, vid, name="full")
    full = storage_story.wait_backup(client, made["id"], "available",
                                     timeout=90)
    # 4 MiB written: four 1 MiB chunks; the rest of the GiB is sparse
    assert (full["object_count"], full["container"]) == (4, POOL)
    base = "volume-%s.backup.%s" % (vid, full["id"])
    assert base in _images(ceph, POOL)
    client.wait_status(vid, "available")

    _write_at(run, vid, CHANGE_AT, CHANGE)
    made = storage_story.create_backup(client, vid, name="incr",
                                       incremental=True)
    incr = storage_story.wait_backup(client, made["id"], "available",
                                     timeout=90)
    # only the changed 1 MiB object was diffed and stored, in the same base
    assert (incr["object_count"], incr["is_incremental"]) == (1, True)
    assert [s.split(".")[1] for s in _snaps(ceph, POOL, base)] == [
        full["id"], incr["id"]]
    assert [s.split(".")[1] for s in _snaps(ceph, ceph.pool, source)] == [
        full["id"], incr["id"]]
    client.wait_status(vid, "available")

    # the volume now holds data the full backup does not have past 4 MiB
    storage_story.write_through(run, vid, b"\0" * (4 * MIB)
                                + os.urandom(2 * MIB))
    new = _restore(client, incr["id"])
    assert storage_story.read_through(run, new, len(CHANGED)) == CHANGED
    _restore(client, full["id"], vid)
    assert storage_story.read_through(run, vid, 6 * MIB) == \
        ORIGINAL + bytes(2 * MIB)

    refused = client.delete("/backups/%s" % full["id"])
    assert refused.status_code == 400, refused.text
    _delete(client, incr["id"])
    assert [s.split(".")[1] for s in _snaps(ceph, POOL, base)] == [full["id"]]
    assert [s.split(".")[1] for s in _snaps(ceph, ceph.pool, source)] == [
        full["id"]]
    _delete(client, full["id"])
    assert base not in _images(ceph, POOL)
    assert _snaps(ceph, ceph.pool, source) == []


def test_a_volume_deleted_under_its_backup_leaves_it_restorable(deployment,
                                                                ceph):
    """The RBD driver removes the backup's snapshot with the volume (as
    Cinder's); the backup restores and deletes without its source."""
    dep, client = deployment
    run = _agent(dep, ceph)
    vid = _volume(client, "rbd")
    storage_story.write_through(run, vid, ORIGINAL)
    made = storage_story.create_backup(client, vid)
    kept = storage_story.wait_backup(client, made["id"], "available",
                                     timeout=90)
    client.wait_status(vid, "available")
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)
    assert "volume-%s" % vid not in _images(ceph, ceph.pool)
    new = _restore(client, kept["id"])
    assert storage_story.read_through(run, new, len(ORIGINAL)) == ORIGINAL
    _delete(client, kept["id"])
    assert not [name for name in _images(ceph, POOL) if vid in name]


def test_a_file_volume_backs_up_to_ceph_and_restores(deployment, ceph):
    dep, client = deployment
    run = _agent(dep, ceph)
    vid = _volume(client, "raw-file")
    storage_story.write_through(run, vid, ORIGINAL)
    made = storage_story.create_backup(client, vid)
    made = storage_story.wait_backup(client, made["id"], "available",
                                     timeout=90)
    assert made["object_count"] == 4
    client.wait_status(vid, "available")

    storage_story.write_through(run, vid, os.urandom(len(ORIGINAL)))
    _restore(client, made["id"], vid)
    assert storage_story.read_through(run, vid, len(ORIGINAL)) == ORIGINAL
    new = _restore(client, made["id"])  # the default type: RBD
    assert storage_story.read_through(run, new, len(ORIGINAL)) == ORIGINAL
    _delete(client, made["id"])
    assert not [name for name in _images(ceph, POOL) if vid in name]


def test_a_missing_backup_pool_ends_in_error_with_a_user_message(deployment,
                                                                 ceph):
    dep, client = deployment
    vid = _volume(client, "rbd")
    made = storage_story.create_backup(client, vid, container="no-such-pool")
    failed = storage_story.wait_backup(client, made["id"], "error", timeout=90)
    assert "no-such-pool" in (failed.get("fail_reason") or ""), failed
    client.wait_status(vid, "available")
    # nothing was left on the source either
    assert _snaps(ceph, ceph.pool, "volume-%s" % vid) == []
    resp = client.get("/messages?resource_uuid=%s" % made["id"],
                      headers={"OpenStack-API-Version": "volume 3.3"})
    assert resp.status_code == 200, resp.text
    [told] = resp.json()["messages"]
    assert told["user_message"] == \
        "create backup:Backup driver failed to create backup.", told
    _delete(client, made["id"])
