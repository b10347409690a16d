"""Tests for common.zones: the zone rules the API and the scheduler share
(the ones reading the services table are tested through the API, in
tests/unit/api/test_zones.py)."""

import dataclasses

import pytest

from common import exception
from common import zones


@pytest.mark.parametrize("pool_az, wanted, expected", [
    ("nova", None, True),
    ("nova", (), True),
    (None, None, True),
    ("nova", ("nova",), True),
    ("nova", ("az2", "nova"), True),
    ("nova", ("az2",), False),
    ("nova", ("novaz",), False),
    (None, ("nova",), False),
])
def test_in_zone(pool_az, wanted, expected):
    pool = {} if pool_az is None else {"availability_zone": pool_az}
    assert zones.in_zone(pool, wanted) is expected


@pytest.mark.parametrize("caps, expected", [
    ({"availability_zone": "east"}, "east"),
    ({}, "nova"),
    (None, "nova"),
])
def test_a_pool_is_in_the_zone_it_reports_else_the_default(caps, expected):
    assert zones.of_pool(caps, "nova") == expected


@pytest.mark.parametrize("service_zone, zone, expected", [
    ("east", None, True),
    ("east", "", True),
    ("east", "east", True),
    ("east", "west", False),
    (None, "east", False),
])
def test_os_hosts_lists_the_services_of_a_zone(service_zone, zone,
                                               expected):
    assert zones.service_in(service_zone, zone) is expected


@pytest.mark.parametrize("specs, expected", [
    ({}, None),
    ({"RESKEY:availability_zones": "az1"}, ("az1",)),
    ({"RESKEY:availability_zones": "az1, az2 ,az3"}, ("az1", "az2", "az3")),
    ({"RESKEY:availability_zones": "az1,,az2,"}, ("az1", "az2")),
    ({"RESKEY:availability_zones": ""}, ()),
])
def test_availability_zones_of_a_type(specs, expected):
    """Cinder 29's extract_availability_zones_from_volume_type."""
    assert zones.of_type(specs) == expected


@pytest.mark.parametrize("specs, zone, retype, expected", [
    ({}, "nova", False, ("nova",)),
    ({}, None, False, None),
    ({"RESKEY:availability_zones": "a,b"}, None, False, ("a", "b")),
    ({"RESKEY:availability_zones": "a,b"}, "nova", False, ("nova",)),
    ({"RESKEY:availability_zones": "a,b"}, "nova", True, ("a", "b")),
    ({}, "nova", True, ("nova",)),
])
def test_zones_a_volume_may_be_placed_in(specs, zone, retype, expected):
    assert zones.for_placement(specs, zone, retype) == expected


@dataclasses.dataclass
class _Source:
    kind: str
    availability_zone: str | None


@pytest.mark.parametrize("asked", [None, "", "east"])
def test_a_copy_is_in_its_source_s_zone(asked):
    assert zones.of_source(asked, _Source("volume", "east"), "nova") == "east"


def test_a_copy_of_a_source_without_a_zone_is_in_the_default_one():
    assert zones.of_source(None, _Source("snapshot", None), "nova") == "nova"


@pytest.mark.parametrize("kind, named", [("snapshot", "snapshot"),
                                         ("volume", "source volume")])
def test_a_copy_asking_for_another_zone_is_refused(kind, named):
    with pytest.raises(exception.InvalidInput) as caught:
        zones.of_source("west", _Source(kind, "east"), "nova")
    assert str(caught.value).endswith(
        "Volume must be in the same availability zone as the %s" % named)
