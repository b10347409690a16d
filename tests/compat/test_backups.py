"""Backups through unmodified ``cinder``, ``openstack`` and openstacksdk:
create (full and incremental), list, show, restore into a new volume,
delete, and a parent that outlives no child; update, reset-state, force
delete, and the export and import of a record."""

import sqlalchemy as sa

from common.db import models
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


def _made(cinder, ashlar, name: str) -> str:
    made = properties(cinder("backup-create", "--name", name,
                             state["volume"]).ok().stdout)
    _wait_backup(ashlar, made["id"], "available")
    wait_volume(ashlar, state["volume"], "available")
    return made["id"]


def test_cinder_backup_update_reset_state_and_force_delete(cinder, ashlar):
    bid = _made(cinder, ashlar, "c-admin")
    cinder("--os-volume-api-version", "3.43", "backup-update", "--name",
           "renamed", "--description", "d", "--metadata", "k=v", bid).ok()
    shown = properties(cinder("--os-volume-api-version", "3.43",
                              "backup-show", bid).ok().stdout)
    assert (shown["name"], shown["description"]) == ("renamed", "d")
    assert "'k': 'v'" in shown["metadata"]
    cinder("backup-reset-state", "--state", "error", bid).ok()
    assert _backup_status(ashlar, bid) == "error"
    refused = cinder("backup-reset-state", "--state", "creating", bid)
    assert refused.returncode != 0
    assert "valid statuses are" in refused.stdout + refused.stderr
    cinder("backup-reset-state", bid).ok()   # the default: available
    assert _backup_status(ashlar, bid) == "available"
    cinder("backup-reset-state", "--state", "error", bid).ok()
    cinder("backup-delete", "--force", bid).ok()
    _wait_backup(ashlar, bid, None)


def test_cinder_backup_export_and_import(cinder, ashlar):
    """Export, lose the row, import: the same backup, ``available`` again
    once the backup service checked its store, and restorable."""
    bid = _made(cinder, ashlar, "c-exported")
    record = properties(cinder("backup-export", bid).ok().stdout)
    assert record["backup_service"] == "drivers.backup.posix"
    _lose_row(ashlar, bid)
    imported = properties(cinder("backup-import", record["backup_service"],
                                 record["backup_url"]).ok().stdout)
    assert imported["id"] == bid
    _wait_backup(ashlar, bid, "available")
    shown = properties(cinder("backup-show", bid).ok().stdout)
    assert (shown["name"], shown["volume_id"]) == ("c-exported",
                                                   state["volume"])
    again = cinder("backup-import", record["backup_service"],
                   record["backup_url"])
    assert again.returncode != 0
    assert "already exists" in again.stdout + again.stderr
    cinder("backup-delete", bid).ok()
    _wait_backup(ashlar, bid, None)


def _lose_row(ashlar, backup_id: str) -> None:
    """The database loses the backup's row; the store keeps its data."""
    engine = sa.create_engine(ashlar.deployment.db_url)
    try:
        with engine.begin() as conn:
            conn.execute(models.BackupMetadata.__table__.delete().where(
                models.BackupMetadata.backup_id == backup_id))
            conn.execute(models.Backup.__table__.delete().where(
                models.Backup.id == backup_id))
    finally:
        engine.dispose()


def test_openstack_backup_set_record_and_force_delete(openstack, cinder,
                                                     ashlar):
    made = openstack("volume", "backup", "create", "--name", "o-admin",
                     state["volume"], "-f", "json")
    bid = made["id"]
    _wait_backup(ashlar, bid, "available")
    wait_volume(ashlar, state["volume"], "available")
    openstack("--os-volume-api-version", "3.9", "volume", "backup", "set",
              "--name", "o-renamed", "--description", "od", bid,
              parse=False).ok()
    shown = openstack("volume", "backup", "show", bid, "-f", "json")
    assert (shown["name"], shown["description"]) == ("o-renamed", "od")
    openstack("volume", "backup", "set", "--state", "error", bid,
              parse=False).ok()
    assert _backup_status(ashlar, bid) == "error"
    refused = openstack("volume", "backup", "record", "export", bid,
                        "-f", "json", parse=False)
    assert refused.returncode != 0
    assert "must be available and not error" in refused.stderr
    openstack("volume", "backup", "set", "--state", "available", bid,
              parse=False).ok()
    record = openstack("volume", "backup", "record", "export", bid,
                       "-f", "json")
    assert set(record) == {"backup_service", "backup_url"}
    _lose_row(ashlar, bid)
    # NOTE: openstacksdk 4.22's Backup.import_record posts to
    # /backups/export_record, with that path as the backup_url (it reuses
    # the name ``url``): Cinder answers it 404 too, and nothing is made.
    broken = openstack("volume", "backup", "record", "import",
                       record["backup_service"], record["backup_url"],
                       "-f", "json", parse=False)
    assert broken.returncode != 0
    assert "/v3/backups/export_record" in broken.stderr
    assert _backup_status(ashlar, bid) is None
    imported = properties(cinder("backup-import", record["backup_service"],
                                 record["backup_url"]).ok().stdout)
    assert imported["id"] == bid
    _wait_backup(ashlar, bid, "available")
    openstack("volume", "backup", "delete", "--force", bid, parse=False).ok()
    _wait_backup(ashlar, bid, None)
