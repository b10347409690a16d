"""Cinder's service commands through the unmodified clients: what
``cinder service-list/-disable/-enable`` and ``openstack volume service``
show and change."""

import pytest

from tests.compat.conftest import VOLUME_HOST
from tests.compat.conftest import tables

BACKEND = VOLUME_HOST + "@file"


@pytest.fixture
def enabled_again(ashlar):
    """Leave the (session's only) volume service enabled."""
    yield
    resp = ashlar.http().put("/os-services/enable", {
        "host": BACKEND, "binary": "ashlar-volume"})
    assert resp.status_code == 200, resp.text


def _state(ashlar) -> dict:
    services = ashlar.http().get("/os-services").json()["services"]
    return next(s for s in services if s["host"] == BACKEND)


def test_cinder_disables_and_enables_a_volume_service(cinder, ashlar,
                                                       enabled_again):
    cinder("--os-volume-api-version", "3.60", "service-disable",
           "--reason", "maintenance", BACKEND, "cinder-volume").ok()
    shown = _state(ashlar)
    assert (shown["status"], shown["disabled_reason"]) == (
        "disabled", "maintenance")
    [listed] = [row for row in tables(cinder("service-list").ok().stdout)[0]
                if row["Host"] == BACKEND]
    assert listed["Status"] == "disabled" and listed["State"] == "up"
    cinder("service-enable", BACKEND, "ashlar-volume").ok()
    assert _state(ashlar)["status"] == "enabled"


def test_openstack_sets_a_volume_service(openstack, ashlar, enabled_again):
    openstack("volume", "service", "set", "--disable", "--disable-reason",
              "drain", BACKEND, "cinder-volume", parse=False).ok()
    assert _state(ashlar)["status"] == "disabled"
    listed = openstack("volume", "service", "list", "--long", "-f", "json")
    [row] = [r for r in listed if r["Host"] == BACKEND]
    assert row["Status"] == "disabled" and row["Disabled Reason"] == "drain"
    openstack("volume", "service", "set", "--enable", BACKEND,
              "cinder-volume", parse=False).ok()
    assert _state(ashlar)["status"] == "enabled"
