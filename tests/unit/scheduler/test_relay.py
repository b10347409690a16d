"""Tests for the scheduler's relay of capability reports to api workers."""

import pytest

from common import capabilities
from services.scheduler import relay as capability_relay
from tests.unit.scheduler.fakes import ViewAPI


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def report(free=10):
    return {"volume_backend_name": "b", "pools": [
        {"pool_name": "b", "free_capacity_gb": free, "multiattach": True}]}


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def relay(clock):
    return capability_relay.CapabilityRelay(ViewAPI(), clock=clock)


def test_a_new_report_is_relayed_at_once(relay):
    relay.heard("a@b", report(), 1.0)
    assert relay.view.sent == [
        ("update", "a@b", 1.0, capabilities.fingerprint(report()))]


def test_repeats_wait_for_one_renewal_message(relay, clock):
    relay.heard("a@b", report(), 1.0)
    relay.heard("c@b", report(), 1.0)
    clock.now += 3
    relay.heard("a@b", report(), 2.0)
    clock.now += 0.5
    relay.heard("c@b", report(), 2.5)
    relay.heard("a@b", report(), 3.0)      # only the newest is renewed
    assert len(relay.view.sent) == 2
    relay.flush()
    digest = capabilities.fingerprint(report())
    assert relay.view.sent[2] == ("renew", {"a@b": (digest, 3.0, 0.0),
                                            "c@b": (digest, 2.5, 0.0)})
    relay.flush()                          # nothing new: nothing sent
    assert len(relay.view.sent) == 3


def test_the_age_is_counted_from_the_receipt(relay, clock):
    relay.heard("a@b", report(), 1.0)
    relay.heard("a@b", report(), 2.0)
    clock.now += 0.75
    relay.flush()
    assert relay.view.sent[-1][1]["a@b"][2] == 0.75


def test_a_changed_report_is_relayed_at_once_not_renewed(relay):
    relay.heard("a@b", report(10), 1.0)
    relay.heard("a@b", report(10), 2.0)
    relay.heard("a@b", report(7), 3.0)
    assert relay.view.sent[-1] == (
        "update", "a@b", 3.0, capabilities.fingerprint(report(7)))
    relay.flush()                          # the repeat was overtaken
    assert [sent[0] for sent in relay.view.sent] == ["update", "update"]


def test_an_older_report_is_not_relayed(relay):
    relay.heard("a@b", report(10), 2.0)
    relay.heard("a@b", report(7), 1.0)
    relay.flush()
    assert relay.view.sent == [
        ("update", "a@b", 2.0, capabilities.fingerprint(report(10)))]


def test_a_withdrawal_is_relayed_and_drops_pending_renewals(relay):
    relay.heard("a@b", report(), 1.0)
    relay.heard("a@b", report(), 2.0)
    relay.withdrawn("a@b", 2.5)
    relay.flush()
    assert relay.view.sent[-1] == ("withdraw", "a@b", 2.5)
    relay.heard("a@b", report(), 3.0)      # back: relayed in full again
    assert relay.view.sent[-1][0] == "update"


def test_a_failed_cast_is_logged_not_raised(clock):
    class Broken(ViewAPI):
        def update_service_capabilities(self, *args):
            raise ConnectionError("broker gone")

    relay = capability_relay.CapabilityRelay(Broken(), clock=clock)
    relay.heard("a@b", report(), 1.0)
    relay.heard("a@b", report(), 2.0)      # renewed: workers will resync
    relay.flush()
    assert relay.view.sent[-1][0] == "renew"


def test_renewals_come_well_inside_the_freshness_window():
    assert capability_relay.renewal_interval(20.0) == 1.0
    assert capability_relay.renewal_interval(2.0) == 0.5


def test_fingerprints_ignore_key_order():
    one = {"a": 1, "pools": [{"x": 1, "y": [1, 2]}]}
    other = {"pools": [{"y": [1, 2], "x": 1}], "a": 1}
    assert capabilities.fingerprint(one) == capabilities.fingerprint(other)
    assert capabilities.fingerprint(one) != capabilities.fingerprint(
        {"a": 2, "pools": [{"x": 1, "y": [1, 2]}]})


def test_a_repeat_is_told_without_a_fingerprint(relay, monkeypatch):
    """The fingerprint (JSON) is made for changes only, not for the
    hundred repeats a second of a thousand backends."""
    made = []
    real = capabilities.fingerprint
    monkeypatch.setattr(capabilities, "fingerprint",
                        lambda report: made.append(1) or real(report))
    relay.heard("a@b", report(), 1.0)
    relay.heard("a@b", report(), 2.0)
    relay.heard("a@b", report(), 3.0)
    assert len(made) == 1
    relay.heard("a@b", report(7), 4.0)
    assert len(made) == 2
