"""The backup DB layer: the volume's status, the parent's count of its
incremental backups, and the backup quotas under races."""

import uuid

import pytest

from common import exception
from common.db.api import backups as db
from common.db.api import quotas as quotas_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database


def _backup(volume, conf=None, expected=("available",), **values):
    row = dict(id=str(uuid.uuid4()), volume_id=volume.id,
               project_id=volume.project_id, user_id="u", size=volume.size)
    row.update(values)
    return db.backup_create(fixtures.admin(), conf or fixtures.make_conf(),
                            row, {"status": list(expected)})


def _status(volume_id):
    return volumes_db.volume_get(fixtures.admin(), volume_id).status


def test_create_moves_the_volume_to_backing_up():
    vol = fixtures.make_volume(size=2)
    row = _backup(vol, display_name="b")
    assert (row.status, row.size, row.display_name) == ("creating", 2, "b")
    assert _status(vol.id) == "backing-up"
    assert db.volume_settle(fixtures.admin(), vol.id, "backing-up",
                            "available")
    assert _status(vol.id) == "available"


def test_create_refused_for_a_volume_in_use_without_force():
    vol = fixtures.make_volume(status="in-use")
    with pytest.raises(exception.InvalidVolume):
        _backup(vol)
    assert db.backup_list(fixtures.admin()) == []
    _backup(vol, expected=("available", "in-use"))
    assert _status(vol.id) == "backing-up"


def test_parent_counts_its_incremental_and_is_deleted_last():
    vol = fixtures.make_volume()
    parent = _backup(vol)
    db.backup_cas(fixtures.admin(), parent.id, {"status": "creating"},
                  {"status": "available"},
                  (vol.id, {"status": "backing-up"}, "available"))
    child = _backup(vol, parent_id=parent.id)
    assert db.backup_get(fixtures.admin(), parent.id) \
        .num_dependent_backups == 1
    assert db.latest_backup(fixtures.admin(), vol.id,
                            vol.project_id).id == parent.id
    # Another project's backups are no parent (Cinder's project filter).
    assert db.latest_backup(fixtures.admin(), vol.id, "other") is None
    assert not db.backup_destroy(fixtures.admin(), parent.id)
    assert db.backup_destroy(fixtures.admin(), child.id)
    assert db.backup_destroy(fixtures.admin(), parent.id)
    with pytest.raises(exception.BackupNotFound):
        db.backup_get(fixtures.admin(), parent.id)


def test_incremental_refused_when_the_parent_is_not_available():
    vol = fixtures.make_volume()
    parent = _backup(vol)  # still creating
    db.volume_settle(fixtures.admin(), vol.id, "backing-up", "available")
    with pytest.raises(exception.InvalidBackup):
        _backup(vol, parent_id=parent.id)
    assert _status(vol.id) == "available"  # rolled back with the refusal


def test_backup_quotas_hold_under_a_race():
    conf = fixtures.make_conf()
    quotas_db.project_set(fixtures.admin(), "p1", {"backups": 2})
    volumes = [fixtures.make_volume() for _ in range(5)]
    results = fixtures.race(5, lambda i: _backup(volumes[i], conf))
    made = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, Exception)]
    assert len(made) == 2
    assert all(isinstance(r, exception.BackupLimitExceeded) for r in refused)
    assert quotas_db.usage(fixtures.admin(), "p1")["backups"] == 2


def test_backup_gigabytes_quota():
    quotas_db.project_set(fixtures.admin(), "p1", {"backup_gigabytes": 3})
    _backup(fixtures.make_volume(size=2))
    with pytest.raises(exception.VolumeBackupSizeExceedsAvailableQuota):
        _backup(fixtures.make_volume(size=2))
