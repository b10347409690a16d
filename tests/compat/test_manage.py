"""Manage and unmanage through unmodified ``cinder`` and ``openstack``:
``manageable-list``, ``manage``, ``unmanage``, ``snapshot-manage``,
``snapshot-unmanage`` and ``openstack volume create --remote-source``, on
files made in the file backend's folder."""

import os

from deploy.testbed import harness
from tests.compat.conftest import (
    PROJECT,
    VOLUME_HOST,
    properties,
    rows,
    wait_volume,
)

HOST = VOLUME_HOST + "@file#file"


def _folder(ashlar):
    return ashlar.deployment.tmp / ("state-" + VOLUME_HOST) / "volumes"


def _make(ashlar, name: str, size: int = 2**20) -> None:
    with open(_folder(ashlar) / name, "wb") as stream:
        stream.write(b"made outside Ashlar")
        stream.truncate(size)


def _snapshot_status(ashlar, snapshot_id: str) -> str | None:
    resp = ashlar.http("admin:" + PROJECT).get("/snapshots/" + snapshot_id)
    return None if resp.status_code == 404 else \
        resp.json()["snapshot"]["status"]


def test_cinder_manageable_list_manage_and_unmanage(cinder, ashlar):
    _make(ashlar, "cli-disk.img", size=2**30 + 1)
    listed = {r["reference"]: r for r in rows(cinder(
        "--os-volume-api-version", "3.8", "manageable-list", HOST
    ).ok().stdout)}
    entry = next(r for ref, r in listed.items() if "cli-disk.img" in ref)
    assert (entry["size"], entry["safe_to_manage"], entry["cinder_id"]) == (
        "2", "True", "-")
    volume = properties(cinder("manage", "--name", "cli-managed",
                               "--metadata", "k=v", HOST,
                               "cli-disk.img").ok().stdout)
    assert (volume["name"], volume["size"]) == ("cli-managed", "2")
    wait_volume(ashlar, volume["id"], "available")
    assert not (_folder(ashlar) / "cli-disk.img").exists()
    refused = cinder("manage", HOST, "no-such-file.img")
    assert refused.returncode != 0 and "400" in refused.stderr
    cinder("unmanage", volume["id"]).ok()
    wait_volume(ashlar, volume["id"], None)
    left = _folder(ashlar) / ("volume-%s.raw" % volume["id"])
    assert left.stat().st_size == 2**30 + 1
    listed = rows(cinder("--os-volume-api-version", "3.8", "manageable-list",
                         "--detailed", "false", HOST).ok().stdout)
    assert any(left.name in r["reference"] and r["safe_to_manage"] == "True"
               for r in listed)
    os.unlink(left)


def test_cinder_snapshot_manage_and_unmanage(cinder, ashlar):
    volume = properties(cinder("create", "--name", "snap-host", "1"
                               ).ok().stdout)
    wait_volume(ashlar, volume["id"], "available")
    _make(ashlar, "cli-snap.img")
    snap = properties(cinder("snapshot-manage", "--name", "cli-snap",
                             volume["id"], "cli-snap.img").ok().stdout)
    assert (snap["name"], snap["volume_id"]) == ("cli-snap", volume["id"])
    harness.wait_for(lambda: _snapshot_status(ashlar, snap["id"])
                     == "available", timeout=60, what="managed snapshot")
    cinder("snapshot-unmanage", snap["id"]).ok()
    harness.wait_for(lambda: _snapshot_status(ashlar, snap["id"]) is None,
                     timeout=60, what="unmanaged snapshot")
    left = _folder(ashlar) / ("snapshot-%s.raw" % snap["id"])
    assert left.exists()
    os.unlink(left)
    cinder("delete", volume["id"]).ok()
    wait_volume(ashlar, volume["id"], None)


def test_openstack_volume_create_remote_source(openstack, ashlar):
    _make(ashlar, "osc-disk.img")
    created = openstack("volume", "create", "--remote-source",
                        "source-name=osc-disk.img", "--host", HOST,
                        "osc-managed", "-f", "json")
    assert created["name"] == "osc-managed"
    wait_volume(ashlar, created["id"], "available", project=PROJECT)
    shown = openstack("volume", "show", created["id"], "-f", "json")
    assert (shown["size"], shown["status"]) == (1, "available")
    openstack("volume", "delete", "--remote", created["id"], parse=False
              ).ok()
    wait_volume(ashlar, created["id"], None, project=PROJECT)
    assert (_folder(ashlar) / ("volume-%s.raw" % created["id"])).exists()
