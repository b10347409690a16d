"""Snapshots and clones through unmodified ``cinder`` and ``openstack``:
snapshot create/list/show/metadata/delete, volumes made from a snapshot
and from a volume, revert to the latest snapshot (3.40)."""

from deploy.testbed import harness
from tests.compat.conftest import (
    PROJECT,
    properties,
    rows,
    wait_volume,
)

state: dict = {}


def _wait_snapshot(ashlar, snapshot_id, status, project=PROJECT):
    client = harness.Client(ashlar.endpoint, token="admin:" + project)

    def now():
        resp = client.get("/snapshots/%s" % snapshot_id)
        found = None if resp.status_code == 404 else \
            resp.json()["snapshot"]["status"]
        return found == status
    harness.wait_for(now, timeout=60, what="snapshot %s %s" % (snapshot_id,
                                                               status))


def test_cinder_snapshot_create_list_show(cinder, ashlar):
    volume = properties(cinder("create", "--name", "snap-src", "1").ok().stdout)
    wait_volume(ashlar, volume["id"], "available")
    state["volume"] = volume["id"]
    snap = properties(cinder("snapshot-create", "--name", "s1",
                             "--metadata", "k=v", volume["id"]).ok().stdout)
    assert (snap["status"], snap["name"], snap["volume_id"], snap["size"]) == (
        "creating", "s1", volume["id"], "1")
    _wait_snapshot(ashlar, snap["id"], "available")
    state["snapshot"] = snap["id"]
    listed = rows(cinder("snapshot-list").ok().stdout)
    assert [(r["ID"], r["Status"], r["Name"]) for r in listed
            if r["ID"] == snap["id"]] == [(snap["id"], "available", "s1")]
    shown = properties(cinder("snapshot-show", "s1").ok().stdout)
    assert shown["metadata"] == "{'k': 'v'}"
    assert shown["os-extended-snapshot-attributes:progress"] == "100%"


def test_cinder_snapshot_metadata_and_rename(cinder):
    cinder("snapshot-metadata", "s1", "set", "a=1").ok()
    shown = rows(cinder("snapshot-metadata-show", "s1").ok().stdout)
    assert {r["Metadata-property"]: r["Value"] for r in shown} == {
        "a": "1", "k": "v"}
    cinder("snapshot-rename", "s1", "s1b").ok()
    assert properties(cinder("snapshot-show", state["snapshot"]).ok(
        ).stdout)["name"] == "s1b"


def test_cinder_create_from_snapshot_and_from_volume(cinder, ashlar):
    made = properties(cinder("create", "--snapshot-id", state["snapshot"],
                             "--name", "from-snap").ok().stdout)
    assert (made["snapshot_id"], made["size"]) == (state["snapshot"], "1")
    clone = properties(cinder("create", "--source-volid", state["volume"],
                              "--name", "clone", "2").ok().stdout)
    assert (clone["source_volid"], clone["size"]) == (state["volume"], "2")
    for volume_id in (made["id"], clone["id"]):
        wait_volume(ashlar, volume_id, "available")
        cinder("delete", volume_id).ok()
    smaller = cinder("create", "--snapshot-id", state["snapshot"], "0")
    assert smaller.returncode != 0


def test_cinder_revert_and_delete(cinder, ashlar):
    refused = cinder("delete", state["volume"])
    assert "status must be available" in refused.stderr + refused.stdout
    cinder("--os-volume-api-version", "3.40", "revert-to-snapshot",
           state["snapshot"]).ok()
    wait_volume(ashlar, state["volume"], "available")
    cinder("snapshot-delete", state["snapshot"]).ok()
    _wait_snapshot(ashlar, state["snapshot"], None)
    cinder("delete", state["volume"]).ok()
    wait_volume(ashlar, state["volume"], None)


def test_openstack_volume_snapshot_and_sources(openstack, ashlar):
    volume = openstack("volume", "create", "--size", "1", "osc-src",
                       "-f", "json")
    wait_volume(ashlar, volume["id"], "available", project="admin")
    snap = openstack("volume", "snapshot", "create", "--volume", "osc-src",
                     "--property", "p=q", "osc-s", "-f", "json")
    _wait_snapshot(ashlar, snap["id"], "available", project="admin")
    listed = openstack("volume", "snapshot", "list", "-f", "json")
    assert [s["Status"] for s in listed if s["ID"] == snap["id"]] == [
        "available"]
    openstack("volume", "snapshot", "set", "--name", "osc-s2", snap["id"],
              parse=False).ok()
    shown = openstack("volume", "snapshot", "show", snap["id"], "-f", "json")
    assert (shown["name"], shown["properties"]) == ("osc-s2", {"p": "q"})
    made = openstack("volume", "create", "--snapshot", snap["id"],
                     "osc-from-snap", "-f", "json")
    clone = openstack("volume", "create", "--source", "osc-src", "--size",
                      "2", "osc-clone", "-f", "json")
    assert made["snapshot_id"] == snap["id"]
    assert clone["source_volid"] == volume["id"]
    for made_id in (made["id"], clone["id"]):
        wait_volume(ashlar, made_id, "available", project="admin")
        openstack("volume", "delete", made_id, parse=False).ok()
    openstack("volume", "snapshot", "delete", snap["id"], parse=False).ok()
    _wait_snapshot(ashlar, snap["id"], None, project="admin")


def test_cinder_deletes_a_volume_with_its_snapshots_by_cascade(cinder,
                                                               ashlar):
    volume = properties(cinder("create", "--name", "cascaded", "1").ok()
                        .stdout)
    wait_volume(ashlar, volume["id"], "available")
    snaps = [properties(cinder("snapshot-create", volume["id"]).ok()
                        .stdout)["id"] for _ in range(2)]
    for snapshot_id in snaps:
        _wait_snapshot(ashlar, snapshot_id, "available")
    refused = cinder("delete", volume["id"])
    assert refused.returncode != 0
    cinder("delete", "--cascade", volume["id"]).ok()
    wait_volume(ashlar, volume["id"], None)
    for snapshot_id in snaps:
        _wait_snapshot(ashlar, snapshot_id, None)
