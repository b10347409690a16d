"""Every transition of common.states, without a database."""

import itertools

import pytest

from common import exception
from common import states

T = states.Transition


@pytest.mark.parametrize("rows, status, attach_status", [
    ([], "available", "detached"),
    (["error_attaching"], "available", "detached"),
    (["reserved"], "reserved", "reserved"),
    (["reserved", "attaching"], "attaching", "attaching"),
    (["reserved", "attaching", "attached"], "in-use", "attached"),
    (["attaching", "detaching"], "attaching", "attaching"),
    (["detaching"], "detaching", "detaching"),
    (["detaching", "reserved"], "detaching", "detaching"),
    (["attached", "error_detaching"], "in-use", "attached"),
])
@pytest.mark.parametrize("current", sorted(states.ATTACH_DRIVEN))
def test_volume_status_is_derived_from_rows(rows, status, attach_status,
                                            current):
    assert states.volume_status(rows, current) == (status, attach_status)


@pytest.mark.parametrize("current", ["extending", "retyping", "error",
                                     "deleting", "maintenance"])
def test_volume_status_kept_outside_attach_statuses(current):
    assert states.volume_status(["attached"], current) == (current,
                                                           "attached")
    assert states.volume_status([], current) == (current, "detached")


def test_never_attaching_while_something_is_attached():
    assert states.volume_status(["attached", "attaching", "reserved"],
                                "attaching")[0] == "in-use"


def test_on_reserve():
    assert states.on_reserve(False) == ("reserved", None)
    assert states.on_reserve(True) == ("attaching", T.CREATING)


@pytest.mark.parametrize("status, expected", [
    ("reserved", ("attaching", T.CONNECTING)),
    ("error_attaching", ("attaching", T.CONNECTING)),
    ("attaching", ("attaching", T.RECONNECTING)),
    ("attached", ("attached", T.RECONNECTING)),
])
def test_on_connect(status, expected):
    assert states.on_connect("a", status, None) == expected


@pytest.mark.parametrize("status, transition", [
    ("detaching", T.DISCONNECTING), ("attached", T.DISCONNECTING),
    ("error_detaching", None), ("attaching", T.CONNECTING),
    ("attaching", T.CREATING), ("attached", T.RECONNECTING)])
def test_on_connect_refused(status, transition):
    with pytest.raises(states.InvalidTransition) as err:
        states.on_connect("a", status, transition)
    assert err.value.code == 409
    assert "cannot update" in err.value.msg


def test_on_connect_failed():
    assert states.on_connect_failed("attaching", T.CREATING) == \
        states.DESTROY
    assert states.on_connect_failed("attaching", T.CONNECTING) == "reserved"
    assert states.on_connect_failed("attached", T.RECONNECTING) == \
        "error_attaching"


@pytest.mark.parametrize("status", ["reserved", "attaching", "attached"])
def test_on_complete(status):
    assert states.on_complete("a", status, None) == "attached"


@pytest.mark.parametrize("status, transition", [
    ("attaching", T.CREATING), ("attaching", T.CONNECTING),
    ("detaching", T.DISCONNECTING), ("attached", T.DISCONNECTING),
    ("error_attaching", None), ("error_detaching", None)])
def test_on_complete_refused(status, transition):
    with pytest.raises(states.InvalidTransition):
        states.on_complete("a", status, transition)


def test_on_delete_keeps_the_status():
    assert states.on_delete("reserved", None, False) == (states.DESTROY, "")
    assert states.on_delete("attached", None, True) == (
        "attached", T.DISCONNECTING)
    for transition in (T.CREATING, T.CONNECTING, T.RECONNECTING,
                       T.DISCONNECTING):
        assert states.on_delete("attaching", transition, True) == (
            "attaching", T.DISCONNECTING)


@pytest.mark.parametrize("status, transition, holds", [
    ("attached", None, True), ("attaching", T.CREATING, True),
    ("attached", T.RECONNECTING, True), ("attached", T.DISCONNECTING, False),
    ("detaching", T.DISCONNECTING, False), ("reserved", None, False),
    ("error_attaching", None, False)])
def test_holds_connection(status, transition, holds):
    assert states.holds_connection(status, transition) is holds


def test_resolve_stuck():
    assert states.resolve_stuck("detaching", T.DISCONNECTING) == \
        states.DESTROY
    assert states.resolve_stuck("attaching", T.CREATING) == states.DESTROY
    assert states.resolve_stuck("attaching", T.CONNECTING) == "reserved"
    assert states.resolve_stuck("attached", T.RECONNECTING) == \
        "error_attaching"


def test_is_writer():
    assert states.is_writer("rw") and states.is_writer("null")
    assert not states.is_writer("ro")


def test_attach_limits():
    assert states.attach_limits({}, 7) == (7, False)
    assert states.attach_limits({"ashlar:max_attachments": "3"}, 7) == (
        3, False)
    assert states.attach_limits(
        {"ashlar:multiattach_single_writer": "<is> True"}, 7) == (7, True)
    assert states.attach_limits(
        {"ashlar:multiattach_single_writer": "<is> False"}, 7) == (7, False)
    with pytest.raises(exception.InvalidInput):
        states.attach_limits({"ashlar:max_attachments": "0"}, 7)
    with pytest.raises(exception.InvalidInput):
        states.attach_limits({"ashlar:max_attachments": "many"}, 7)


def test_validate_type_specs():
    states.validate_type_specs({"encryption:provider": "luks"}, False)
    states.validate_type_specs({"multiattach": "<is> True"}, True)
    with pytest.raises(exception.InvalidInput) as err:
        states.validate_type_specs({"encryption:provider": "luks"}, True)
    assert "Multiattach cannot be used with encrypted" in err.value.msg
    with pytest.raises(exception.InvalidInput):
        states.validate_type_specs({"ashlar:max_attachments": "-1"}, True)


def _refusal(status="in-use", multiattach=False, count=1, writers=1,
             guard=None, same=False):
    guard = guard or states.ReserveGuard(multiattach=multiattach, limit=4)
    return states.reserve_refusal("v", status, multiattach, count, writers,
                                  guard, same).msg


def test_reserve_refusal_messages():
    assert "error state" in _refusal(status="error")
    assert "current status is extending" in _refusal(status="extending")
    assert "not multiattach and already has" in _refusal()
    assert "maximum of 4" in _refusal(multiattach=True, count=4)
    guard = states.ReserveGuard(multiattach=True, limit=9,
                                single_writer=True)
    assert "only one read/write" in _refusal(multiattach=True, guard=guard)
    guard = states.ReserveGuard(multiattach=True, limit=9)
    assert "changed its multiattach" in _refusal(guard=guard)


def test_deletion_allowed():
    assert states.deletion_allowed(None, True, False)
    assert states.deletion_allowed("i", False, False)
    assert not states.deletion_allowed("i", True, False)
    assert states.deletion_allowed("i", True, True)


def test_check_retype():
    states.check_retype("v", "available", False, True, False, 0, True)
    with pytest.raises(exception.InvalidInput) as err:
        states.check_retype("v", "in-use", False, True, False, 1, False)
    assert "only allowed on available volumes" in err.value.msg
    with pytest.raises(exception.InvalidInput) as err:
        states.check_retype("v", "available", False, True, True, 0, False)
    assert "both encryption and multi-attach" in err.value.msg
    states.check_retype("v", "in-use", True, True, False, 2, False)
    with pytest.raises(exception.InvalidVolume) as err:
        states.check_retype("v", "in-use", True, True, False, 2, True)
    assert "more than one attachment" in err.value.msg
    states.check_migration("v", 1)


def test_a_raising_change_needs_no_other_row():
    """Whenever ``raises(old, new)``, the volume's statuses after the
    change are the higher-ranked of its statuses before and ``new``:
    checked against ``volume_status`` for every set of other rows."""
    counted = sorted(states.RANK) + ["error_attaching"]
    checked = 0
    for others in itertools.chain.from_iterable(
            itertools.combinations(counted, n)
            for n in range(len(counted) + 1)):
        for old in [None] + counted:
            for new in counted:
                if not states.raises(old, new):
                    continue
                for current in ("available", "extending"):
                    rows = list(others) + ([old] if old else [])
                    status, attach = states.volume_status(rows, current)
                    if states.RANK.get(new, 0) > states.RANK.get(attach, 0):
                        attach = new
                        if status in states.ATTACH_DRIVEN:
                            status = states.STATUS_OF[new]
                    assert (status, attach) == states.volume_status(
                        list(others) + [new], current), (others, old, new)
                    checked += 1
    assert checked > 500
    assert not states.raises("attached", "detaching")
    assert not states.raises("attaching", "reserved")
