"""Generic volume groups through unmodified ``cinder`` and ``openstack``:
a group type with specs, a group of volumes, a group snapshot (one
snapshot of each volume, made by the volume service), a group made from
it, and the deletes, on the real services over RabbitMQ and PostgreSQL."""

from deploy.testbed import harness
from tests.compat.conftest import (
    PROJECT,
    properties,
    rows,
    wait_volume,
)

V = ("--os-volume-api-version", "3.14")


def _status(ashlar, path: str, key: str) -> str | None:
    resp = harness.Client(ashlar.endpoint, version="3.14",
                          token="admin:" + PROJECT).get(path)
    return None if resp.status_code == 404 else resp.json()[key]["status"]


def _wait(ashlar, path: str, key: str, wanted: str | None) -> None:
    harness.wait_for(lambda: _status(ashlar, path, key) == wanted,
                     timeout=60, what="%s to be %s" % (path, wanted))


def test_cinder_groups_snapshots_and_copies(cinder, ashlar):
    gtype = rows(cinder(*V, "group-type-create", "gt-cli").ok().stdout)[0]
    cinder(*V, "group-type-key", gtype["ID"], "set",
           "consistent_group_snapshot_enabled=<is> False").ok()
    vtype = rows(cinder("type-create", "vt-group").ok().stdout)[0]
    group = properties(cinder(*V, "group-create", "--name", "g-cli",
                              gtype["ID"], vtype["ID"]).ok().stdout)
    _wait(ashlar, "/groups/" + group["id"], "group", "available")
    volumes = [properties(cinder(*V, "create", "--group-id", group["id"],
                                 "--volume-type", vtype["ID"], "--name",
                                 "member%d" % i, "1").ok().stdout)["id"]
               for i in range(2)]
    for volume_id in volumes:
        wait_volume(ashlar, volume_id, "available")
    shown = properties(cinder(*V, "show", volumes[0]).ok().stdout)
    assert shown["group_id"] == group["id"]
    refused = cinder(*V, "delete", volumes[0])
    assert refused.returncode != 0 and "belong to a group" in refused.stdout

    gsnap = properties(cinder(*V, "group-snapshot-create", "--name", "gs",
                              group["id"]).ok().stdout)
    _wait(ashlar, "/group_snapshots/" + gsnap["id"], "group_snapshot",
          "available")
    members = [r for r in rows(cinder(*V, "snapshot-list").ok().stdout)
               if r["Volume ID"] in volumes]
    assert sorted(r["Volume ID"] for r in members) == sorted(volumes)
    assert {r["Status"] for r in members} == {"available"}

    copy = properties(cinder(*V, "group-create-from-src", "--group-snapshot",
                             gsnap["id"], "--name", "g-copy").ok().stdout)
    _wait(ashlar, "/groups/" + copy["id"], "group", "available")
    copies = [r["ID"] for r in rows(cinder(
        *V, "list", "--group_id", copy["id"]).ok().stdout)]
    assert len(copies) == 2
    for volume_id in copies:
        wait_volume(ashlar, volume_id, "available")

    cinder(*V, "group-update", group["id"], "--remove-volumes",
           volumes[1]).ok()
    assert properties(cinder(*V, "show", volumes[1]).ok().stdout)[
        "group_id"] in ("None", "")
    cinder(*V, "group-delete", "--delete-volumes", copy["id"]).ok()
    _wait(ashlar, "/groups/" + copy["id"], "group", None)
    cinder(*V, "group-snapshot-delete", gsnap["id"]).ok()
    _wait(ashlar, "/group_snapshots/" + gsnap["id"], "group_snapshot", None)
    cinder(*V, "group-delete", "--delete-volumes", group["id"]).ok()
    _wait(ashlar, "/groups/" + group["id"], "group", None)
    wait_volume(ashlar, volumes[0], None)
    cinder("delete", volumes[1]).ok()
    wait_volume(ashlar, volumes[1], None)
    cinder(*V, "group-type-delete", gtype["ID"]).ok()
    cinder("type-delete", vtype["ID"]).ok()


def test_openstack_manages_group_types_and_groups(openstack, ashlar):
    v = ("--os-volume-api-version", "3.13")
    gtype = openstack(*v, "volume", "group", "type", "create", "gt-osc",
                      "-f", "json")
    listed = openstack(*v, "volume", "group", "type", "list", "-f", "json")
    assert gtype["ID"] in [row["ID"] for row in listed]
    group = openstack(*v, "volume", "group", "create", "--volume-group-type",
                      gtype["ID"], "--volume-type", "__DEFAULT__",
                      "--name", "g-osc", "-f", "json")
    _wait(ashlar, "/groups/" + group["ID"], "group", "available")
    shown = openstack(*v, "volume", "group", "show", group["ID"], "-f",
                      "json")
    assert (shown["Name"], shown["Status"]) == ("g-osc", "available")
    openstack(*v, "volume", "group", "delete", group["ID"],
              parse=False).ok()
    _wait(ashlar, "/groups/" + group["ID"], "group", None)
    openstack(*v, "volume", "group", "type", "delete", gtype["ID"],
              parse=False).ok()
