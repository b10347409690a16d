"""Backups through unmodified ``cinder``, ``openstack`` and openstacksdk:
create (full and incremental), list, show, restore into a new volume,
delete, and a parent that outlives no child."""


from deploy.testbed import harness
from tests.compat.conftest import (
    PROJECT,
    properties,
    rows,
    wait_volume,
)

state: dict = {}


def _backup_status(ashlar, backup_id: str) -> str | None:
    resp = ashlar.http("admin:" + PROJECT).get("/backups/%s" % backup_id)
    return None if resp.status_code == 404 else \
        resp.json()["backup"]["status"]


def _wait_backup(ashlar, backup_id: str, status: str | None) -> None:
    harness.wait_for(lambda: _backup_status(ashlar, backup_id) == status,
                     timeout=120, what="backup %s %s" % (backup_id, status))


def test_cinder_backup_create_incremental_list_show(cinder, ashlar):
    volume = properties(cinder("create", "--name", "bk-src", "1").ok().stdout)
    wait_volume(ashlar, volume["id"], "available")
    state["volume"] = volume["id"]
    full = properties(cinder("backup-create", "--name", "b-full",
                             volume["id"]).ok().stdout)
    assert (full["name"], full["volume_id"]) == ("b-full", volume["id"])
    _wait_backup(ashlar, full["id"], "available")
    incr = properties(cinder("backup-create", "--incremental", "--name",
                             "b-incr", volume["id"]).ok().stdout)
    _wait_backup(ashlar, incr["id"], "available")
    state.update(full=full["id"], incr=incr["id"])
    listed = {r["ID"]: (r["Status"], r["Name"]) for r in
              rows(cinder("backup-list").ok().stdout)}
    assert listed[full["id"]] == ("available", "b-full")
    assert listed[incr["id"]] == ("available", "b-incr")
    shown = properties(cinder("backup-show", incr["id"]).ok().stdout)
    assert (shown["is_incremental"], shown["size"], shown["volume_id"]) == (
        "True", "1", volume["id"])
    assert properties(cinder("backup-show", full["id"]).ok().stdout)[
        "has_dependent_backups"] == "True"
    wait_volume(ashlar, volume["id"], "available")  # out of backing-up


def test_cinder_backup_restore_into_a_new_volume(cinder, ashlar):
    restored = properties(cinder("backup-restore", "--name", "from-backup",
                                 state["incr"]).ok().stdout)
    assert restored["backup_id"] == state["incr"]
    wait_volume(ashlar, restored["volume_id"], "available")
    _wait_backup(ashlar, state["incr"], "available")
    shown = ashlar.http("admin:" + PROJECT).get(
        "/volumes/%s" % restored["volume_id"]).json()["volume"]
    assert (shown["name"], shown["size"]) == ("from-backup", 1)
    state["restored"] = restored["volume_id"]


def test_cinder_backup_delete_parent_after_child(cinder, ashlar):
    refused = cinder("backup-delete", state["full"])
    assert refused.returncode != 0
    assert "incremental backups exist" in (
        refused.stdout + refused.stderr).lower()
    assert _backup_status(ashlar, state["full"]) == "available"
    cinder("backup-delete", state["incr"]).ok()
    _wait_backup(ashlar, state["incr"], None)
    cinder("backup-delete", state["full"]).ok()
    _wait_backup(ashlar, state["full"], None)


def test_openstack_volume_backup_commands(openstack, ashlar):
    made = openstack("volume", "backup", "create", "--name", "o-bk",
                     state["volume"], "-f", "json")
    _wait_backup(ashlar, made["id"], "available")
    listed = openstack("volume", "backup", "list", "-f", "json")
    assert [(b["Name"], b["Status"]) for b in listed
            if b["ID"] == made["id"]] == [("o-bk", "available")]
    shown = openstack("volume", "backup", "show", made["id"], "-f", "json")
    assert (shown["name"], shown["volume_id"]) == ("o-bk", state["volume"])
    openstack("volume", "backup", "delete", made["id"], parse=False).ok()
    _wait_backup(ashlar, made["id"], None)


def test_openstacksdk_backup_calls(bs, ashlar):
    made = bs.create_backup(volume_id=state["restored"], name="sdk-bk")
    _wait_backup(ashlar, made.id, "available")
    got = bs.get_backup(made.id)
    assert (got.name, got.volume_id, got.status) == (
        "sdk-bk", state["restored"], "available")
    assert made.id in [b.id for b in bs.backups()]
    bs.delete_backup(made.id)
    _wait_backup(ashlar, made.id, None)
