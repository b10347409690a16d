"""Tests for common.extra_specs: Cinder's extra-spec semantics."""

import pytest

from common import extra_specs
from common.extra_specs import (
    capability_specs,
    is_multiattach_spec,
    match_value,
    unsatisfied_specs,
)


@pytest.mark.parametrize("cap, req, expected", [
    # The "=" trap: at least, not equality.
    (200, "= 100", True),
    (100, "= 100", True),
    (99.5, "= 100", False),
    ("200", "= 100", True),
    (200, "== 200", True),
    (200.0, "== 200", True),
    (201, "== 200", False),
    (201, "!= 200", True),
    (200, "!= 200", False),
    (10, ">= 10", True),
    (9, ">= 10", False),
    (10, "<= 10", True),
    (11, "<= 10", False),
    (True, "== 1", True),
])
def test_numeric_operators(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap", ["fast", "", {"a": 1}, [1], object()])
@pytest.mark.parametrize("op", ["=", "==", "!=", ">=", "<="])
def test_numeric_operators_on_non_numbers_do_not_match(cap, op):
    assert match_value(cap, op + " 1") is False


def test_numeric_operand_that_is_not_a_number_does_not_match():
    assert match_value(5, "!= abc") is False


@pytest.mark.parametrize("cap, req, expected", [
    ("abc", "s== abc", True),
    ("abd", "s== abc", False),
    ("abd", "s!= abc", True),
    ("abc", "s!= abc", False),
    ("abb", "s< abc", True),
    ("abc", "s< abc", False),
    ("abc", "s<= abc", True),
    ("abd", "s<= abc", False),
    ("abd", "s> abc", True),
    ("abc", "s> abc", False),
    ("abc", "s>= abc", True),
    ("abb", "s>= abc", False),
    # Strings compare as strings: "10" < "9".
    ("10", "s< 9", True),
    # A number is never string-equal to the operand, and 5 != "5".
    (5, "s== 5", False),
    (5, "s!= 5", True),
    # Ordering a number against a string does not raise.
    (5, "s< 6", False),
    (5, "s>= 6", False),
])
def test_string_operators(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap, req, expected", [
    ("iSCSI,FC", "<in> FC", True),
    ("xabcy", "<in> abc", True),
    ("iSCSI", "<in> FC", False),
    ("iSCSI", "<in> iscsi", False),
    (12, "<in> 1", False),
    (None, "<in> x", False),
])
def test_in_operator(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap, req, expected", [
    (True, "<is> True", True),
    (False, "<is> True", False),
    (False, "<is> False", True),
    (True, "<is> False", False),
    ("true", "<is> True", True),
    ("yes", "<is> true", True),
    ("1", "<is> TRUE", True),
    ("no", "<is> False", True),
    ("False", "<is> True", False),
    # Anything unrecognised reads as False, on either side.
    ("banana", "<is> False", True),
    (False, "<is> garbage", True),
    (None, "<is> False", False),
])
def test_is_operator(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap, req, expected", [
    ("LVM", "LVM", True),
    ("LVM", "lvm", False),
    ("True", "True", True),
    # Cinder compares the whole spec with ==, so typed values never match.
    (True, "True", False),
    (100, "100", False),
    ("", "", True),
    ("x", "", False),
    # An unknown first word is not an operator: the whole string compares.
    ("<foo> bar", "<foo> bar", True),
    ("bar", "<foo> bar", False),
])
def test_plain_value_is_string_equality(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap, req, expected", [
    (None, None, True),
    ("x", None, False),
    (None, "x", False),
    (None, "", False),
])
def test_none(cap, req, expected):
    assert match_value(cap, req) is expected


@pytest.mark.parametrize("cap, expected", [
    ("iSCSI", True),
    ("FC", True),
    ("NVMe", True),
    ("RBD", False),
    ("iSCSI FC", False),
    (None, False),
])
def test_or_with_several_alternatives(cap, expected):
    assert match_value(cap, "<or> iSCSI <or> FC <or> NVMe") is expected


def test_or_single_alternative():
    assert match_value("a", "<or> a") is True
    assert match_value("b", "<or> a") is False


def test_or_without_alternative_does_not_raise():
    assert match_value("a", "<or>") is False


def test_or_compares_strings_only():
    assert match_value(5, "<or> 5 <or> 6") is False


def test_or_skips_every_second_word_like_cinder():
    assert match_value("c", "<or> a b c") is True
    assert match_value("b", "<or> a b c") is False


@pytest.mark.parametrize("op", ["<is>", "<in>", "=", "==", "s==", "s<"])
def test_operator_without_operand_does_not_match(op):
    assert match_value("anything", op) is False


def test_only_first_operand_word_counts():
    assert match_value("foo", "s== foo bar") is True
    assert match_value(5, ">= 3 100") is True


POOL = {
    "pool_name": "p1",
    "free_capacity_gb": 200,
    "multiattach": True,
    "thin_provisioning_support": False,
    "volume_backend_name": "lvm-1",
    "storage_protocol": ["iSCSI", "iscsi"],
    "vendor": {"model": {"name": "x9000"}},
    "empty": [],
    "nothing": None,
}


@pytest.mark.parametrize("specs", [
    {},
    {"free_capacity_gb": "= 100"},
    {"capabilities:free_capacity_gb": "= 100"},
    {"multiattach": "<is> True"},
    {"capabilities:multiattach": "<is> True"},
    {"thin_provisioning_support": "<is> False"},
    {"volume_backend_name": "lvm-1"},
    {"capabilities:vendor:model:name": "x9000"},
    {"storage_protocol": "iscsi"},
    {"storage_protocol": "<or> FC <or> iSCSI"},
    {"nothing": None},
])
def test_pool_satisfies(specs):
    assert unsatisfied_specs(POOL, specs) == []


@pytest.mark.parametrize("key", [
    "qos:maxIOPS",
    "RESKEY:availability_zones",
    "provisioning:type",
    "netapp:raid_type",
    "capabilities_x:foo",
    ":foo",
])
def test_other_scopes_are_not_requirements(key):
    assert unsatisfied_specs(POOL, {key: "<is> True"}) == []
    assert capability_specs({key: "x"}) == {}


@pytest.mark.parametrize("specs", [
    {"free_capacity_gb": "= 300"},
    {"thin_provisioning_support": "<is> True"},
    {"multiattach": "True"},
    {"volume_backend_name": "lvm-2"},
    {"storage_protocol": "FC"},
    {"capabilities:vendor:model:name": "x8000"},
    {"nothing": "x"},
    {"empty": "x"},
])
def test_pool_does_not_satisfy(specs):
    assert unsatisfied_specs(POOL, specs) == list(specs)


@pytest.mark.parametrize("key", [
    "replication_enabled",
    "capabilities:replication_enabled",
    "capabilities:vendor:serial",
    "capabilities:vendor:model:name:first",
    "capabilities:pool_name:x",
    "capabilities:",
])
def test_missing_capability_fails_even_for_false(key):
    assert unsatisfied_specs(POOL, {key: "<is> False"}) == [key]


def test_missing_capability_fails_none_spec():
    assert unsatisfied_specs(POOL, {"absent": None}) == ["absent"]


def test_unsatisfied_keys_keep_the_given_order():
    specs = {
        "volume_backend_name": "other",
        "qos:read_iops_sec": "1000",
        "multiattach": "<is> True",
        "capabilities:thin_provisioning_support": "<is> True",
        "replication_enabled": "<is> True",
    }
    assert unsatisfied_specs(POOL, specs) == [
        "volume_backend_name",
        "capabilities:thin_provisioning_support",
        "replication_enabled",
    ]


def test_bare_capabilities_key_matches_the_whole_dict():
    assert unsatisfied_specs({"a": 1}, {"capabilities": "<in> a"}) == []


def test_capability_specs_keeps_only_requirements_in_order():
    specs = {
        "volume_backend_name": "lvm",
        "qos:maxIOPS": "100",
        "capabilities:multiattach": "<is> True",
        "provisioning:type": "thin",
        "RESKEY:availability_zones": "az1",
        "replication_enabled": "<is> True",
    }
    assert list(capability_specs(specs).items()) == [
        ("volume_backend_name", "lvm"),
        ("capabilities:multiattach", "<is> True"),
        ("replication_enabled", "<is> True"),
    ]


@pytest.mark.parametrize("specs, expected", [
    ({"multiattach": "<is> True"}, True),
    ({"multiattach": "<is> True", "qos:x": "1"}, True),
    ({"multiattach": "<is> true"}, False),
    ({"multiattach": "True"}, False),
    ({"multiattach": " <is> True"}, False),
    ({"multiattach": "<is> False"}, False),
    ({"capabilities:multiattach": "<is> True"}, False),
    ({"multiattach": None}, False),
    ({}, False),
])
def test_is_multiattach_spec(specs, expected):
    assert is_multiattach_spec(specs) is expected


def test_multiattach_constants_agree():
    assert extra_specs.MULTIATTACH_VALUE == "<is> True"
    assert is_multiattach_spec(
        {extra_specs.MULTIATTACH_KEY: extra_specs.MULTIATTACH_VALUE})


@pytest.mark.parametrize("value, requirement, expected", [
    (["aes", "vmx", "sse"], "<all-in> aes vmx", True),
    (["aes", "sse"], "<all-in> aes vmx", False),
    ("aes vmx sse", "<all-in> vmx aes", True),
    ("aes", "<all-in> aes vmx", False),
    (["aes"], "<all-in>", False),
    (None, "<all-in> aes", False),
    (42, "<all-in> 4", False),
])
def test_all_in_needs_every_operand(value, requirement, expected):
    assert extra_specs.match_value(value, requirement) is expected


@pytest.mark.parametrize("spec, expected", [
    (None, False),
    ("", False),
    ("<is>", False),
    ("<is> True", True),
    ("<is>  true ", True),
    ("True", True),
    ("yes", True),
    ("<is> on", True),
    ("1", True),
    ("<is> False", False),
    ("False", False),
    ("<is> maybe", False),
])
def test_is_true_reads_a_spec_value(spec, expected):
    assert extra_specs.is_true(spec) is expected


@pytest.mark.parametrize("word", ["True", "true", "t", "Yes", "y", "on",
                                  "1", "False", "no", "0", "maybe"])
def test_is_true_reads_as_the_matcher_s_is_operator(word):
    """One reading of ``<is>``: a spec value says yes exactly when a
    capability of True matches it."""
    assert extra_specs.is_true("<is> " + word) is extra_specs.match_value(
        True, "<is> " + word)
