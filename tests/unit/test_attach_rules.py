"""common.attach_rules: attachment limits, single writer, the type specs
that go together, why a reservation was refused, and what a retype or a
move may do to an attached volume."""

import pytest

from common import attach_rules
from common import exception


def test_attach_limits():
    assert attach_rules.attach_limits({}, 7) == (7, False)
    assert attach_rules.attach_limits({"ashlar:max_attachments": "3"}, 7) == (
        3, False)
    assert attach_rules.attach_limits(
        {"ashlar:multiattach_single_writer": "<is> True"}, 7) == (7, True)
    assert attach_rules.attach_limits(
        {"ashlar:multiattach_single_writer": "<is> False"}, 7) == (7, False)
    with pytest.raises(exception.InvalidInput):
        attach_rules.attach_limits({"ashlar:max_attachments": "0"}, 7)
    with pytest.raises(exception.InvalidInput):
        attach_rules.attach_limits({"ashlar:max_attachments": "many"}, 7)


def test_validate_type_specs():
    attach_rules.validate_type_specs({"encryption:provider": "luks"}, False)
    attach_rules.validate_type_specs({"multiattach": "<is> True"}, True)
    with pytest.raises(exception.InvalidInput) as err:
        attach_rules.validate_type_specs({"encryption:provider": "luks"}, True)
    assert "Multiattach cannot be used with encrypted" in err.value.msg
    with pytest.raises(exception.InvalidInput):
        attach_rules.validate_type_specs({"ashlar:max_attachments": "-1"}, True)


def _refusal(status="in-use", shared=False, count=1, writers=1,
             guard=None, same=False):
    guard = guard or attach_rules.ReserveGuard(multiattach=shared, limit=4)
    return attach_rules.reserve_refusal("v", status, shared, count, writers,
                                       guard, same).msg


def test_reserve_refusal_messages():
    assert "error state" in _refusal(status="error")
    assert "current status is extending" in _refusal(status="extending")
    assert "not multiattach and already has" in _refusal()
    assert "maximum of 4" in _refusal(shared=True, count=4)
    guard = attach_rules.ReserveGuard(multiattach=True, limit=9,
                                     single_writer=True)
    assert "only one read/write" in _refusal(shared=True, guard=guard)
    guard = attach_rules.ReserveGuard(multiattach=True, limit=9)
    assert "changed its multiattach" in _refusal(guard=guard)


def test_deletion_allowed():
    assert attach_rules.deletion_allowed(None, True, False)
    assert attach_rules.deletion_allowed("i", False, False)
    assert not attach_rules.deletion_allowed("i", True, False)
    assert attach_rules.deletion_allowed("i", True, True)


def test_check_retype():
    attach_rules.check_retype("v", "available", False, True, False, 0, True)
    with pytest.raises(exception.InvalidInput) as err:
        attach_rules.check_retype("v", "in-use", False, True, False, 1, False)
    assert "only allowed on available volumes" in err.value.msg
    with pytest.raises(exception.InvalidInput) as err:
        attach_rules.check_retype("v", "available", False, True, True, 0, False)
    assert "both encryption and multi-attach" in err.value.msg
    attach_rules.check_retype("v", "in-use", True, True, False, 2, False)
    with pytest.raises(exception.InvalidVolume) as err:
        attach_rules.check_retype("v", "in-use", True, True, False, 2, True)
    assert "more than one attachment" in err.value.msg
    attach_rules.check_migration("v", 1)
