"""Availability zones through the api: a create may ask only for a zone a
volume service is in (Cinder's InvalidAvailabilityZone), the zone list
shows those zones, ``allow_availability_zone_fallback`` sends an
unknown zone's create to the default zone, and the early check judges a
create on the pools of its zone only."""

import uuid

from common.db.api import groups as groups_db
from common.db.api import services as services_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures


def _service(host, zone, binary="ashlar-volume", disabled=False):
    ctxt = fixtures.admin()
    services_db.service_register(ctxt, host, binary, binary, zone)
    if disabled:
        services_db.service_set_disabled(ctxt, host, binary, True, "off")


def _create(api, **fields):
    return api.call("POST", "/volumes", {"volume": {"size": 1, **fields}})


def _volumes():
    return volumes_db.volume_list(fixtures.admin())


def test_a_zone_no_volume_service_is_in_is_refused_and_nothing_made(api):
    _service("sched", "zone-s", binary="ashlar-scheduler")
    for zone in ("nowhere", "zone-s"):
        resp = _create(api, availability_zone=zone)
        assert resp.status_code == 400
        assert resp.json == {"badRequest": {
            "code": 400,
            "message": "Availability zone '%s' is invalid." % zone}}
    assert _volumes() == []
    assert not api.ops.volumes.scheduler.create_volume.called


def test_a_zone_of_any_volume_service_is_taken_even_down_or_disabled(api):
    _service("node2@b", "zone-b", disabled=True)
    resp = _create(api, availability_zone="zone-b")
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["availability_zone"] == "zone-b"
    assert [v.availability_zone for v in _volumes()] == ["zone-b"]
    zones = api.call("GET", "/os-availability-zone").json
    assert zones["availabilityZoneInfo"] == [
        {"zoneName": "nova", "zoneState": {"available": False}},
        {"zoneName": "zone-b", "zoneState": {"available": False}}]


def test_the_default_zone_needs_no_service(api):
    for fields in ({}, {"availability_zone": "nova"}):
        resp = _create(api, **fields)
        assert resp.status_code == 202, resp.json
        assert resp.json["volume"]["availability_zone"] == "nova"


def test_the_fallback_puts_an_unknown_zone_in_the_default_one(api):
    api.ops.volumes.conf.set_override("allow_availability_zone_fallback",
                                      True)
    resp = _create(api, availability_zone="nowhere")
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["availability_zone"] == "nova"


def test_a_group_in_an_unknown_zone_is_invalid_input(api):
    gtype = api.call("POST", "/group_types", {"group_type": {
        "name": str(uuid.uuid4())}}).json["group_type"]
    vtype = types_db.type_get_by_name(fixtures.admin(), "__DEFAULT__")
    body = {"group": {"group_type": gtype["id"], "volume_types": [vtype.id],
                      "availability_zone": "nowhere"}}
    resp = api.call("POST", "/groups", body)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid input received: Availability zone 'nowhere' is invalid.")
    assert groups_db.group_list(fixtures.admin()) == []
    _service("node2@b", "zone-b")
    body["group"]["availability_zone"] = "zone-b"
    resp = api.call("POST", "/groups", body)
    assert resp.status_code == 202, resp.json
    assert api.call("GET", "/groups/" + resp.json["group"]["id"]).json[
        "group"]["availability_zone"] == "zone-b"


def _multiattach_in(api, zone):
    """A warm capability view: multiattach only in ``zone``, plain files
    in zone-b; a multiattach type."""
    def report(multiattach, zone):
        return {"volume_backend_name": "b", "availability_zone": zone,
                "pools": [{"pool_name": "b", "multiattach": multiattach,
                           "total_capacity_gb": 10, "free_capacity_gb": 10}]}
    _service("node2@b", "zone-b")
    apitest.warm_cache(api, {"node1@b": report(True, zone),
                             "node2@b": report(False, "zone-b")})
    return fixtures.make_type(specs={"multiattach": "<is> True"})


def test_a_create_is_judged_on_the_pools_of_its_zone(api):
    """The default zone's multiattach pool does not save a multiattach
    create in zone-b: 400 at once, nothing made, as the scheduler's zone
    filter would refuse it there."""
    vtype = _multiattach_in(api, "nova")
    resp = _create(api, volume_type=vtype.id, availability_zone="zone-b")
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "No backend can satisfy volume type %s: no fresh pool in "
        "availability zone zone-b offers multiattach=<is> True." % vtype.name)
    assert _volumes() == []
    assert not api.ops.volumes.scheduler.create_volume.called
    for fields in ({}, {"availability_zone": "nova"}):
        resp = _create(api, volume_type=vtype.id, **fields)
        assert resp.status_code == 202, resp.json


def test_a_create_naming_no_zone_is_judged_in_the_default_zone(api):
    vtype = _multiattach_in(api, "zone-b")
    resp = _create(api, volume_type=vtype.id)
    assert resp.status_code == 400
    assert "in availability zone nova" in apitest.message(resp)
    resp = _create(api, volume_type=vtype.id, availability_zone="zone-b")
    assert resp.status_code == 202, resp.json


def test_a_group_is_judged_on_the_pools_of_its_zone(api):
    vtype = _multiattach_in(api, "nova")
    gtype = api.call("POST", "/group_types", {"group_type": {
        "name": str(uuid.uuid4())}}).json["group_type"]
    body = {"group": {"group_type": gtype["id"], "volume_types": [vtype.id],
                      "availability_zone": "zone-b"}}
    resp = api.call("POST", "/groups", body)
    assert resp.status_code == 400
    assert "in availability zone zone-b" in apitest.message(resp)
    assert groups_db.group_list(fixtures.admin()) == []
    del body["group"]["availability_zone"]
    assert api.call("POST", "/groups", body).status_code == 202


def test_a_volume_goes_to_the_zone_of_its_group(api):
    """As Cinder: a volume made in a group is in the group's zone, whatever
    zone its create named."""
    _service("node2@b", "zone-b")
    gtype = api.call("POST", "/group_types", {"group_type": {
        "name": str(uuid.uuid4())}}).json["group_type"]
    vtype = types_db.type_get_by_name(fixtures.admin(), "__DEFAULT__")
    group = api.call("POST", "/groups", {"group": {
        "group_type": gtype["id"], "volume_types": [vtype.id],
        "availability_zone": "zone-b"}}).json["group"]
    for fields in ({}, {"availability_zone": "nova"}):
        resp = _create(api, group_id=group["id"], volume_type=vtype.id,
                       **fields)
        assert resp.status_code == 202, resp.json
        assert resp.json["volume"]["availability_zone"] == "zone-b"


def test_a_type_s_zones_bound_where_its_volumes_go(api):
    """``RESKEY:availability_zones``: a create may ask only for one of the
    type's zones; without one, the scheduler picks among those that have a
    volume service (the volume has no zone until then); with only one such
    zone, the volume is in it at once."""
    _service("node2@b", "zone-b")
    _service("node3@b", "zone-c")
    vtype = fixtures.make_type(specs={
        "RESKEY:availability_zones": "zone-b,zone-c,zone-x"})
    resp = _create(api, volume_type=vtype.id, availability_zone="nova")
    assert resp.status_code == 400
    assert apitest.message(resp) == "Availability zone 'nova' is invalid."
    resp = _create(api, volume_type=vtype.id, availability_zone="zone-c")
    assert resp.json["volume"]["availability_zone"] == "zone-c"
    resp = _create(api, volume_type=vtype.id)
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["availability_zone"] is None
    one = fixtures.make_type(specs={
        "RESKEY:availability_zones": "zone-x, zone-b"})
    resp = _create(api, volume_type=one.id)
    assert resp.json["volume"]["availability_zone"] == "zone-b"
    assert api.ops.volumes.scheduler.create_volume.call_count == 3


def test_a_type_none_of_whose_zones_has_a_service_is_refused(api):
    vtype = fixtures.make_type(specs={
        "RESKEY:availability_zones": "zone-x,zone-y"})
    resp = _create(api, volume_type=vtype.id)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Volume type is only supported in these availability zones: "
        "['zone-x', 'zone-y']")
    assert _volumes() == []


def test_the_fallback_leaves_a_type_s_zones_for_the_default_one(api):
    """As Cinder's: with ``allow_availability_zone_fallback``, a zone the
    type does not allow becomes the default zone."""
    _service("node2@b", "zone-b")
    api.ops.volumes.conf.set_override("allow_availability_zone_fallback",
                                      True)
    vtype = fixtures.make_type(specs={"RESKEY:availability_zones": "zone-b"})
    resp = _create(api, volume_type=vtype.id, availability_zone="zone-q")
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["availability_zone"] == "nova"


def test_a_volume_made_from_a_source_keeps_to_the_type_s_zones(api):
    _service("node2@b", "zone-b")
    vtype = fixtures.make_type(specs={"RESKEY:availability_zones": "zone-b"})
    source = api.volume()     # in no zone: the default one
    resp = _create(api, volume_type=vtype.id, source_volid=source)
    assert resp.status_code == 400
    assert apitest.message(resp) == "Availability zone 'nova' is invalid."


def test_the_early_check_judges_every_zone_the_type_allows(api):
    """A multiattach pool in one of the type's zones is enough; in none of
    them, the create is refused at once, naming them."""
    _multiattach_in(api, "zone-c")
    _service("node3@b", "zone-c")
    both = fixtures.make_type(specs={
        "multiattach": "<is> True",
        "RESKEY:availability_zones": "zone-b,zone-c"})
    resp = _create(api, volume_type=both.id)
    assert resp.status_code == 202, resp.json
    elsewhere = fixtures.make_type(specs={
        "multiattach": "<is> True",
        "RESKEY:availability_zones": "zone-b,nova"})
    resp = _create(api, volume_type=elsewhere.id)
    assert resp.status_code == 400
    assert ("no fresh pool in availability zones zone-b, nova offers "
            "multiattach=<is> True") in apitest.message(resp)
