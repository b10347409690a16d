"""Volume transfers through unmodified ``cinder`` and ``openstack``: offer
a volume (it is awaiting-transfer), list the offer, accept it from another
project, or cancel it."""

from tests.compat.conftest import (
    properties,
    rows,
    wait_volume,
)

TAKER = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"


def test_cinder_offers_a_volume_and_another_project_accepts_it(cinder,
                                                               ashlar):
    volume = properties(cinder("create", "--name", "given", "1").ok().stdout)
    wait_volume(ashlar, volume["id"], "available")
    made = properties(cinder("transfer-create", "--name", "gift",
                             volume["id"]).ok().stdout)
    assert (made["volume_id"], made["name"]) == (volume["id"], "gift")
    assert len(made["auth_key"]) == 16
    listed = rows(cinder("transfer-list").ok().stdout)
    assert [(r["ID"], r["Volume ID"], r["Name"]) for r in listed] == [
        (made["id"], volume["id"], "gift")]
    assert properties(cinder("show", volume["id"]).ok().stdout)[
        "status"] == "awaiting-transfer"
    taken = properties(cinder("transfer-accept", made["id"],
                              made["auth_key"], project=TAKER,
                              user="bob").ok().stdout)
    assert taken["volume_id"] == volume["id"]
    wait_volume(ashlar, volume["id"], "available", project=TAKER)
    shown = properties(cinder("show", volume["id"], project=TAKER,
                              user="bob").ok().stdout)
    assert (shown["user_id"], shown["os-vol-tenant-attr:tenant_id"]) == (
        "bob", TAKER)
    cinder("delete", volume["id"], project=TAKER, user="bob").ok()
    wait_volume(ashlar, volume["id"], None, project=TAKER)


def test_openstack_creates_and_deletes_a_transfer_request(openstack, ashlar):
    volume = openstack("volume", "create", "--size", "1", "offered",
                       "-f", "json")
    wait_volume(ashlar, volume["id"], "available")
    made = openstack("volume", "transfer", "request", "create", "--name",
                     "req", volume["id"], "-f", "json")
    assert made["volume_id"] == volume["id"] and made["auth_key"]
    listed = openstack("volume", "transfer", "request", "list", "-f", "json")
    assert [(r["ID"], r["Volume"]) for r in listed] == [(made["id"],
                                                         volume["id"])]
    openstack("volume", "transfer", "request", "delete", made["id"],
              parse=False).ok()
    wait_volume(ashlar, volume["id"], "available")
    openstack("volume", "delete", volume["id"], parse=False).ok()
