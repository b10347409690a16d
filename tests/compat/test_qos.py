"""QoS specs through unmodified ``openstack`` and ``cinder``: create with a
consumer and properties, associate with a type, show, set and unset,
disassociate and delete."""


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
