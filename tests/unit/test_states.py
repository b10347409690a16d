"""Every transition of common.states, without a database."""

import itertools

import pytest

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
