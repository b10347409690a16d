"""The backup service's work: a volume read through the data path (a
local file connection, as the file backend gives), statuses on success
and failure, restores into a new volume, deletes."""

import base64
import json
import os
import uuid
from unittest import mock

import pytest

from common import attach_rules
from common import backup_record
from common import exception
from common.db.api import messages as messages_db
from common.db.api import snapshots as snapshots_db
from common.db.api import backups as backups_db
from common.db.api import volumes as volumes_db
from drivers.backup import posix
from services.backup import work

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database
CHUNK = 64 * 1024


class FakeVolumeRPC:
    """The volume node's backup_connect: a local file per volume."""

    def __init__(self, folder):
        self.folder = folder
        self.connected = []

    def path(self, volume_id):
        return os.path.join(self.folder, volume_id)

    def backup_connect(self, ctxt, host, volume_id, connector):
        self.connected.append(volume_id)
        return {"driver_volume_type": "local",
                "data": {"device_path": self.path(volume_id),
                         "format": "raw"}}

    def backup_disconnect(self, ctxt, host, volume_id, connector):
        self.connected.remove(volume_id)

    def backup_connect_snapshot(self, ctxt, host, snapshot_id, connector):
        return self.backup_connect(ctxt, host, snapshot_id, connector)

    def backup_disconnect_snapshot(self, ctxt, host, snapshot_id, connector):
        self.backup_disconnect(ctxt, host, snapshot_id, connector)


@pytest.fixture
def worker(tmp_path, monkeypatch):
    monkeypatch.setattr(work, "GIB", 4 * CHUNK)  # a "GiB" of 4 chunks
    monkeypatch.setattr(work, "NEW_VOLUME_POLL", 0.01)
    conf = fixtures.make_conf(backup_restore_wait=1)
    (tmp_path / "vols").mkdir()
    return work.BackupWorker(
        conf, "bk1", posix.PosixBackupDriver(str(tmp_path / "store"), CHUNK),
        FakeVolumeRPC(str(tmp_path / "vols")))


def _volume(worker, data=b"", **values):
    row = fixtures.make_volume(**values)
    with open(worker.volume_rpc.path(row.id), "wb") as out:
        out.write(data.ljust(4 * CHUNK, b"\0"))
    return row


def _backup(worker, volume, container="c", **values):
    return backups_db.backup_create(fixtures.admin(), worker.conf, dict(
        id=str(uuid.uuid4()), volume_id=volume.id, project_id="p1",
        size=volume.size, container=container, host="bk1", **values),
        {"status": ["available", "in-use"]})


def _status(volume_id):
    return volumes_db.volume_get(fixtures.admin(), volume_id).status


def test_backup_and_restore_through_the_data_path(worker):
    data = os.urandom(3 * CHUNK)
    vol = _volume(worker, data)
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    done = backups_db.backup_get(fixtures.admin(), row.id)
    assert (done.status, done.object_count) == ("available", 3)
    assert _status(vol.id) == "available"
    assert worker.volume_rpc.connected == []
    target = _volume(worker, status="restoring-backup")
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), row.id, target.id, new_volume=False)
    with open(worker.volume_rpc.path(target.id), "rb") as back:
        assert back.read(len(data)) == data
    assert _status(target.id) == "available"
    assert backups_db.backup_get(fixtures.admin(), row.id).status == \
        "available"


def test_the_volume_goes_back_to_what_its_attachments_say(worker):
    vol = _volume(worker, b"x")
    assert fixtures.reserve(
        vol.id, attach_rules.ReserveGuard(multiattach=False, limit=1),
        {"id": "a1", "attach_status": "attached", "attach_mode": "rw"})
    assert _status(vol.id) == "in-use"
    row = _backup(worker, vol)
    assert _status(vol.id) == "backing-up"
    worker.create(fixtures.admin(), row.id)
    assert _status(vol.id) == "in-use"


def test_a_failed_backup_is_error_with_a_reason(worker):
    vol = _volume(worker, b"x")
    row = _backup(worker, vol, container="../escape")
    worker.create(fixtures.admin(), row.id)
    failed = backups_db.backup_get(fixtures.admin(), row.id)
    assert failed.status == "error" and "Container" in failed.fail_reason
    assert _status(vol.id) == "available"
    assert worker.volume_rpc.connected == []


def test_a_corrupt_backup_leaves_the_volume_error_restoring(worker, tmp_path):
    vol = _volume(worker, b"y" * CHUNK)
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    (tmp_path / "store" / "c" / row.id / "chunk-00000").write_bytes(b"bad")
    target = _volume(worker, status="restoring-backup")
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), row.id, target.id, new_volume=False)
    assert _status(target.id) == "error_restoring"
    back = backups_db.backup_get(fixtures.admin(), row.id)
    assert back.status == "available" and "corrupt" in back.fail_reason


def test_restore_into_a_new_volume_waits_for_it(worker):
    vol = _volume(worker, b"z" * 10)
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    new = _volume(worker, status="available")  # created already
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), row.id, new.id, new_volume=True)
    assert _status(new.id) == "available"
    with open(worker.volume_rpc.path(new.id), "rb") as back:
        assert back.read(10) == b"z" * 10
    failed = _volume(worker, status="error")
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), row.id, failed.id, new_volume=True)
    assert backups_db.backup_get(fixtures.admin(), row.id).status == \
        "available"
    assert _status(failed.id) == "error"


def test_delete_removes_data_and_row(worker, tmp_path):
    vol = _volume(worker, b"d")
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "deleting"})
    worker.delete(fixtures.admin(), row.id)
    assert not (tmp_path / "store" / "c" / row.id).exists()
    assert backups_db.backup_list(fixtures.admin()) == []


def test_a_restarted_service_resumes_what_it_left_in_flight(worker):
    """Creating, deleting and restoring rows of this host run again at
    start (each step is idempotent); another host's rows are its own."""
    data = os.urandom(2 * CHUNK)
    vol = _volume(worker, data)
    creating = _backup(worker, vol)             # died while reading
    assert _status(vol.id) == "backing-up"
    assert worker.resume(fixtures.admin()) == 1
    assert backups_db.backup_get(fixtures.admin(), creating.id).status == \
        "available"
    assert _status(vol.id) == "available"
    # A restore into an existing volume, and one into a new volume the
    # service had not claimed yet, both cut short.
    into = _volume(worker, status="restoring-backup")
    backups_db.backup_cas(fixtures.admin(), creating.id, {},
                          {"status": "restoring", "restore_volume_id": into.id})
    assert worker.resume(fixtures.admin()) == 1
    with open(worker.volume_rpc.path(into.id), "rb") as back:
        assert back.read(len(data)) == data
    assert _status(into.id) == "available"
    new = _volume(worker, status="available")
    backups_db.backup_cas(fixtures.admin(), creating.id, {},
                          {"status": "restoring", "restore_volume_id": new.id})
    worker.resume(fixtures.admin())
    with open(worker.volume_rpc.path(new.id), "rb") as back:
        assert back.read(len(data)) == data
    assert backups_db.backup_get(fixtures.admin(), creating.id).status == \
        "available"
    # A delete cut short.
    backups_db.backup_cas(fixtures.admin(), creating.id, {},
                          {"status": "deleting"})
    assert worker.resume(fixtures.admin()) == 1
    assert backups_db.backup_list(fixtures.admin()) == []
    assert worker.resume(fixtures.admin()) == 0


def test_a_restore_the_api_left_before_its_volume_is_available_again(worker):
    vol = _volume(worker, b"r")
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    assert worker.resume(fixtures.admin()) == 1
    assert backups_db.backup_get(fixtures.admin(), row.id).status == \
        "available"


def test_resume_leaves_another_hosts_backups(worker):
    vol = _volume(worker, b"h")
    row = backups_db.backup_create(fixtures.admin(), worker.conf, dict(
        id=str(uuid.uuid4()), volume_id=vol.id, project_id="p1",
        size=vol.size, container="c", host="bk2"),
        {"status": ["available", "in-use"]})
    assert worker.resume(fixtures.admin()) == 0
    assert backups_db.backup_get(fixtures.admin(), row.id).status == \
        "creating"
    assert _status(vol.id) == "backing-up"


def _messages(resource_id):
    return [(m.event_id, m.project_id) for m in messages_db.message_list(
        fixtures.admin(), project_id="p1") if m.resource_uuid == resource_id]


def test_a_snapshot_is_read_instead_of_its_volume(worker):
    """A backup of a snapshot reads the snapshot's data (not what the
    volume holds since) and gives the snapshot back ``available``."""
    vol = _volume(worker, b"now")
    snap = fixtures.make_snapshot(vol)
    then = os.urandom(CHUNK + 7)
    with open(worker.volume_rpc.path(snap.id), "wb") as out:
        out.write(then.ljust(4 * CHUNK, b"\0"))
    row = _backup(worker, vol, snapshot_id=snap.id)
    assert snapshots_db.snapshot_get(fixtures.admin(), snap.id).status == \
        "backing-up"
    assert _status(vol.id) == "available"
    worker.create(fixtures.admin(), row.id)
    assert backups_db.backup_get(fixtures.admin(), row.id).status == \
        "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), snap.id).status == \
        "available"
    target = _volume(worker, status="restoring-backup")
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), row.id, target.id, new_volume=False)
    with open(worker.volume_rpc.path(target.id), "rb") as back:
        assert back.read(len(then) + 1) == then + b"\0"


def test_a_backup_deleted_while_created_stops_and_goes(worker, tmp_path):
    """An admin's force delete of a ``creating`` backup: the delete cast
    finds it in hand and leaves it; the create stops at its next chunk,
    removes what it wrote and the row; the volume is released."""
    vol = _volume(worker, os.urandom(4 * CHUNK))
    row = _backup(worker, vol)
    real = worker.driver.backup

    def force_deleted_meanwhile(*args, **kwargs):
        backups_db.backup_cas(fixtures.admin(), row.id, {},
                              {"status": "deleting"})
        worker.delete(fixtures.admin(), row.id)     # the cast, in hand
        assert backups_db.backup_get(fixtures.admin(), row.id)
        return real(*args, **kwargs)

    worker.driver.backup = force_deleted_meanwhile
    worker.create(fixtures.admin(), row.id)
    assert backups_db.backup_list(fixtures.admin()) == []
    assert not (tmp_path / "store" / "c" / row.id).exists()
    assert _status(vol.id) == "available"
    assert _messages(row.id) == []


def test_a_cancelled_create_cut_short_is_finished_by_the_delete(worker):
    """Force-deleted while creating, then the service restarted: the
    resumed delete releases the volume too."""
    vol = _volume(worker, b"x")
    row = _backup(worker, vol)
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "deleting"})
    assert worker.resume(fixtures.admin()) == 1
    assert backups_db.backup_list(fixtures.admin()) == []
    assert _status(vol.id) == "available"


def test_failures_leave_cinders_user_messages(worker, tmp_path):
    vol = _volume(worker, b"m" * CHUNK)
    row = _backup(worker, vol, container="../escape")
    worker.create(fixtures.admin(), row.id)
    assert _messages(row.id) == [("VOLUME_VOLUME_BACKUP_013_020", "p1")]
    worker.volume_rpc.backup_connect = mock.Mock(
        side_effect=exception.InvalidVolume(reason="node says no"))
    refused = _backup(worker, vol)
    worker.create(fixtures.admin(), refused.id)
    failed = backups_db.backup_get(fixtures.admin(), refused.id)
    assert failed.status == "error" and "node says no" in failed.fail_reason
    assert _messages(refused.id) == [("VOLUME_VOLUME_BACKUP_013_021", "p1")]
    assert worker.volume_rpc.connected == []


def _exported(worker, vol, **values):
    row = _backup(worker, vol, **values)
    worker.create(fixtures.admin(), row.id)
    row = backups_db.backup_get(fixtures.admin(), row.id)
    return row, backup_record.encode(row, {})


def _forget(*backup_ids):
    """Lose the rows (Cinder's case for an import: the database lost
    them, the store kept the data)."""
    for backup_id in backup_ids:
        backups_db.backup_cas(fixtures.admin(), backup_id, {},
                              {"status": "deleting"})
        assert backups_db.backup_destroy(fixtures.admin(), backup_id)


def _import(worker, url, service="drivers.backup.posix"):
    record = backup_record.decode(url)
    backups_db.backup_import_create(fixtures.admin(), worker.conf, {
        "id": record["id"], "project_id": "p2", "host": "bk1",
        "volume_id": backup_record.IMPORT_VOLUME_ID,
        "size": record["size"]})
    worker.import_record(fixtures.admin(), record["id"], service, url)
    return backups_db.backup_get(fixtures.admin(), record["id"])


def test_an_imported_record_that_matches_the_store_is_available(worker):
    vol = _volume(worker, os.urandom(2 * CHUNK))
    full, full_url = _exported(worker, vol)
    incr, incr_url = _exported(worker, vol, parent_id=full.id)
    backups_db.backup_update(fixtures.admin(), incr.id, {}, {"k": "v"})
    incr_url = backup_record.encode(
        backups_db.backup_get(fixtures.admin(), incr.id), {})
    _forget(incr.id, full.id)
    got = _import(worker, full_url)
    assert (got.status, got.volume_id, got.size, got.object_count,
            got.project_id, got.num_dependent_backups) == (
        "available", vol.id, 1, 2, "p2", 0)
    got = _import(worker, incr_url)
    assert (got.status, got.parent_id, got.container) == (
        "available", full.id, "c")
    assert {m.key: m.value for m in got.backup_metadata} == {"k": "v"}
    assert backups_db.backup_get(fixtures.admin(), full.id
                                 ).num_dependent_backups == 1
    target = _volume(worker, status="restoring-backup")
    backups_db.backup_cas(fixtures.admin(), incr.id, {},
                          {"status": "restoring"})
    worker.restore(fixtures.admin(), incr.id, target.id, new_volume=False)
    assert _status(target.id) == "available"


@pytest.mark.parametrize("change, reason", [
    ({"object_count": 9}, "has object_count 2, the record 9"),
    ({"size": 2}, "has size"),
    ({"container": "elsewhere"}, "has no readable metadata"),
    ({"display_name": None, "service_metadata": "gone"}, None)])
def test_an_imported_record_must_match_the_store(worker, change, reason):
    vol = _volume(worker, os.urandom(2 * CHUNK))
    row, url = _exported(worker, vol)
    _forget(row.id)
    fields = dict(backup_record.decode(url), **change)
    got = _import(worker, base64.b64encode(
        json.dumps(fields).encode()).decode())
    if reason is None:  # what the store does not hold may differ
        assert got.status == "available"
    else:
        assert got.status == "error" and reason in got.fail_reason


def test_a_record_of_another_driver_or_missing_fields_is_error(worker):
    vol = _volume(worker, b"o")
    row, url = _exported(worker, vol)
    _forget(row.id)
    got = _import(worker, url, service="cinder.backup.drivers.swift")
    assert got.status == "error" and "swift" in got.fail_reason
    _forget(row.id)
    fields = backup_record.decode(url)
    del fields["object_count"]
    got = _import(worker, base64.b64encode(
        json.dumps(fields).encode()).decode())
    assert got.status == "error"
    assert "missing fields (object_count)" in got.fail_reason


def test_an_interrupted_import_is_error_and_its_delete_keeps_the_data(
        worker, tmp_path):
    """An import whose service stopped before checking the record cannot
    be redone (the record is not kept): ``error``; deleting that row
    leaves the store's data for the next import, as Cinder's (no driver
    named)."""
    vol = _volume(worker, b"i" * CHUNK)
    row, url = _exported(worker, vol)
    _forget(row.id)
    backups_db.backup_import_create(fixtures.admin(), worker.conf, {
        "id": row.id, "project_id": "p1", "host": "bk1",
        "volume_id": backup_record.IMPORT_VOLUME_ID, "size": 1})
    assert worker.resume(fixtures.admin()) == 1
    failed = backups_db.backup_get(fixtures.admin(), row.id)
    assert failed.status == "error" and "import" in failed.fail_reason
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "deleting"})
    worker.delete(fixtures.admin(), row.id)
    assert backups_db.backup_list(fixtures.admin()) == []
    assert (tmp_path / "store" / "c" / row.id / "metadata.json").exists()
    assert _import(worker, url).status == "available"


def test_a_backup_outlives_its_volume_and_is_deleted_after_it(worker):
    vol = _volume(worker, b"gone")
    row = _backup(worker, vol)
    worker.create(fixtures.admin(), row.id)
    volumes_db.volume_destroy(fixtures.admin(), vol.id)
    backups_db.backup_cas(fixtures.admin(), row.id, {},
                          {"status": "deleting"})
    worker.delete(fixtures.admin(), row.id)
    assert backups_db.backup_list(fixtures.admin()) == []


def test_a_backup_deleted_before_it_started_writes_nothing(
        worker, tmp_path, monkeypatch):
    """Force-deleted between the create's first read and its start: the
    create writes nothing and finishes the delete (the delete cast found
    it in hand)."""
    vol = _volume(worker, b"early")
    row = _backup(worker, vol)
    real_get = backups_db.backup_get

    def read_then_deleted(ctxt, backup_id):
        found = real_get(ctxt, backup_id)
        backups_db.backup_cas(ctxt, backup_id, {}, {"status": "deleting"})
        monkeypatch.setattr(work.backups_db, "backup_get", real_get)
        return found

    monkeypatch.setattr(work.backups_db, "backup_get", read_then_deleted)
    worker.create(fixtures.admin(), row.id)
    assert backups_db.backup_list(fixtures.admin()) == []
    assert _status(vol.id) == "available"
    assert not (tmp_path / "store" / "c" / row.id).exists()
