"""Groups and group snapshots in the database: members that finish or go
at once still settle their group snapshot and their group exactly once
(run on PostgreSQL and MariaDB too, by
``tests/functional/test_unit_db_on_servers.py``)."""

import json
import uuid

import pytest

from common import exception
from common.db.api import group_snapshots as gsnaps_db
from common.db.api import group_types as gtypes_db
from common.db.api import groups as groups_db
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database
N = 6


def _group(status="available"):
    ctxt = fixtures.admin()
    gtype = gtypes_db.gtype_create(ctxt, {
        "id": str(uuid.uuid4()), "name": str(uuid.uuid4()),
        "is_public": True}, {})
    vtype = types_db.type_get_by_name(ctxt, "__DEFAULT__")
    return groups_db.group_create(ctxt, {
        "id": str(uuid.uuid4()), "project_id": "p1", "status": status,
        "group_type_id": gtype.id}, [vtype.id], lambda session: None)


def _members(group, n):
    volumes = [fixtures.make_volume(group_id=group.id) for _ in range(n)]
    members = [({"id": str(uuid.uuid4()), "volume_id": vol.id,
                 "project_id": "p1", "status": "creating",
                 "volume_size": vol.size}, {"status": "available"},
                lambda session: None) for vol in volumes]
    return volumes, gsnaps_db.gsnap_create(fixtures.admin(), {
        "id": str(uuid.uuid4()), "group_id": group.id, "project_id": "p1",
        "status": "creating", "group_type_id": group.group_type_id},
        members)


def _finish(snap, status="available"):
    return snapshots_db.snapshot_cas(
        fixtures.admin(), snap.id, {"status": snap.status},
        {"status": status}, check=gsnaps_db.lock(snap.group_snapshot_id),
        then=gsnaps_db.settle(snap.group_snapshot_id))


def test_members_finishing_at_once_make_the_group_snapshot_available():
    _volumes, gsnap = _members(_group(), N)
    snaps = gsnaps_db.members(fixtures.admin(), gsnap.id)
    assert fixtures.race(N, lambda i: _finish(snaps[i]), errors=False) == \
        [True] * N
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap.id).status == \
        "available"


def test_one_failed_member_fails_it_and_the_last_removal_removes_it():
    _volumes, gsnap = _members(_group(), 2)
    first, second = gsnaps_db.members(fixtures.admin(), gsnap.id)
    assert _finish(first)
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap.id).status == \
        "creating"
    assert _finish(second, "error")
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap.id).status == "error"
    assert sorted(s.id for s in gsnaps_db.gsnap_delete(
        fixtures.admin(), gsnap.id)) == sorted([first.id, second.id])
    fixtures.race(2, lambda i: snapshots_db.snapshot_destroy(
        fixtures.admin(), (first, second)[i].id,
        check=gsnaps_db.lock(gsnap.id), then=gsnaps_db.settle(gsnap.id)),
        errors=False)
    assert gsnaps_db.members(fixtures.admin(), gsnap.id) == []
    assert gsnaps_db.gsnap_list(fixtures.admin()) == []


def test_volumes_removed_at_once_remove_their_deleting_group():
    group = _group()
    volumes = [fixtures.make_volume(group_id=group.id) for _ in range(N)]
    assert len(groups_db.group_delete(fixtures.admin(), group.id, {},
                                      True)) == N
    fixtures.race(N, lambda i: volumes_db.volume_destroy(
        fixtures.admin(), volumes[i].id), errors=False)
    assert groups_db.group_list(fixtures.admin()) == []


def test_a_refused_group_delete_changes_nothing():
    group = _group()
    kept = fixtures.make_volume(group_id=group.id, attachment_count=1)
    free = fixtures.make_volume(group_id=group.id)
    with pytest.raises(exception.InvalidGroup, match="is attached"):
        groups_db.group_delete(fixtures.admin(), group.id, {}, True)
    assert groups_db.group_get(fixtures.admin(), group.id).status == \
        "available"
    assert {v.status for v in (volumes_db.volume_get(fixtures.admin(), kept.id),
                               volumes_db.volume_get(fixtures.admin(),
                                                     free.id))} == {
        "available"}


def test_group_specs_merge_and_remove():
    ctxt = fixtures.admin()
    gtype = gtypes_db.gtype_create(ctxt, {"id": str(uuid.uuid4()),
                                          "name": "t", "is_public": True},
                                   {"a": "1"})
    assert gtypes_db.specs_update(ctxt, gtype.id, {"b": "2"}) == {
        "a": "1", "b": "2"}
    assert gtypes_db.specs_update(ctxt, gtype.id, {}, delete_key="a") == {
        "b": "2"}
    assert json.loads(gtypes_db.gtype_get(ctxt, gtype.id).group_specs) == {
        "b": "2"}
