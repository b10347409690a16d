"""QoS specs through unmodified ``openstack`` and ``cinder``: create with a
consumer and properties, associate with a type, show, set and unset,
disassociate and delete; front-end specs in an attachment's
connection_info."""

import uuid


def test_openstack_manages_qos_specs_and_their_types(openstack, cinder):
    vtype = openstack("volume", "type", "create", "qos-typed", "-f", "json")
    made = openstack("volume", "qos", "create", "--consumer", "front-end",
                     "--property", "read_iops_sec=2000", "osc-gold",
                     "-f", "json")
    assert (made["name"], made["consumer"]) == ("osc-gold", "front-end")
    openstack("volume", "qos", "associate", "osc-gold", "qos-typed",
              parse=False).ok()
    openstack("volume", "qos", "set", "--property", "write_iops_sec=500",
              "osc-gold", parse=False).ok()
    shown = openstack("volume", "qos", "show", "osc-gold", "-f", "json")
    assert shown["properties"] == {"read_iops_sec": "2000",
                                   "write_iops_sec": "500"}
    assert shown["associations"] in (["qos-typed"], "qos-typed")
    associated = cinder("qos-get-association", made["id"]).ok().stdout
    assert vtype["id"] in associated
    openstack("volume", "qos", "unset", "--property", "write_iops_sec",
              "osc-gold", parse=False).ok()
    assert openstack("volume", "qos", "show", "osc-gold", "-f", "json")[
        "properties"] == {"read_iops_sec": "2000"}
    refused = openstack("volume", "qos", "delete", "osc-gold", parse=False)
    assert refused.returncode != 0
    openstack("volume", "qos", "disassociate", "--all", "osc-gold",
              parse=False).ok()
    openstack("volume", "qos", "delete", "osc-gold", parse=False).ok()
    listed = openstack("volume", "qos", "list", "-f", "json")
    assert "osc-gold" not in [q["Name"] for q in listed]
    openstack("volume", "type", "delete", "qos-typed", parse=False).ok()


def test_front_end_specs_reach_the_compute_host_over_rpc(ashlar):
    """An attachment's connection_info, as the volume node wrote it, holds
    the front-end specs of the volume's type (per-GB keys made fixed)."""
    client = ashlar.http()
    qos = client.post("/qos-specs", {"qos_specs": {
        "name": "compat-fe", "consumer": "front-end",
        "read_iops_sec_per_gb": "100", "total_bytes_sec": "1000"}}).json()[
        "qos_specs"]["id"]
    type_id = client.post("/types", {"volume_type": {
        "name": "compat-fe-type"}}).json()["volume_type"]["id"]
    assert client.get("/qos-specs/%s/associate?vol_type_id=%s"
                      % (qos, type_id)).status_code == 202
    volume = client.create_volume(size=2, volume_type=type_id)
    client.wait_status(volume["id"], "available", timeout=60)
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": {"host": "cmp-qos", "ip": "127.0.0.1",
                      "initiator": "iqn.x:cmp-qos", "platform": "x86_64",
                      "os_type": "linux", "multipath": False}}})
    assert resp.status_code == 200, resp.text
    attachment = resp.json()["attachment"]
    assert attachment["connection_info"]["qos_specs"] == {
        "read_iops_sec": 200, "total_bytes_sec": "1000"}
    client.delete("/attachments/%s" % attachment["id"])
    client.wait_status(volume["id"], "available", timeout=60)
    client.delete("/volumes/%s" % volume["id"])
    client.wait_status(volume["id"], None, timeout=60)
    client.delete("/qos-specs/%s?force=True" % qos)
    client.delete("/types/%s" % type_id)
