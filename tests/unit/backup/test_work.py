"""The backup service's work: a volume read through the data path (a
local file connection, as the file backend gives), statuses on success
and failure, restores into a new volume, deletes."""

import os
import uuid

import pytest

from common import attach_rules
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
