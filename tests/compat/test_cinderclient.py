"""python-cinderclient's ``cinder`` CLI, unmodified, against real processes.

The tests run in file order and share what they create (``state``): the
operator's story from the seeds, a multiattach type, a volume of it, and what
one looks at around them, attachments included.
"""

import uuid

import pytest

from services.api import microversion
from tests.compat.conftest import (
    MAX_LIMIT,
    PROJECT,
    USER,
    VOLUME_HOST,
    properties,
    rows,
    tables,
    wait_volume,
)

MAX = str(microversion.MAX_VERSION)
state: dict = {}


def test_version_list(cinder):
    out = cinder("version-list").ok().stdout
    assert "Server supported API versions" in out
    server = rows(out.split("Server supported API versions")[1])
    assert server == [{"Id": "v3.0", "Status": "CURRENT",
                       "Updated": server[0]["Updated"],
                       "Min Version": "3.0", "Version": MAX}]


def test_serves_the_clients_maximum_without_downgrading(cinder):
    """cinderclient asks for its maximum (3.71); Ashlar serves it, so the
    client warns about nothing."""
    result = cinder("type-list").ok()
    assert MAX == "3.71"
    assert "downgrading" not in result.stderr, result.stderr


def test_type_create(cinder):
    table = rows(cinder("type-create", "multiattach").ok().stdout)
    assert len(table) == 1
    row = table[0]
    assert row["Name"] == "multiattach"
    assert row["Is_Public"] == "True"
    assert row["Description"] == "-"
    uuid.UUID(row["ID"])
    state["type_id"] = row["ID"]


def test_type_key_set(cinder):
    cinder("type-key", "multiattach", "set", "multiattach=<is> True").ok()
    specs = {r["Name"]: r["extra_specs"]
             for r in rows(cinder("extra-specs-list").ok().stdout)}
    assert specs["multiattach"] == "{'multiattach': '<is> True'}"
    assert specs["__DEFAULT__"] == "{}"


def test_type_list(cinder):
    names = [r["Name"] for r in rows(cinder("type-list").ok().stdout)]
    assert sorted(names) == sorted(set(names))
    assert {"multiattach", "__DEFAULT__"} <= set(names)


def test_create_multiattach_volume(cinder, ashlar):
    out = cinder("create", "--volume-type", "multiattach", "--name",
                 "my-mavol", "1").ok().stdout
    volume = properties(out)
    state["volume_id"] = volume["id"]
    assert volume["name"] == "my-mavol"
    assert volume["size"] == "1"
    assert volume["volume_type"] == "multiattach"
    assert volume["multiattach"] == "True"
    # ``cinder create`` prints a GET made after the POST's 202, which the
    # file backend may already have answered: either state is right.
    assert volume["status"] in ("creating", "available")
    assert volume["user_id"] == USER
    assert volume["os-vol-tenant-attr:tenant_id"] == PROJECT
    assert volume["bootable"] == "false"
    wait_volume(ashlar, volume["id"], "available")


def test_list(cinder):
    table = rows(cinder("list").ok().stdout)
    mine = [r for r in table if r["ID"] == state["volume_id"]]
    assert mine == [{"ID": state["volume_id"], "Status": "available",
                     "Name": "my-mavol", "Size": "1",
                     "Consumes Quota": "True",
                     "Volume Type": "multiattach", "Bootable": "false",
                     "Attached to": ""}]


def test_show_by_name(cinder):
    volume = properties(cinder("show", "my-mavol").ok().stdout)
    assert volume["id"] == state["volume_id"]
    assert volume["status"] == "available"
    assert volume["multiattach"] == "True"
    assert volume["os-vol-host-attr:host"].startswith(VOLUME_HOST + "@")
    assert volume["attached_servers"] == "[]"
    assert volume["volume_type_id"] == state["type_id"]
    assert volume["consumes_quota"] == "True"


def test_metadata_set_show_and_unset(cinder):
    """``cinder metadata VOL set|unset`` and ``metadata-show``."""
    cinder("metadata", "my-mavol", "set", "a=1", "b=2").ok()
    shown = rows(cinder("metadata-show", "my-mavol").ok().stdout)
    assert {r["Metadata-property"]: r["Value"] for r in shown} == {
        "a": "1", "b": "2"}
    cinder("metadata", "my-mavol", "unset", "a", "b").ok()
    assert rows(cinder("metadata-show", "my-mavol").ok().stdout) == []


def test_list_follows_next_links(cinder, ashlar):
    """More volumes than one page: cinderclient must follow volumes_links."""
    made = []
    for index in range(MAX_LIMIT + 1):
        out = cinder("create", "--name", "page-%d" % index, "1").ok().stdout
        made.append(properties(out)["id"])
    for volume_id in made:
        wait_volume(ashlar, volume_id, "available")
    listed = [r["ID"] for r in rows(cinder("list").ok().stdout)]
    assert sorted(listed) == sorted(set(listed))
    assert set(made) | {state["volume_id"]} <= set(listed)
    limited = rows(cinder("list", "--limit", "2").ok().stdout)
    assert len(limited) == 2
    for volume_id in made:
        cinder("delete", volume_id).ok()
    for volume_id in made:
        wait_volume(ashlar, volume_id, None)


def test_get_pools_detail(cinder):
    pool = properties(cinder("get-pools", "--detail").ok().stdout)
    assert pool["name"].startswith(VOLUME_HOST + "@")
    assert pool["multiattach"] == "True"
    assert pool["volume_backend_name"]
    assert float(pool["free_capacity_gb"]) > 0
    assert "storage_protocol" in pool


def test_get_pools_names(cinder):
    pool = properties(cinder("get-pools").ok().stdout)
    assert list(pool) == ["name"]
    assert pool["name"].startswith(VOLUME_HOST + "@")


def test_get_capabilities(cinder):
    out = cinder("get-capabilities", VOLUME_HOST + "@file").ok().stdout
    stats, props = tables(out)
    stats = {r["Volume stats"]: r["Value"] for r in stats}
    assert stats["namespace"] == "OS::Storage::Capabilities::%s@file" \
        % VOLUME_HOST
    assert {r["Backend properties"] for r in props} >= {"multiattach"}


def test_service_list(cinder):
    table = rows(cinder("service-list").ok().stdout)
    services = {(r["Binary"], r["Host"]): r for r in table}
    volume = services[("cinder-volume", VOLUME_HOST + "@file")]
    assert volume["Status"] == "enabled"
    assert volume["State"] == "up"
    assert volume["Backend State"] == "up"
    assert ("cinder-scheduler", "compat-sched") in services


def test_absolute_limits(cinder):
    limits = {r["Name"]: r["Value"]
              for r in rows(cinder("absolute-limits").ok().stdout)}
    assert limits["maxTotalVolumes"] == "-1"
    assert int(limits["totalVolumesUsed"]) >= 1
    assert int(limits["totalGigabytesUsed"]) >= 1


def test_rate_limits_are_empty(cinder):
    result = cinder("rate-limits").ok()
    assert "ERROR" not in result.stderr


def test_availability_zone_list(cinder):
    table = rows(cinder("availability-zone-list").ok().stdout)
    assert {"Name": "nova", "Status": "available"} in table


def test_project_in_endpoint(cinder, ashlar):
    """An endpoint with the project id gives project-scoped URLs."""
    out = cinder("show", state["volume_id"],
                 endpoint="%s/%s" % (ashlar.endpoint, PROJECT)).ok().stdout
    assert properties(out)["name"] == "my-mavol"


def test_unknown_volume_is_a_clean_error(cinder):
    result = cinder("show", "no-such-volume")
    assert result.returncode == 1
    assert "No volume with a name or ID of 'no-such-volume' exists." \
        in result.stderr


# -- attachments (3.27+, os-complete 3.44+) ----------------------------------
SERVER_1 = str(uuid.uuid4())
SERVER_2 = str(uuid.uuid4())


def _attachment(out: str) -> dict:
    return properties(out)


def test_attachment_create_reserves(cinder):
    out = cinder("attachment-create", state["volume_id"], SERVER_1).ok().stdout
    att = _attachment(out)
    assert att["status"] == "reserved"
    assert att["instance"] == SERVER_1
    assert att["volume_id"] == state["volume_id"]
    assert att["attach_mode"] == "null"
    state["att1"] = att["id"]
    volume = properties(cinder("show", state["volume_id"]).ok().stdout)
    assert volume["status"] == "reserved"


def test_attachment_update_connects(cinder):
    out = cinder("attachment-update", "--initiator", "iqn.1993-08.org.x:01",
                 "--ip", "10.0.0.1", "--host", "compute1", "--mountpoint",
                 "/dev/vdb", state["att1"]).ok().stdout
    assert "driver_volume_type" in out
    volume = properties(cinder("show", state["volume_id"]).ok().stdout)
    assert volume["status"] == "attaching"


def test_attachment_complete(cinder):
    cinder("attachment-complete", state["att1"]).ok()
    att = _attachment(cinder("attachment-show", state["att1"]).ok().stdout)
    assert att["status"] == "attached"
    volume = properties(cinder("show", state["volume_id"]).ok().stdout)
    assert volume["status"] == "in-use"
    assert SERVER_1 in volume["attached_servers"]
    assert state["att1"] in volume["attachment_ids"]


def test_second_attachment_on_multiattach_volume(cinder):
    out = cinder("attachment-create", "--connect", "True", "--initiator",
                 "iqn.1993-08.org.x:02", "--ip", "10.0.0.2", "--host",
                 "compute2", state["volume_id"], SERVER_2).ok().stdout
    att = _attachment(out)
    state["att2"] = att["id"]
    cinder("attachment-complete", att["id"]).ok()
    table = rows(cinder("attachment-list", "--volume-id",
                        state["volume_id"]).ok().stdout)
    assert {r["ID"] for r in table} == {state["att1"], state["att2"]}
    assert {r["Server ID"] for r in table} == {SERVER_1, SERVER_2}
    assert {r["Status"] for r in table} == {"attached"}


def test_delete_refused_while_attached(cinder):
    result = cinder("delete", state["volume_id"])
    assert result.returncode == 1
    assert "Invalid volume" in result.stdout + result.stderr


def test_retype_changing_multiattach_refused_while_in_use(cinder):
    result = cinder("retype", state["volume_id"], "__DEFAULT__")
    assert result.returncode == 1
    assert "multiattach" in result.stdout + result.stderr


def test_attachment_delete(cinder, ashlar):
    for key in ("att1", "att2"):
        cinder("attachment-delete", state[key]).ok()
        result = cinder("attachment-show", state[key])
        assert result.returncode == 1
    wait_volume(ashlar, state["volume_id"], "available")


# -- retype and delete ---------------------------------------------------------
def test_retype(cinder, ashlar):
    cinder("retype", state["volume_id"], "__DEFAULT__").ok()

    def retyped():
        volume = properties(cinder("show", state["volume_id"]).ok().stdout)
        return (volume["status"] == "available"
                and volume["volume_type"] == "__DEFAULT__" and volume)
    from deploy.testbed.harness import wait_for
    volume = wait_for(retyped, timeout=60, what="the retype to finish")
    assert volume["multiattach"] == "False"


def test_delete(cinder, ashlar):
    out = cinder("delete", "my-mavol").ok().stdout
    assert "Request to delete volume my-mavol has been accepted." in out
    wait_volume(ashlar, state["volume_id"], None)
    listed = [r["ID"] for r in rows(cinder("list").ok().stdout)]
    assert state["volume_id"] not in listed


def test_type_delete(cinder):
    cinder("type-delete", "multiattach").ok()
    names = [r["Name"] for r in rows(cinder("type-list").ok().stdout)]
    assert "multiattach" not in names


@pytest.mark.parametrize("version", ["3.0", "3.27", "3.50", MAX])
def test_list_at_every_client_version(cinder, version):
    result = cinder("--os-volume-api-version", version, "list").ok()
    assert rows(result.stdout) is not None


# -- quotas ---------------------------------------------------------------------
QUOTA_PROJECT = "9a0ea000000000000000000000000000"


def test_quota_update_show_usage_defaults_delete(cinder, ashlar):
    updated = properties(cinder("quota-update", "--volumes", "2",
                                "--gigabytes", "5", QUOTA_PROJECT
                                ).ok().stdout)
    assert (updated["volumes"], updated["gigabytes"]) == ("2", "5")
    shown = properties(cinder("quota-show", QUOTA_PROJECT).ok().stdout)
    assert shown["volumes"] == "2" and shown["volumes___DEFAULT__"] == "-1"
    client = ashlar.http(token="admin:" + QUOTA_PROJECT)
    made = client.create_volume(size=2)
    over = client.post("/volumes", {"volume": {"size": 4}})
    assert over.status_code == 413
    usage = {row["Type"]: row for row in rows(
        cinder("quota-usage", QUOTA_PROJECT).ok().stdout)}
    assert (usage["volumes"]["In_use"], usage["volumes"]["Limit"]) == (
        "1", "2")
    assert usage["gigabytes"]["In_use"] == "2"
    defaults = properties(cinder("quota-defaults", QUOTA_PROJECT
                                 ).ok().stdout)
    assert defaults["volumes"] == "-1"  # the deployment lifts them
    cinder("quota-delete", QUOTA_PROJECT).ok()
    assert properties(cinder("quota-show", QUOTA_PROJECT).ok().stdout)[
        "volumes"] == "-1"
    client.wait_status(made["id"], "available", timeout=60)
    client.delete("/volumes/%s" % made["id"])
    client.wait_status(made["id"], None, timeout=60)


def test_quota_class_show_and_update(cinder):
    shown = properties(cinder("quota-class-show", "default").ok().stdout)
    assert shown["volumes"] == "-1"
    updated = properties(cinder("quota-class-update", "--snapshots", "3",
                                "default").ok().stdout)
    assert updated["snapshots"] == "3"
    assert properties(cinder("quota-class-show", "default").ok().stdout)[
        "snapshots"] == "3"
    cinder("quota-class-update", "--snapshots", "10", "default").ok()
