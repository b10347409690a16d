"""Manage and unmanage through the api (Cinder's os-volume-manage,
manageable_volumes, os-unmanage and their snapshot twins), the volume
node's side run in process on the same fake driver."""

import json

import pytest

from common import constants
from common.db.api import quotas as quotas_db
from common.db.api import services as services_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.volume import manage
from services.volume import resume

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
    from tests.unit.volume import conftest as volume_conftest
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures
    from volume import conftest as volume_conftest

HOST = apitest.HOST + "#b1"
MEMBER = {"token": "m:p1", "roles": "member"}


@pytest.fixture
def api(api):
    services_db.service_register(fixtures.admin(), apitest.HOST,
                                 constants.VOLUME_BINARY,
                                 constants.VOLUME_TOPIC, "nova")
    api.driver.unmanaged.update({"disk-a": 3, "disk-b": 1,
                                 "snapshot-loose": 1})
    return api


@pytest.fixture
def node(api):
    """The volume node's manager, on the api's fake driver."""
    mgr = volume_conftest.make_manager()
    mgr.driver = mgr.here.driver = api.driver
    mgr.snapshots.driver = api.driver
    return mgr


def _manage(api, ref, **body):
    kwargs = {k: body.pop(k) for k in ("token", "roles", "version")
              if k in body}
    return api.call("POST", body.pop("path", "/os-volume-manage"),
                    {"volume": {"host": HOST, "ref": ref, **body}}, **kwargs)


def _casts(api, name):
    return [args for cast, args in api.rpc.casts if cast == name]


def _usage(project="p1"):
    return quotas_db.usage(fixtures.admin(), project)


def test_manage_adopts_with_the_size_and_charges_quota(api, node):
    resp = _manage(api, {"source-name": "disk-a"}, name=" m1 ",
                   bootable=True, metadata={"k": "v"})
    assert resp.status_code == 202, resp.json
    body = resp.json["volume"]
    assert (body["status"], body["size"], body["name"], body["bootable"],
            body["metadata"]) == ("creating", 3, "m1", "true", {"k": "v"})
    row = volumes_db.volume_get(fixtures.admin(), body["id"])
    assert (row.status, row.host, row.availability_zone) == (
        "managing", HOST, "nova")
    ((ctxt, vid, host, ref),) = _casts(api, "manage_existing")
    assert (vid, host, ref) == (body["id"], apitest.HOST,
                                {"source-name": "disk-a"})
    usage = _usage()
    assert (usage["volumes"], usage["gigabytes"]) == (1, 3)
    node.manage_existing(fixtures.admin(), vid, ref)
    shown = api.show_volume(vid)
    assert (shown["status"], shown["size"]) == ("available", 3)
    assert api.driver.volumes[vid] == 3 and "disk-a" not in \
        api.driver.unmanaged


def test_manage_refuses_a_missing_ref_and_an_ashlar_volume(api):
    resp = _manage(api, {"source-name": "nope"})
    assert resp.status_code == 400
    assert "invalid backend reference" in apitest.message(resp)
    vid = api.volume()
    resp = _manage(api, {"source-name": "volume-%s" % vid})
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid volume: Unable to manage existing volume. The volume is "
        "already managed")
    assert [row.id for row in volumes_db.volume_list(fixtures.admin())] \
        == [vid]


def test_manage_needs_a_host_a_live_backend_and_an_admin(api):
    resp = api.call("POST", "/os-volume-manage",
                    {"volume": {"ref": {"source-name": "disk-a"}}})
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid input received: One and only one of cluster and host must "
        "be set.")
    resp = api.call("POST", "/os-volume-manage",
                    {"volume": {"ref": {"source-name": "disk-a"}}},
                    version="volume 3.0")
    assert apitest.message(resp) == (
        "Invalid input received: Host field is missing.")
    assert _manage(api, {"source-name": "disk-a"},
                   host="other@b1").status_code == 503
    assert _manage(api, {"source-name": "disk-a"}, **MEMBER
                   ).status_code == 403
    assert _manage(api, {"source-name": "disk-a"},
                   volume_type="nope").status_code == 400


def test_manageable_volumes_list_pages_and_marks_managed_ones(api):
    vid = api.volume()
    api.driver.volumes[vid] = 1
    resp = api.call("GET", "/manageable_volumes/detail?host=" + HOST)
    assert resp.status_code == 200, resp.json
    entries = resp.json["manageable-volumes"]
    assert [e["reference"]["source-name"] for e in entries] == [
        "volume-" + vid, "snapshot-loose", "disk-b", "disk-a"]
    mine = entries[0]
    assert (mine["safe_to_manage"], mine["reason_not_safe"],
            mine["cinder_id"]) == (False, "already managed", vid)
    assert entries[-1] == {"reference": {"source-name": "disk-a"},
                           "size": 3, "safe_to_manage": True,
                           "reason_not_safe": None, "cinder_id": None,
                           "extra_info": None}
    resp = api.call("GET", "/manageable_volumes?host=%s&sort=size:asc,"
                    "reference:asc&limit=2" % HOST)
    assert [e["reference"]["source-name"] for e in
            resp.json["manageable-volumes"]] == ["disk-b", "snapshot-loose"]
    assert set(resp.json["manageable-volumes"][0]) == {
        "reference", "size", "safe_to_manage"}
    marker = json.dumps({"source-name": "disk-b"})
    resp = api.call("GET", "/os-volume-manage?host=%s&sort_dir=asc&marker=%s"
                    % (HOST, marker))
    assert [e["reference"]["source-name"] for e in
            resp.json["manageable-volumes"]] == [
        "snapshot-loose", "volume-" + vid]


def test_manageable_listing_rules(api):
    assert api.call("GET", "/manageable_volumes").status_code == 400
    assert api.call("GET", "/manageable_volumes?host=" + HOST,
                    version="volume 3.7").status_code == 404
    assert api.call("GET", "/os-volume-manage?host=" + HOST,
                    version="volume 3.0").status_code == 200
    assert api.call("GET", "/manageable_volumes?host=%s&sort=name" % HOST
                    ).status_code == 400
    assert api.call("GET", "/manageable_volumes?host=" + HOST,
                    **MEMBER).status_code == 403
    assert api.call("GET", "/manageable_volumes?host=x@y"
                    ).status_code == 404


def test_unmanage_forgets_the_row_and_keeps_the_storage(api, node):
    vid = api.volume(size=2)
    api.driver.volumes[vid] = 2
    before = _usage()
    resp = api.action(vid, {"os-unmanage": None})
    assert resp.status_code == 202 and resp.text == ""
    assert api.show_volume(vid)["status"] == "deleting"
    ((ctxt, unmanaged, host),) = _casts(api, "unmanage_volume")
    assert (unmanaged, host) == (vid, HOST)
    node.unmanage_volume(fixtures.admin(), vid)
    assert api.call("GET", "/volumes/" + vid).status_code == 404
    assert api.driver.unmanaged["volume-" + vid] == 2
    after = _usage()
    assert (before["volumes"] - after["volumes"],
            before["gigabytes"] - after["gigabytes"]) == (1, 2)
    # Storage unmanaged is manageable again, under its own name.
    assert _manage(api, {"source-name": "volume-" + vid}
                   ).status_code == 202


@pytest.mark.parametrize("kwargs", [{"status": "in-use"},
                                    {"attachment_count": 1},
                                    {"snapshot_count": 1}])
def test_unmanage_is_refused_as_a_delete_is(api, kwargs):
    vid = api.volume(**kwargs)
    resp = api.action(vid, {"os-unmanage": {}})
    assert resp.status_code == 400
    assert apitest.message(resp).startswith("Invalid volume: Volume status "
                                            "must be available")
    assert api.action(api.volume(), {"os-unmanage": {}},
                      **MEMBER).status_code == 403


def test_snapshot_manage_and_unmanage(api, node):
    vid = api.volume()
    api.driver.volumes[vid] = 1
    resp = api.call("POST", "/manageable_snapshots", {"snapshot": {
        "volume_id": vid, "ref": {"source-name": "snapshot-loose"},
        "name": "s1"}})
    assert resp.status_code == 202, resp.json
    sid = resp.json["snapshot"]["id"]
    assert resp.json["snapshot"]["status"] == "creating"
    ((ctxt, cast_sid, host, ref),) = _casts(api, "manage_existing_snapshot")
    node.manage_existing_snapshot(fixtures.admin(), cast_sid, ref)
    row = snapshots_db.snapshot_get(fixtures.admin(), sid)
    assert row.status == "available" and api.driver.snapshots[sid] == (vid, 1)
    listed = api.call("GET", "/manageable_snapshots/detail?host=" + HOST
                      ).json["manageable-snapshots"]
    assert listed == [{"reference": {"source-name": "snapshot-" + sid},
                       "size": 1, "safe_to_manage": False,
                       "reason_not_safe": "already managed",
                       "cinder_id": sid, "extra_info": None,
                       "source_reference": {"source-id": vid}}]
    resp = api.call("POST", "/snapshots/%s/action" % sid,
                    {"os-unmanage": None})
    assert resp.status_code == 202
    ((ctxt, cast_sid, host),) = _casts(api, "unmanage_snapshot")
    node.unmanage_snapshot(fixtures.admin(), cast_sid)
    assert api.call("GET", "/snapshots/" + sid).status_code == 404
    assert api.driver.unmanaged["snapshot-" + sid] == 1
    assert volumes_db.volume_get(fixtures.admin(), vid).snapshot_count == 0


def test_snapshot_manage_refuses_a_missing_ref(api):
    resp = api.call("POST", "/os-snapshot-manage", {"snapshot": {
        "volume_id": api.volume(), "ref": {"source-name": "nope"}}})
    assert resp.status_code == 400
    assert snapshots_db.snapshot_list(fixtures.admin()) == []


def test_a_failed_adoption_is_an_error(api, node):
    body = _manage(api, {"source-name": "disk-b"}).json["volume"]
    del api.driver.unmanaged["disk-b"]  # gone meanwhile
    node.manage_existing(fixtures.admin(), body["id"],
                         {"source-name": "disk-b"})
    row = volumes_db.volume_get(fixtures.admin(), body["id"])
    assert row.status == "error_managing"
    assert api.show_volume(body["id"])["status"] == "error"
    assert api.call("DELETE", "/volumes/" + body["id"]).status_code == 202


def test_node_listing_drops_what_no_row_names(api):
    entries = manage.manageable(api.rpc.attacher, fixtures.admin(), False)
    assert all(e["cinder_id"] is None for e in entries)


def test_the_sweep_never_takes_a_manage_for_a_create_or_a_delete(api, node):
    """A create resumed on a ``managing`` row would make a blank volume, a
    delete resumed on an ``unmanaging`` one would remove the storage: the
    sweep drops an unmanaging row only, and leaves a young manage to its
    message."""
    managing = _manage(api, {"source-name": "disk-a"}).json["volume"]["id"]
    vid = api.volume()
    assert api.action(vid, {"os-unmanage": None}).status_code == 202
    resume.finish_interrupted_work(node)
    assert [(row.id, row.status) for row in volumes_db.volume_list(
        fixtures.admin())] == [(managing, "managing")]
    assert api.driver.unmanaged["volume-" + vid] == 1
    assert managing not in api.driver.volumes


@pytest.mark.parametrize("adopted, after", [(True, "available"),
                                            (False, "error_managing")])
def test_a_lost_manage_ends_once_older_than_an_rpc_timeout(
        api, node, adopted, after, monkeypatch):
    vid = _manage(api, {"source-name": "disk-a"}).json["volume"]["id"]
    if adopted:
        api.driver.volumes[vid] = 3
    monkeypatch.setattr(resume, "_older", lambda row, seconds: True)
    resume.finish_interrupted_work(node)
    assert volumes_db.volume_get(fixtures.admin(), vid).status == after


def test_a_host_without_a_pool_gets_the_backends_pool(api, node):
    body = _manage(api, {"source-name": "disk-b"},
                   host=apitest.HOST).json["volume"]
    assert volumes_db.volume_get(fixtures.admin(), body["id"]).host == \
        apitest.HOST
    node.manage_existing(fixtures.admin(), body["id"],
                         {"source-name": "disk-b"})
    row = volumes_db.volume_get(fixtures.admin(), body["id"])
    assert (row.status, row.host) == ("available", HOST)


def test_a_pin_below_1_9_refuses_before_anything_changes(api):
    """``[upgrade_levels] ashlar_volume`` below 1.9 (older volume nodes):
    a 503 before any row is written or changed."""
    api.rpc.cap = "1.8"
    vid = api.volume()
    assert _manage(api, {"source-name": "disk-a"}).status_code == 503
    assert api.action(vid, {"os-unmanage": None}).status_code == 503
    assert api.call("GET", "/manageable_volumes?host=" + HOST
                    ).status_code == 503
    assert [(row.id, row.status) for row in volumes_db.volume_list(
        fixtures.admin())] == [(vid, "available")]
    assert api.rpc.casts == []
