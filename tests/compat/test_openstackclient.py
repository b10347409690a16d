"""python-openstackclient's ``openstack volume ...``, unmodified.

``--os-auth-type none --os-endpoint URL``: keystoneauth's ``none``
plugin sends the token ``notused``, which Ashlar's noauth reads as no
credential, so everything happens in the project ``admin``, as with
``cinder --os-auth-type noauth --os-project-id admin``.  Output is read
with ``-f json``, as scripts read it.  ``volume attachment create`` looks
the server up in Nova first, which Ashlar does not serve, so the
attachment is made with cinderclient and then driven with ``openstack``.
"""

import uuid

from tests.compat.conftest import (
    VOLUME_HOST,
    wait_volume,
)

PROJECT = "admin"
state: dict = {}


def test_type_create_with_property(openstack):
    created = openstack("volume", "type", "create", "osc-multiattach",
                        "--description", "shared disks", "--property",
                        "multiattach=<is> True", "-f", "json")
    assert created["name"] == "osc-multiattach"
    assert created["is_public"] is True
    assert created["description"] == "shared disks"
    assert created["properties"] == {"multiattach": "<is> True"}
    state["type_id"] = created["id"]


def test_type_show_by_name(openstack):
    shown = openstack("volume", "type", "show", "osc-multiattach", "-f",
                      "json")
    assert shown["id"] == state["type_id"]
    assert shown["properties"] == {"multiattach": "<is> True"}


def test_type_list(openstack):
    listed = openstack("volume", "type", "list", "--long", "-f", "json")
    by_name = {t["Name"]: t for t in listed}
    assert by_name["osc-multiattach"]["Properties"] == {
        "multiattach": "<is> True"}
    assert by_name["osc-multiattach"]["Is Public"] is True
    assert "__DEFAULT__" in by_name


def test_volume_create(openstack, ashlar):
    created = openstack("volume", "create", "--type", "osc-multiattach",
                        "--size", "1", "--property", "purpose=compat",
                        "osc-mavol", "-f", "json")
    assert created["name"] == "osc-mavol"
    assert created["size"] == 1
    assert created["type"] == "osc-multiattach"
    assert created["multiattach"] is True
    assert created["properties"] == {"purpose": "compat"}
    assert created["status"] == "creating"
    state["volume_id"] = created["id"]
    wait_volume(ashlar, created["id"], "available", project=PROJECT)


def test_volume_show_by_name(openstack):
    shown = openstack("volume", "show", "osc-mavol", "-f", "json")
    assert shown["id"] == state["volume_id"]
    assert shown["status"] == "available"
    assert shown["bootable"] is False
    assert shown["multiattach"] is True
    assert shown["os-vol-host-attr:host"].startswith(VOLUME_HOST + "@")
    assert shown["os-vol-tenant-attr:tenant_id"] == PROJECT
    assert shown["volume_type_id"] == state["type_id"]


def test_volume_list(openstack):
    listed = openstack("volume", "list", "--long", "-f", "json")
    mine = [v for v in listed if v["ID"] == state["volume_id"]]
    assert mine == [{"ID": state["volume_id"], "Name": "osc-mavol",
                     "Status": "available", "Size": 1,
                     "Type": "osc-multiattach", "Bootable": False,
                     "Attached to": [], "Properties": {"purpose": "compat"}}]


def test_volume_set_name_and_description(openstack):
    result = openstack("volume", "set", "--name", "osc-renamed",
                       "--description", "hello", state["volume_id"],
                       parse=False).ok()
    assert result.stdout == ""
    shown = openstack("volume", "show", "osc-renamed", "-f", "json")
    assert (shown["name"], shown["description"]) == ("osc-renamed", "hello")
    openstack("volume", "set", "--name", "osc-mavol", state["volume_id"],
              parse=False).ok()


def test_volume_set_and_unset_property(openstack):
    """``volume set --property`` POSTs to /volumes/{id}/metadata, ``volume
    unset --property`` DELETEs one key of it."""
    openstack("volume", "set", "--property", "tier=gold", "--property",
              "owner=ops", state["volume_id"], parse=False).ok()
    shown = openstack("volume", "show", state["volume_id"], "-f", "json")
    assert shown["properties"] == {"purpose": "compat", "tier": "gold",
                                   "owner": "ops"}
    openstack("volume", "unset", "--property", "tier", "--property",
              "owner", state["volume_id"], parse=False).ok()
    shown = openstack("volume", "show", state["volume_id"], "-f", "json")
    assert shown["properties"] == {"purpose": "compat"}


def test_service_list(openstack):
    listed = openstack("volume", "service", "list", "-f", "json")
    by_key = {(s["Binary"], s["Host"]): s for s in listed}
    volume = by_key[("cinder-volume", VOLUME_HOST + "@file")]
    assert (volume["Status"], volume["State"]) == ("enabled", "up")
    assert volume["Zone"] == "nova"


def test_backend_pool_list(openstack):
    pools = openstack("volume", "backend", "pool", "list", "--long", "-f",
                      "json")
    pool = next(p for p in pools if p["Name"].startswith(VOLUME_HOST + "@"))
    assert pool["Capabilities"]["multiattach"] is True
    assert pool["Capabilities"]["total_capacity_gb"] > 0


def test_backend_capability_show(openstack):
    shown = openstack("volume", "backend", "capability", "show",
                      VOLUME_HOST + "@file", "-f", "json")
    assert shown, "no capability rows"
    assert all({"Title", "Key", "Type", "Description"} <= set(row)
               for row in shown)


def test_limits_show_absolute(openstack):
    shown = openstack("limits", "show", "--absolute", "-f", "json")
    values = {row["Name"]: row["Value"] for row in shown}
    assert values["max_total_volumes"] == -1
    assert values["total_volumes_used"] >= 1
    assert values["total_gigabytes_used"] >= 1


def test_availability_zone_list(openstack):
    zones = openstack("availability", "zone", "list", "--volume", "-f",
                      "json")
    assert {"Zone Name": "nova", "Zone Status": "available"} in zones


# -- attachments (made with cinderclient: OSC asks Nova for the server) --------
def test_attachment_list_show_complete_delete(openstack, ashlar):
    client = ashlar.http(token="notused", version="3.54")
    server = str(uuid.uuid4())
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": state["volume_id"], "instance_uuid": server,
        "connector": {"initiator": "iqn.1993-08.org.x:osc", "ip": "10.0.0.9",
                      "host": "compute9", "platform": "x86_64",
                      "os_type": "linux2", "multipath": False}}})
    assert resp.status_code == 200, resp.text
    att_id = resp.json()["attachment"]["id"]

    listed = openstack("--os-volume-api-version", "3.27", "volume",
                       "attachment", "list", "--volume-id", state["volume_id"],
                       "-f", "json")
    assert [a["ID"] for a in listed] == [att_id]
    assert listed[0]["Server ID"] == server
    shown = openstack("--os-volume-api-version", "3.27", "volume",
                      "attachment", "show", att_id, "-f", "json")
    assert shown["Volume ID"] == state["volume_id"]
    assert shown["Instance ID"] == server
    assert shown["Status"] == "attaching"
    assert shown["Properties"]["driver_volume_type"]
    openstack("--os-volume-api-version", "3.44", "volume", "attachment",
              "complete", att_id, parse=False).ok()
    shown = openstack("--os-volume-api-version", "3.27", "volume",
                      "attachment", "show", att_id, "-f", "json")
    assert shown["Status"] == "attached"
    volume = openstack("volume", "show", state["volume_id"], "-f", "json")
    assert volume["status"] == "in-use"
    assert volume["attachments"][0]["server_id"] == server
    openstack("--os-volume-api-version", "3.27", "volume", "attachment",
              "delete", att_id, parse=False).ok()
    wait_volume(ashlar, state["volume_id"], "available", project=PROJECT)


def test_volume_set_type_retypes(openstack, ashlar):
    openstack("volume", "set", "--type", "__DEFAULT__", "--migration-policy",
              "never", state["volume_id"], parse=False).ok()
    from deploy.testbed.harness import wait_for

    def retyped():
        shown = openstack("volume", "show", state["volume_id"], "-f", "json")
        return shown["status"] == "available" and \
            shown["type"] == "__DEFAULT__" and shown
    shown = wait_for(retyped, timeout=60, what="the retype to finish")
    assert shown["multiattach"] is False


def test_volume_delete(openstack, ashlar):
    openstack("volume", "delete", "osc-mavol", parse=False).ok()
    wait_volume(ashlar, state["volume_id"], None, project=PROJECT)
    listed = openstack("volume", "list", "-f", "json")
    assert state["volume_id"] not in [v["ID"] for v in listed]


def test_type_delete(openstack):
    openstack("volume", "type", "delete", "osc-multiattach",
              parse=False).ok()
    names = [t["Name"] for t in openstack("volume", "type", "list", "-f",
                                          "json")]
    assert "osc-multiattach" not in names


def test_encrypted_volume_type(openstack):
    """``volume type create --encryption-*`` POSTs /types/{id}/encryption;
    ``show --encryption-type`` reads it back; ``unset`` deletes it."""
    made = openstack("volume", "type", "create", "--encryption-provider",
                     "luks", "--encryption-cipher", "aes-xts-plain64",
                     "--encryption-key-size", "256",
                     "--encryption-control-location", "front-end",
                     "osc-encrypted", "-f", "json")
    shown = openstack("volume", "type", "show", "--encryption-type",
                      made["id"], "-f", "json")
    encryption = shown["encryption"]
    assert (encryption["provider"], encryption["cipher"],
            encryption["key_size"], encryption["control_location"]) == (
        "luks", "aes-xts-plain64", 256, "front-end")
    openstack("volume", "type", "unset", "--encryption-type", made["id"],
              parse=False).ok()
    gone = openstack("volume", "type", "show", "--encryption-type",
                     made["id"], "-f", "json")
    assert not gone.get("encryption")
    openstack("volume", "type", "delete", made["id"], parse=False).ok()
