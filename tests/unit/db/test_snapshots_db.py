"""The snapshot DB layer: the volume's snapshot count under races, lists,
CAS, metadata, and the quotas that count snapshots."""

import uuid

import pytest
import sqlalchemy as sa

from common import exception
from common import quota
from common.db import models
from common.db.api import engine as db_engine
from common.db.api import quotas as quotas_db
from common.db.api import snapshots as db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database


def _vol(volume_id):
    return volumes_db.volume_get(fixtures.admin(), volume_id)


def _count(table):
    with db_engine.get_engine().connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            table)).scalar()


# -- create and destroy -------------------------------------------------------

def test_create_counts_on_the_volume_and_reads_back():
    vol = fixtures.make_volume(size=3)
    snap = fixtures.make_snapshot(vol, status="creating",
                                  metadata={"a": "1"}, display_name="s")
    assert (snap.status, snap.volume_size, snap.display_name) == (
        "creating", 3, "s")
    assert db.metadata_of(snap) == {"a": "1"}
    assert snap.volume.id == vol.id and snap.volume.snapshot_count == 1
    assert snap.volume.volume_type.name == "__DEFAULT__"
    assert snap.created_at is not None
    fixtures.make_snapshot(vol)
    assert _vol(vol.id).snapshot_count == 2


@pytest.mark.parametrize("status", ["creating", "error", "deleting",
                                    "extending", "in-use"])
def test_create_refused_outside_the_expected_statuses(status):
    vol = fixtures.make_volume(status=status)
    with pytest.raises(exception.InvalidVolume) as caught:
        fixtures.make_snapshot(vol, expected={"status": "available"})
    assert caught.value.user_message() == (
        "Invalid volume: Volume %s status must be available, but current "
        "status is: %s." % (vol.id, status))
    assert _vol(vol.id).snapshot_count == 0
    assert _count(models.Snapshot) == 0


def test_create_expects_any_of_a_tuple_and_nulls():
    vol = fixtures.make_volume(status="in-use")
    either = {"status": ("available", "in-use"), "migration_status": None}
    assert fixtures.make_snapshot(vol, expected=either)
    volumes_db.volume_update(fixtures.admin(), vol.id,
                             {"migration_status": "migrating"})
    with pytest.raises(exception.InvalidVolume, match="migration_status"):
        fixtures.make_snapshot(vol, expected=either)
    assert _vol(vol.id).snapshot_count == 1


def test_create_of_a_missing_volume():
    vol = fixtures.make_volume()
    vol.id = str(uuid.uuid4())
    with pytest.raises(exception.VolumeNotFound):
        fixtures.make_snapshot(vol)
    assert _count(models.Snapshot) == 0


def test_a_failing_check_writes_nothing():
    vol = fixtures.make_volume()

    def check(session):
        raise exception.SnapshotLimitExceeded(allowed=0)
    with pytest.raises(exception.SnapshotLimitExceeded):
        fixtures.make_snapshot(vol, check=check)
    assert _vol(vol.id).snapshot_count == 0
    assert _count(models.Snapshot) == 0


def test_the_volume_refuses_before_the_quota():
    """As in Cinder: a volume in the wrong status is a 400, not a 413."""
    vol = fixtures.make_volume(status="error")

    def check(session):
        raise exception.SnapshotLimitExceeded(allowed=0)
    with pytest.raises(exception.InvalidVolume):
        fixtures.make_snapshot(vol, expected={"status": "available"},
                               check=check)


def test_destroy_uncounts_drops_metadata_and_is_idempotent():
    vol = fixtures.make_volume()
    snaps = [fixtures.make_snapshot(vol, metadata={"k": "v"})
             for _ in range(2)]
    db.snapshot_destroy(fixtures.admin(), snaps[0].id)
    assert _vol(vol.id).snapshot_count == 1
    db.snapshot_destroy(fixtures.admin(), snaps[0].id)
    assert _vol(vol.id).snapshot_count == 1
    with pytest.raises(exception.SnapshotNotFound):
        db.snapshot_get(fixtures.admin(), snaps[0].id)
    assert _count(models.SnapshotMetadata) == 1
    db.snapshot_destroy(fixtures.admin(), snaps[1].id)
    assert _vol(vol.id).snapshot_count == 0
    assert _count(models.SnapshotMetadata) == 0


def test_racing_destroys_uncount_once():
    vol = fixtures.make_volume()
    snap = fixtures.make_snapshot(vol)
    fixtures.make_snapshot(vol)
    results = fixtures.race(8, lambda i: db.snapshot_destroy(fixtures.admin(),
                                                     snap.id))
    assert results == [None] * 8
    assert _vol(vol.id).snapshot_count == 1


def test_racing_creates_all_counted():
    vol = fixtures.make_volume()
    results = fixtures.race(12, lambda i: fixtures.make_snapshot(vol))
    assert not [r for r in results if isinstance(r, Exception)], results
    assert _vol(vol.id).snapshot_count == 12
    assert len(db.snapshots_of_volume(fixtures.admin(), vol.id)) == 12


def test_creates_race_a_delete_expecting_no_snapshots():
    """Snapshots being made while the volume's delete begins (a CAS that
    expects ``snapshot_count`` 0): either the delete won and no snapshot
    exists, or it lost and every snapshot made is counted.  (Run it on
    PostgreSQL and MariaDB with ``ASHLAR_UNIT_DB_URL``: SQLite serialises
    the writers whole.)"""
    for _ in range(5):
        vol = fixtures.make_volume()

        def act(i, vol=vol):
            if i == 0:
                return volumes_db.volume_cas(
                    fixtures.admin(), vol.id,
                    {"status": "available", "snapshot_count": 0},
                    {"status": "deleting"})
            return fixtures.make_snapshot(vol, expected={
                "status": ("available", "in-use")})
        results = fixtures.race(9, act)
        deleted, made = results[0], results[1:]
        assert not [r for r in made if isinstance(r, Exception) and
                    not isinstance(r, exception.InvalidVolume)], made
        made = [r for r in made if not isinstance(r, Exception)]
        row = _vol(vol.id)
        assert row.snapshot_count == len(made) == len(
            db.snapshots_of_volume(fixtures.admin(), vol.id))
        if deleted:
            assert row.status == "deleting" and not made
        else:
            assert row.status == "available" and made


# -- reads ------------------------------------------------------------------

def test_get_and_not_found():
    snap = fixtures.make_snapshot(fixtures.make_volume())
    assert db.snapshot_get(fixtures.admin(), snap.id).id == snap.id
    with pytest.raises(exception.SnapshotNotFound) as caught:
        db.snapshot_get(fixtures.admin(), "nope")
    assert str(caught.value) == "Snapshot nope could not be found."


def test_list_pages_newest_first_with_markers():
    vol = fixtures.make_volume()
    made = [fixtures.make_snapshot(vol, display_name="s%d" % i)
            for i in range(5)]
    every = db.snapshot_list(fixtures.admin(), project_id="p1")
    assert sorted(r.id for r in every) == sorted(r.id for r in made)
    first = db.snapshot_list(fixtures.admin(), project_id="p1", limit=2)
    assert [r.id for r in first] == [r.id for r in every[:2]]
    rest = db.snapshot_list(fixtures.admin(), project_id="p1",
                            marker=first[-1].id)
    assert [r.id for r in rest] == [r.id for r in every[2:]]
    by_name = db.snapshot_list(fixtures.admin(), sort_keys=["display_name"],
                               sort_dirs=["asc"])
    assert [r.display_name for r in by_name] == ["s0", "s1", "s2", "s3", "s4"]
    assert [r.display_name for r in db.snapshot_list(
        fixtures.admin(), sort_keys=["display_name"], sort_dirs=["asc"],
        limit=2, offset=1)] == ["s1", "s2"]


def test_list_filters_and_projects():
    vol = fixtures.make_volume()
    other = fixtures.make_volume()
    a = fixtures.make_snapshot(vol, display_name="a")
    b = fixtures.make_snapshot(vol, display_name="b", status="creating")
    c = fixtures.make_snapshot(other, display_name="a")
    foreign = fixtures.make_snapshot(fixtures.make_volume(project="p2"))

    def ids(**kwargs):
        return {r.id for r in db.snapshot_list(fixtures.admin(), **kwargs)}
    assert ids(project_id="p1") == {a.id, b.id, c.id}
    assert ids() == {a.id, b.id, c.id, foreign.id}
    assert ids(filters={"display_name": "a"}) == {a.id, c.id}
    assert ids(filters={"status": "creating"}) == {b.id}
    assert ids(filters={"volume_id": vol.id, "display_name": "a"}) == {a.id}
    with pytest.raises(exception.SnapshotNotFound):
        db.snapshot_list(fixtures.admin(), project_id="p1",
                         marker=foreign.id)
    with pytest.raises(exception.SnapshotNotFound):
        db.snapshot_list(fixtures.admin(), marker="nope")


def test_snapshots_of_volume_oldest_first():
    vol = fixtures.make_volume()
    made = [fixtures.make_snapshot(vol) for _ in range(3)]
    fixtures.make_snapshot(fixtures.make_volume())
    found = db.snapshots_of_volume(fixtures.admin(), vol.id)
    assert sorted(r.id for r in found) == sorted(r.id for r in made)
    assert [(r.created_at, r.id) for r in found] == sorted(
        (r.created_at, r.id) for r in found)
    assert db.snapshots_of_volume(fixtures.admin(), "nope") == []


def test_a_backends_unfinished_snapshots_come_in_one_statement():
    """The periodic resume reads its own backend's snapshots in the
    resumed statuses once, not every backend's once per status."""
    made = {}
    for host in ("n1@b", "n1@b#p2", "n1@bb#p", "n2@b#p"):
        vol = fixtures.make_volume(host=host)
        for status in ("creating", "deleting", "available"):
            made[host, status] = fixtures.make_snapshot(vol,
                                                        status=status).id
    with fixtures.selects() as seen:
        rows = db.snapshots_of_backend(fixtures.admin(), "n1@b",
                                       ("creating", "deleting"))
    assert sorted(row.id for row in rows) == sorted(
        made[host, status] for host in ("n1@b", "n1@b#p2")
        for status in ("creating", "deleting"))
    assert len(seen) == 1


# -- changes ------------------------------------------------------------------

def test_cas_changes_only_the_expected():
    snap = fixtures.make_snapshot(fixtures.make_volume(), status="creating")
    assert not db.snapshot_cas(fixtures.admin(), snap.id,
                               {"status": "available"}, {"status": "deleting"})
    assert db.snapshot_cas(fixtures.admin(), snap.id,
                           {"status": ("creating", "error")},
                           {"status": "available", "progress": "100%"})
    row = db.snapshot_get(fixtures.admin(), snap.id)
    assert (row.status, row.progress) == ("available", "100%")
    assert row.updated_at is not None
    assert not db.snapshot_cas(fixtures.admin(), "nope", {}, {"status": "x"})


def test_update_merges_or_replaces_metadata():
    snap = fixtures.make_snapshot(fixtures.make_volume(),
                                  metadata={"a": "1", "b": "2"})
    row = db.snapshot_update(fixtures.admin(), snap.id,
                             {"display_name": "n"}, {"b": "3", "c": "4"})
    assert row.display_name == "n"
    assert db.metadata_of(row) == {"a": "1", "b": "3", "c": "4"}
    row = db.snapshot_update(fixtures.admin(), snap.id, {}, {"c": "5"},
                             delete_metadata=True)
    assert db.metadata_of(row) == {"c": "5"}
    assert db.metadata_of(db.snapshot_get(fixtures.admin(), snap.id)) == {
        "c": "5"}
    row = db.snapshot_update(fixtures.admin(), snap.id, {}, {},
                             delete_metadata=True)
    assert db.metadata_of(row) == {}
    with pytest.raises(exception.SnapshotNotFound):
        db.snapshot_update(fixtures.admin(), "nope", {"display_name": "x"})


def test_metadata_delete():
    snap = fixtures.make_snapshot(fixtures.make_volume(),
                                  metadata={"a": "1", "b": "2"})
    db.snapshot_metadata_delete(fixtures.admin(), snap.id, "a")
    assert db.metadata_of(db.snapshot_get(fixtures.admin(), snap.id)) == {
        "b": "2"}
    with pytest.raises(exception.SnapshotMetadataNotFound) as caught:
        db.snapshot_metadata_delete(fixtures.admin(), snap.id, "a")
    assert str(caught.value) == (
        "Snapshot %s has no metadata with key a." % snap.id)
    with pytest.raises(exception.SnapshotNotFound):
        db.snapshot_metadata_delete(fixtures.admin(), "nope", "a")


# -- quotas -------------------------------------------------------------------

def _limited(project, **limits):
    quotas_db.project_set(fixtures.admin(), project, limits)


def _snapshot_check(conf, vol, type_name="__DEFAULT__"):
    change = quota.Change(type_name, snapshots=1, gigabytes=vol.size)
    return lambda session: quotas_db.enforce(
        session, conf, vol.project_id, vol.volume_type_id, change)


def test_snapshots_over_the_limit_raise_cinders_error():
    project = "q-" + uuid.uuid4().hex
    conf = fixtures.make_conf()
    vol = fixtures.make_volume(project=project)
    _limited(project, snapshots=2)
    for _ in range(2):
        fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol))
    with pytest.raises(exception.SnapshotLimitExceeded) as caught:
        fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol))
    assert caught.value.user_message() == (
        "SnapshotLimitExceeded: Maximum number of snapshots allowed (2) "
        "exceeded")
    assert _vol(vol.id).snapshot_count == 2


def test_snapshots_of_a_type_over_its_limit():
    project = "q-" + uuid.uuid4().hex
    conf = fixtures.make_conf()
    vtype = fixtures.make_type()
    vol = fixtures.make_volume(project=project, vtype=vtype)
    plain = fixtures.make_volume(project=project)
    _limited(project, **{"snapshots_" + vtype.name: 1})
    fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol, vtype.name))
    fixtures.make_snapshot(plain, check=_snapshot_check(conf, plain))
    with pytest.raises(exception.SnapshotLimitExceeded):
        fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol,
                                                          vtype.name))


def test_gigabytes_count_snapshots():
    project = "q-" + uuid.uuid4().hex
    conf = fixtures.make_conf()
    vtype = fixtures.make_type()
    vol = fixtures.make_volume(project=project, size=4, vtype=vtype)
    _limited(project, gigabytes=13, **{"gigabytes_" + vtype.name: 9})
    fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol, vtype.name))
    with pytest.raises(exception.VolumeSizeExceedsAvailableQuota) as caught:
        fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol,
                                                          vtype.name))
    assert "gigabytes_%s quota" % vtype.name in str(caught.value)
    assert "8G has been consumed" in str(caught.value)
    _limited(project, **{"gigabytes_" + vtype.name: -1})
    fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol, vtype.name))
    with pytest.raises(exception.VolumeSizeExceedsAvailableQuota) as caught:
        fixtures.make_snapshot(vol, check=_snapshot_check(conf, vol,
                                                          vtype.name))
    assert "allowed gigabytes quota" in str(caught.value)
    assert "12G has been consumed" in str(caught.value)
    # A new volume counts the snapshots' GiB too.
    change = quota.Change(vtype.name, volumes=1, gigabytes=2, size=2)
    with pytest.raises(exception.VolumeSizeExceedsAvailableQuota):
        volumes_db.volume_create(
            fixtures.admin(), dict(
                id=str(uuid.uuid4()), project_id=project, size=2,
                status="creating", attach_status="detached",
                volume_type_id=vtype.id),
            check=lambda session: quotas_db.enforce(
                session, conf, project, vtype.id, change))


def test_usage_counts_snapshots_per_type():
    project = "q-" + uuid.uuid4().hex
    vtype = fixtures.make_type()
    vol = fixtures.make_volume(project=project, size=3, vtype=vtype)
    plain = fixtures.make_volume(project=project, size=2)
    for _ in range(2):
        fixtures.make_snapshot(vol)
    fixtures.make_snapshot(plain)
    fixtures.make_snapshot(fixtures.make_volume(project="other", size=7))
    used = quotas_db.usage(fixtures.admin(), project)
    assert used == {
        "volumes": 2, "snapshots": 3, "gigabytes": 3 + 2 + 2 * 3 + 2,
        "groups": 0, "backups": 0, "backup_gigabytes": 0,
        "volumes_" + vtype.name: 1, "snapshots_" + vtype.name: 2,
        "gigabytes_" + vtype.name: 3 + 2 * 3,
        "volumes___DEFAULT__": 1, "snapshots___DEFAULT__": 1,
        "gigabytes___DEFAULT__": 2 + 2}
    assert quotas_db.usage(fixtures.admin(), "empty-" + project) == {
        "volumes": 0, "snapshots": 0, "gigabytes": 0, "groups": 0,
        "backups": 0, "backup_gigabytes": 0}


def test_racing_snapshots_never_exceed_the_limit():
    project = "q-" + uuid.uuid4().hex
    conf = fixtures.make_conf()
    vols = [fixtures.make_volume(project=project) for _ in range(3)]
    _limited(project, snapshots=4)
    results = fixtures.race(12, lambda i: fixtures.make_snapshot(
        vols[i % 3], check=_snapshot_check(conf, vols[i % 3])))
    made = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, Exception)]
    assert len(made) == 4, results
    assert all(isinstance(r, exception.SnapshotLimitExceeded)
               for r in refused), refused
    assert sum(_vol(v.id).snapshot_count for v in vols) == 4
