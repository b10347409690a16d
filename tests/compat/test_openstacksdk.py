"""openstacksdk's ``block_storage`` proxy, unmodified, from Python.

A ``Connection`` with ``auth_type="none"`` and an endpoint override, as in
a ``clouds.yaml`` without keystone: keystoneauth discovers the versions
unauthenticated at ``/v3`` and ``/v3/`` and negotiates each resource's
microversion against the advertised maximum.
"""

import uuid

import pytest
from openstack import exceptions

from services.api import microversion
from tests.compat.conftest import (
    MAX_LIMIT,
    VOLUME_HOST,
)

state: dict = {}


def test_discovery_and_negotiation(bs):
    data = bs.get_endpoint_data()
    assert str(data.min_microversion) in ("3.0", "(3, 0)")
    assert data.max_microversion == (microversion.MAX_VERSION.major,
                                     microversion.MAX_VERSION.minor)


def test_create_type_with_extra_specs(bs):
    vtype = bs.create_type(name="sdk-multiattach",
                           extra_specs={"multiattach": "<is> True"})
    assert vtype.name == "sdk-multiattach"
    assert vtype.extra_specs == {"multiattach": "<is> True"}
    assert vtype.is_public is True
    state["type"] = vtype


def test_find_type_by_name_and_update_specs(bs):
    vtype = bs.find_type("sdk-multiattach", ignore_missing=False)
    assert vtype.id == state["type"].id
    bs.update_type_extra_specs(vtype, color="blue")
    fetched = bs.get_type(vtype.id)
    assert fetched.extra_specs == {"multiattach": "<is> True",
                                   "color": "blue"}
    bs.delete_type_extra_specs(vtype, ["color"])
    assert bs.get_type(vtype.id).extra_specs == {"multiattach": "<is> True"}
    assert bs.find_type("no-such-type") is None


def test_types(bs):
    names = {t.name for t in bs.types()}
    assert {"sdk-multiattach", "__DEFAULT__"} <= names


def test_create_volume_and_wait(bs):
    volume = bs.create_volume(size=1, name="sdk-mavol",
                              volume_type="sdk-multiattach",
                              metadata={"owner": "sdk"})
    assert volume.status == "creating"
    volume = bs.wait_for_status(volume, "available", failures=["error"],
                                interval=1, wait=60)
    assert volume.is_multiattach is True
    assert volume.volume_type == "sdk-multiattach"
    assert volume.size == 1
    assert volume.is_bootable is False
    assert volume.metadata == {"owner": "sdk"}
    assert volume.host.startswith(VOLUME_HOST + "@")
    assert volume.project_id == "admin"
    state["volume"] = volume


def test_find_volume_by_name(bs):
    found = bs.find_volume("sdk-mavol", ignore_missing=False)
    assert found.id == state["volume"].id
    assert bs.find_volume("no-such-volume") is None
    with pytest.raises(exceptions.NotFoundException):
        bs.get_volume(str(uuid.uuid4()))


def test_volumes_pages_through_next_links(bs):
    made = [bs.create_volume(size=1, name="sdk-page-%d" % i)
            for i in range(MAX_LIMIT + 1)]
    for volume in made:
        bs.wait_for_status(volume, "available", interval=1, wait=60)
    listed = [v.id for v in bs.volumes()]
    assert len(listed) == len(set(listed))
    assert {v.id for v in made} | {state["volume"].id} <= set(listed)
    for volume in made:
        bs.delete_volume(volume)
    for volume in made:
        bs.wait_for_delete(volume, interval=1, wait=60)


def test_update_volume(bs):
    updated = bs.update_volume(state["volume"], description="from the sdk")
    assert updated.description == "from the sdk"


def test_summary(bs):
    summary = bs.summary(all_projects=False)
    assert summary.total_count >= 1
    assert summary.total_size >= 1


def test_backend_pools(bs):
    pools = list(bs.backend_pools())
    pool = next(p for p in pools if p.name.startswith(VOLUME_HOST + "@"))
    assert pool.capabilities["multiattach"] is True


def test_capabilities(bs):
    caps = bs.get_capabilities(VOLUME_HOST + "@file")
    assert caps.namespace == "OS::Storage::Capabilities::%s@file" % VOLUME_HOST
    assert isinstance(caps.properties, dict)


def test_services(bs):
    services = {(s.binary, s.host): s for s in bs.services()}
    volume = services[("cinder-volume", VOLUME_HOST + "@file")]
    assert (volume.status, volume.state) == ("enabled", "up")


def test_limits(bs):
    limits = bs.get_limits()
    assert limits.absolute.max_total_volumes == -1
    assert limits.absolute.total_volumes_used >= 1


def test_availability_zones(bs):
    zones = [(z.name, z.state) for z in bs.availability_zones()]
    assert ("nova", {"available": True}) in zones


def test_attachment_lifecycle(bs):
    server = str(uuid.uuid4())
    att = bs.create_attachment(state["volume"], instance=server, connector={
        "initiator": "iqn.1993-08.org.x:sdk", "ip": "10.0.0.7",
        "host": "compute7", "platform": "x86_64", "os_type": "linux2",
        "multipath": False, "mountpoint": "/dev/vdc"})
    assert att.volume_id == state["volume"].id
    assert att.connection_info["driver_volume_type"]
    bs.complete_attachment(att)
    fetched = bs.get_attachment(att.id)
    assert fetched.status == "attached"
    assert fetched.instance == server
    volume = bs.get_volume(state["volume"].id)
    assert volume.status == "in-use"
    assert volume.attachments[0]["device"] == "/dev/vdc"
    listed = [a.id for a in bs.attachments(volume_id=state["volume"].id)]
    assert listed == [att.id]
    bs.delete_attachment(att, ignore_missing=False)
    bs.wait_for_status(bs.get_volume(state["volume"].id), "available",
                       interval=1, wait=60)


def test_retype(bs):
    bs.retype_volume(state["volume"], "__DEFAULT__")
    volume = bs.wait_for_status(bs.get_volume(state["volume"].id),
                                "available", interval=1, wait=60)
    assert volume.volume_type == "__DEFAULT__"
    assert volume.is_multiattach is False


def test_delete_volume_and_type(bs):
    bs.delete_volume(state["volume"])
    bs.wait_for_delete(state["volume"], interval=1, wait=60)
    bs.delete_type(state["type"])
    assert bs.find_type("sdk-multiattach") is None
