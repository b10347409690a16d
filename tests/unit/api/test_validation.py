"""Request body schemas and list query parameters, with Cinder's messages."""

import pytest

from common import exception
from services.api import validation
from services.api.microversion import APIVersion
from services.api.schemas import attachments, services, types, volumes

UUID = "f7223234-1afc-4d19-bfa3-d19deb6235ef"


def check(table, version, body):
    schema = validation.schema_for(table, APIVersion.parse(version))
    validation.validate(schema, body)


def message(table, version, body, error=exception.ValidationError):
    with pytest.raises(error) as exc:
        check(table, version, body)
    return exc.value.user_message()


def _formats_in(node):
    if isinstance(node, dict):
        if isinstance(node.get("format"), str):
            yield node["format"]
        for value in node.values():
            yield from _formats_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _formats_in(value)


# -- schema_for -----------------------------------------------------------

def test_schema_for_picks_the_newest_applicable_schema():
    table = volumes.CREATE
    assert validation.schema_for(table, APIVersion(3, 0)) is table[0][1]
    assert validation.schema_for(table, APIVersion(3, 12)) is table[0][1]
    assert validation.schema_for(table, APIVersion(3, 13)) is table[1][1]
    assert validation.schema_for(table, APIVersion(3, 52)) is table[2][1]
    assert validation.schema_for(table, APIVersion(3, 60)) is table[3][1]


def test_schema_for_below_the_first_version():
    with pytest.raises(LookupError):
        validation.schema_for(attachments.CREATE, APIVersion(3, 26))


def test_every_format_used_is_implemented():
    tables = [volumes.CREATE, volumes.UPDATE, types.CREATE, types.UPDATE,
              types.EXTRA_SPECS_CREATE, types.EXTRA_SPEC_UPDATE,
              attachments.CREATE, attachments.UPDATE,
              *volumes.ACTIONS.values(), *types.ACTIONS.values(),
              *attachments.ACTIONS.values(), *services.ACTIONS.values()]
    used = {fmt for table in tables for _, schema in table
            for fmt in _formats_in(schema)}
    assert used <= set(validation.FORMATS.checkers)


# -- volume create --------------------------------------------------------

CINDERCLIENT_CREATE = {"volume": {
    "size": 20, "name": "my-mavol", "description": None,
    "volume_type": "multiattach", "availability_zone": None, "metadata": {},
    "snapshot_id": None, "source_volid": None, "consistencygroup_id": None,
    "imageRef": None, "backup_id": None},
    "OS-SCH-HNT:scheduler_hints": {"same_host": ["x"]}}


@pytest.mark.parametrize("version", ["3.0", "3.47", "3.53", "3.60"])
def test_create_accepts_what_cinderclient_sends(version):
    check(volumes.CREATE, version, CINDERCLIENT_CREATE)


@pytest.mark.parametrize("body", [
    {"volume": {"size": "20"}},
    {"volume": {"size": None, "snapshot_id": UUID}},
    {"volume": {"metadata": None, "display_name": "x",
                "display_description": "y", "image_id": "img"}},
    {"volume": {"multiattach": False}},
    {"volume": {"multiattach": "yes"}},
    {"volume": {"multiattach": None}},
    {"volume": {"name": None}},
    {"volume": {"group_id": "g", "backup_id": UUID}},
])
def test_create_accepts(body):
    check(volumes.CREATE, "3.53", body)


def test_create_ignores_unknown_keys_before_3_53():
    check(volumes.CREATE, "3.52", {"volume": {"size": 1, "bootable": True}})


def test_create_rejects_unknown_keys_from_3_53():
    assert message(volumes.CREATE, "3.53",
                   {"volume": {"size": 1, "bootable": True}}) == (
        "Invalid input for field/attribute volume. Value: {'size': 1, "
        "'bootable': True}. Additional properties are not allowed "
        "('bootable' was unexpected)")


def test_group_id_and_backup_id_are_unknown_before_their_versions():
    body = {"volume": {"size": 1, "backup_id": "not-a-uuid"}}
    check(volumes.CREATE, "3.46", body)
    assert message(volumes.CREATE, "3.47", body) == (
        "Invalid input for field/attribute backup_id. Value: not-a-uuid. "
        "'not-a-uuid' is not valid under any of the given schemas")


@pytest.mark.parametrize("version", ["3.0", "3.60"])
def test_create_rejects_unknown_top_level_keys(version):
    body = {"volume": {"size": 1}, "bogus_top": 1}
    assert message(volumes.CREATE, version, body) == (
        "Additional properties are not allowed ('bogus_top' was unexpected)")


def test_create_requires_the_wrapper():
    assert message(volumes.CREATE, "3.0", {}) == (
        "'volume' is a required property")


@pytest.mark.parametrize(("size", "text"), [
    (0, "Value: 0. 0 is less than the minimum of 1"),
    ("0", "Value: 0. 0 is less than the minimum of 1"),
    (1.5, "Value: 1.5. 1.5 is not of type 'integer', 'string', 'null'"),
    ("abc", "Value: abc. 'abc' does not match '^[0-9]+$'"),
    ("2147483648", ("Value: 2147483648. 2147483648 is greater than the "
                   "maximum of 2147483647")),
])
def test_create_size(size, text):
    assert message(volumes.CREATE, "3.0", {"volume": {"size": size}}) == (
        f"Invalid input for field/attribute size. {text}")


def test_create_metadata_values_are_strings():
    body = {"volume": {"size": 1, "metadata": {"k": 1}}}
    assert message(volumes.CREATE, "3.0", body) == (
        "Invalid input for field/attribute k. Value: 1. "
        "1 is not of type 'string'")


def test_create_multiattach_must_be_boolean_ish():
    body = {"volume": {"size": 1, "multiattach": "maybe"}}
    assert message(volumes.CREATE, "3.0", body) == (
        "Invalid input for field/attribute multiattach. Value: maybe. "
        "'maybe' is not valid under any of the given schemas")


def test_create_source_ids_are_uuids():
    body = {"volume": {"snapshot_id": "abc"}}
    assert message(volumes.CREATE, "3.0", body) == (
        "Invalid input for field/attribute snapshot_id. Value: abc. "
        "'abc' is not valid under any of the given schemas")


def test_create_name_too_long_once_stripped():
    body = {"volume": {"size": 1, "name": " " + "x" * 256}}
    assert message(volumes.CREATE, "3.0", body,
                   error=exception.InvalidInput) == (
        "Invalid input received: name has 256 characters, more than 255.")
    check(volumes.CREATE, "3.0",
          {"volume": {"size": 1, "name": "  " + "x" * 255 + "  "}})


def test_create_description_too_long():
    body = {"volume": {"size": 1, "display_description": "d" * 256}}
    assert message(volumes.CREATE, "3.0", body,
                   error=exception.InvalidInput) == (
        "Invalid input received: description has 256 characters, "
        "more than 255.")


def test_create_availability_zone_not_empty():
    body = {"volume": {"size": 1, "availability_zone": ""}}
    assert message(volumes.CREATE, "3.0", body) == (
        "Invalid input for field/attribute availability_zone. Value: . "
        "'' should be non-empty")


# -- volume update --------------------------------------------------------

def test_update_empty_is_allowed_before_3_53():
    check(volumes.UPDATE, "3.52", {"volume": {}})


def test_update_needs_a_key_from_3_53():
    assert message(volumes.UPDATE, "3.53", {"volume": {}}) == (
        "Invalid input for field/attribute volume. Value: {}. "
        "{} is not valid under any of the given schemas")


@pytest.mark.parametrize("version", ["3.0", "3.52", "3.53"])
def test_update_rejects_other_keys_at_every_version(version):
    body = {"volume": {"name": "n", "size": 3}}
    assert message(volumes.UPDATE, version, body) == (
        "Invalid input for field/attribute volume. Value: {'name': 'n', "
        "'size': 3}. Additional properties are not allowed "
        "('size' was unexpected)")


def test_update_accepts_null_name_and_metadata():
    check(volumes.UPDATE, "3.53",
          {"volume": {"name": None, "metadata": {"a b/c": "v"}}})


def test_update_metadata_key_pattern():
    body = {"volume": {"metadata": {"bad!": "v"}}}
    assert message(volumes.UPDATE, "3.0", body) == (
        "Invalid input for field/attribute metadata. Value: {'bad!': 'v'}. "
        "'bad!' does not match any of the regexes: "
        "'^[a-zA-Z0-9-_:. /]{1,255}$'")


def test_update_metadata_value_length():
    body = {"volume": {"metadata": {"k": "v" * 256}}}
    assert message(volumes.UPDATE, "3.0", body).startswith(
        "Invalid input for field/attribute k. Value: vvv")


# -- volume actions -------------------------------------------------------

@pytest.mark.parametrize("body", [
    {"os-extend": {"new_size": 30}},
    {"os-extend": {"new_size": "30"}},
    {"os-retype": {"new_type": "t", "migration_policy": "never"}},
    {"os-retype": {"new_type": "t", "migration_policy": None}},
    {"os-retype": {"new_type": "t"}},
    {"os-reset_status": {"status": "available"}},
    {"os-reset_status": {"attach_status": "detached",
                         "migration_status": "none"}},
    {"os-reset_status": {"status": "IN-USE"}},
    {"os-force_delete": None},
    {"os-force_delete": {}},
    {"os-set_bootable": {"bootable": True}},
    {"os-set_bootable": {"bootable": "False"}},
    {"os-update_readonly_flag": {"readonly": "true"}},
    {"os-initialize_connection": {"connector": {"host": "h"}}},
    {"os-terminate_connection": {"connector": None}},
    {"os-attach": {"instance_uuid": UUID, "mountpoint": "/dev/vdb",
                   "mode": "rw"}},
    {"os-attach": {"host_name": "h", "mountpoint": "/dev/vdb"}},
    {"os-detach": None},
    {"os-detach": {"attachment_id": None}},
    {"os-detach": {"attachment_id": UUID}},
    {"os-reserve": None},
    {"os-unreserve": {}},
    {"os-begin_detaching": None},
    {"os-roll_detaching": None},
    {"os-force_detach": {"attachment_id": "a", "connector": None}},
    {"os-force_detach": {}},
])
def test_volume_actions_accept(body):
    (action,) = body
    check(volumes.ACTIONS[action], "3.60", body)


@pytest.mark.parametrize(("body", "text"), [
    ({"os-extend": {}},
     ("Invalid input for field/attribute os-extend. Value: {}. "
      "'new_size' is a required property")),
    ({"os-extend": {"new_size": None}},
     ("Invalid input for field/attribute new_size. Value: None. "
      "None is not of type 'integer', 'string'")),
    ({"os-retype": {"new_type": "t", "migration_policy": "always"}},
     ("Invalid input for field/attribute migration_policy. Value: always. "
      "'always' is not one of ['on-demand', 'never', None]")),
    ({"os-set_bootable": {"bootable": "maybe"}},
     ("Invalid input for field/attribute bootable. Value: maybe. "
      "'maybe' is not one of [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', "
      "'on', 'YES', 'Yes', 'yes', 'y', 't', False, 'False', 'FALSE', "
      "'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no', 'n', 'f']")),
    ({"os-update_readonly_flag": {}},
     ("Invalid input for field/attribute os-update_readonly_flag. Value: {}. "
      "'readonly' is a required property")),
    ({"os-attach": {"mountpoint": "/dev/vdb"}},
     ("Invalid input for field/attribute os-attach. "
      "Value: {'mountpoint': '/dev/vdb'}. {'mountpoint': '/dev/vdb'} is not "
      "valid under any of the given schemas")),
    ({"os-attach": {"instance_uuid": "x", "mountpoint": "/dev/vdb"}},
     ("Invalid input for field/attribute instance_uuid. Value: x. "
      "'x' is not a 'uuid'")),
    ({"os-initialize_connection": {"connector": None}},
     ("Invalid input for field/attribute connector. Value: None. "
      "None is not of type 'object', 'string'")),
    ({"os-reset_status": {}},
     ("Must specify 'status', 'attach_status' or 'migration_status' for "
      "update.")),
    ({"os-reset_status": {"attach_status": "reserved"}},
     ("Volume attach status: reserved is invalid, valid statuses are: "
      "['attached', 'detached'].")),
    ({"os-reset_status": {"migration_status": "bogus"}},
     ("Volume migration status: bogus is invalid, valid statuses are: "
      "('migrating', 'error', 'success', 'completing', 'none', 'starting').")),
    ({"os-reset_status": {"status": "available", "bogus": 1}},
     ("Invalid input for field/attribute os-reset_status. "
      "Value: {'status': 'available', 'bogus': 1}. Additional properties are "
      "not allowed ('bogus' was unexpected)")),
])
def test_volume_actions_reject(body, text):
    (action,) = body
    assert message(volumes.ACTIONS[action], "3.60", body) == text


def test_reset_status_rejects_unknown_volume_status():
    body = {"os-reset_status": {"status": "bogus"}}
    assert message(volumes.ACTIONS["os-reset_status"], "3.0", body).startswith(
        "Volume status: bogus is invalid, valid statuses are: ('creating', ")


def test_action_body_has_only_the_action_key():
    body = {"os-extend": {"new_size": 2}, "os-retype": {"new_type": "t"}}
    assert message(volumes.ACTIONS["os-extend"], "3.0", body) == (
        "Additional properties are not allowed ('os-retype' was unexpected)")


# -- types ----------------------------------------------------------------

def test_type_create_accepts_what_clients_send():
    check(types.CREATE, "3.0", {"volume_type": {
        "name": "multiattach", "description": None,
        "os-volume-type-access:is_public": True,
        "extra_specs": {"multiattach": "<is> True", "a b/c": None}}})


@pytest.mark.parametrize(("body", "text"), [
    ({"volume_type": {"name": "   "}},
     "An invalid 'name' value was provided. The 'name' can not be empty."),
    ({"volume_type": {"name": ""}},
     ("Invalid input for field/attribute name. Value: . "
      "'' should be non-empty")),
    ({"volume_type": {}},
     ("Invalid input for field/attribute volume_type. Value: {}. "
      "'name' is a required property")),
    ({"volume_type": {"name": "t", "is_public": True}},
     ("Invalid input for field/attribute volume_type. Value: {'name': 't', "
      "'is_public': True}. Additional properties are not allowed "
      "('is_public' was unexpected)")),
    ({"volume_type": {"name": "t", "description": "a\x00b"}},
     ("Invalid input for field/attribute description. Value: a\x00b. "
      "'a\\x00b' is not a 'printable'")),
])
def test_type_create_rejects(body, text):
    assert message(types.CREATE, "3.0", body) == text


def test_type_update():
    check(types.UPDATE, "3.0", {"volume_type": {"description": ""}})
    check(types.UPDATE, "3.0", {"volume_type": {"is_public": "false",
                                                "name": None}})
    assert message(types.UPDATE, "3.0", {"volume_type": {
        "extra_specs": {}}}) == (
        "Invalid input for field/attribute volume_type. Value: "
        "{'extra_specs': {}}. Additional properties are not allowed "
        "('extra_specs' was unexpected)")


def test_extra_specs_create():
    check(types.EXTRA_SPECS_CREATE, "3.0", {"extra_specs": {}})
    check(types.EXTRA_SPECS_CREATE, "3.0",
          {"extra_specs": {"multiattach": "<is> True", "k": None}})
    assert message(types.EXTRA_SPECS_CREATE, "3.0", {}) == (
        "'extra_specs' is a required property")
    assert message(types.EXTRA_SPECS_CREATE, "3.0",
                   {"extra_specs": {"k": 1}}) == (
        "Invalid input for field/attribute k. Value: 1. "
        "1 is not of type 'string', 'null'")
    assert message(types.EXTRA_SPECS_CREATE, "3.0",
                   {"extra_specs": {"a b": "v"}}).endswith(
        "'a b' does not match any of the regexes: '^[a-zA-Z0-9-_:.]{1,255}$'")


def test_extra_spec_update_takes_exactly_one_key():
    check(types.EXTRA_SPEC_UPDATE, "3.0", {"k": "v"})
    assert message(types.EXTRA_SPEC_UPDATE, "3.0", {"a": "1", "b": "2"}) == (
        "{'a': '1', 'b': '2'} has too many properties")
    assert message(types.EXTRA_SPEC_UPDATE, "3.0", {}) == (
        "{} should be non-empty")


@pytest.mark.parametrize("action", ["addProjectAccess", "removeProjectAccess"])
def test_type_access_actions(action):
    check(types.ACTIONS[action], "3.0",
          {action: {"project": "0123456789abcdef0123456789abcdef"}})
    assert message(types.ACTIONS[action], "3.0",
                   {action: {"project": "admin"}}) == (
        "Invalid input for field/attribute project. Value: admin. "
        "'admin' is not a 'uuid'")


# -- attachments ----------------------------------------------------------

def test_attachment_create_as_cinderclient_sends_it():
    check(attachments.CREATE, "3.27", {"attachment": {
        "volume_uuid": UUID, "connector": {}, "instance_uuid": UUID}})
    check(attachments.CREATE, "3.54", {"attachment": {
        "volume_uuid": UUID, "connector": None, "mode": "ro"}})


def test_attachment_create_without_instance():
    check(attachments.CREATE, "3.27", {"attachment": {"volume_uuid": UUID}})


def test_attachment_mode_is_unknown_before_3_54():
    body = {"attachment": {"volume_uuid": UUID, "mode": "rw"}}
    assert message(attachments.CREATE, "3.53", body).endswith(
        "Additional properties are not allowed ('mode' was unexpected)")


@pytest.mark.parametrize(("body", "text"), [
    ({"attachment": {"volume_uuid": UUID, "mode": "xx"}},
     ("Invalid input for field/attribute mode. Value: xx. "
      "'xx' is not one of ['rw', 'ro']")),
    ({"attachment": {"volume_uuid": "x"}},
     ("Invalid input for field/attribute volume_uuid. Value: x. "
      "'x' is not a 'uuid'")),
    ({"attachment": {"instance_uuid": UUID}},
     (f"Invalid input for field/attribute attachment. Value: "
      f"{{'instance_uuid': '{UUID}'}}. 'volume_uuid' is a required property")),
])
def test_attachment_create_rejects(body, text):
    assert message(attachments.CREATE, "3.54", body) == text


def test_attachment_update_needs_a_connector():
    check(attachments.UPDATE, "3.27",
          {"attachment": {"connector": {"host": "h", "mountpoint": None}}})
    assert message(attachments.UPDATE, "3.27",
                   {"attachment": {"connector": {}}}) == (
        "Invalid input for field/attribute connector. Value: {}. "
        "{} should be non-empty")
    assert message(attachments.UPDATE, "3.27", {"attachment": {}}) == (
        "Invalid input for field/attribute attachment. Value: {}. "
        "'connector' is a required property")


def test_attachment_complete():
    table = attachments.ACTIONS["os-complete"]
    for value in (None, UUID, {}):
        check(table, "3.44", {"os-complete": value})
    with pytest.raises(LookupError):
        validation.schema_for(table, APIVersion(3, 43))


# -- services -------------------------------------------------------------

@pytest.mark.parametrize("action", ["enable", "disable", "disable-log-reason"])
def test_service_actions_accept(action):
    check(services.ACTIONS[action], "3.0",
          {"host": "host1@lvm", "binary": "ashlar-volume"})
    check(services.ACTIONS[action], "3.0", {"host": "h", "service": "s"})


def test_service_actions_need_binary_or_service():
    assert message(services.ACTIONS["enable"], "3.0", {"host": "h"}) == (
        "{'host': 'h'} is not valid under any of the given schemas")


def test_service_host_pattern():
    body = {"host": "a b", "binary": "b"}
    assert message(services.ACTIONS["disable"], "3.0", body) == (
        "Invalid input for field/attribute host. Value: a b. "
        "'a b' does not match '^[a-zA-Z0-9-._#@:/+]*$'")


def test_disabled_reason():
    table = services.ACTIONS["disable-log-reason"]
    check(table, "3.0", {"host": "h", "binary": "b",
                         "disabled_reason": "maintenance"})
    assert message(table, "3.0", {"host": "h", "binary": "b",
                                  "disabled_reason": "   "}) == (
        "Invalid input for field/attribute disabled_reason. Value:    . "
        "'   ' is not a 'disabled_reason'")
    assert message(services.ACTIONS["disable"], "3.0",
                   {"binary": "b", "disabled_reason": "x"}).endswith(
        "Additional properties are not allowed "
        "('disabled_reason' was unexpected)")


# -- query parameters -----------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), ("1", True), ("0", False), ("True", True),
    ("false", False), ("yes", True), ("NO", False), ("on", True),
    ("off", False), ("t", True), ("f", False), ("y", True), ("n", False),
])
def test_parse_bool_param(value, expected):
    assert validation.parse_bool_param("all_tenants", value) is expected


@pytest.mark.parametrize(("value", "shown"), [
    ("maybe", "maybe"), ("", ""), (None, "None"), ("2", "2"),
])
def test_parse_bool_param_rejects(value, shown):
    with pytest.raises(exception.ValidationError) as exc:
        validation.parse_bool_param("all_tenants", value)
    assert exc.value.user_message() == (
        f"Value '{shown}' for 'all_tenants' is not a boolean.")


def test_multiattach_null_is_not_a_boolean():
    with pytest.raises(exception.ValidationError) as exc:
        validation.parse_bool_param("multiattach", None)
    assert exc.value.user_message() == (
        "Value 'None' for 'multiattach' is not a boolean.")


@pytest.mark.parametrize(("params", "expected"), [
    ({}, 1000), ({"limit": "10"}, 10), ({"limit": "0"}, 0),
    ({"limit": "1001"}, 1000), ({"limit": ["5", "7"]}, 7),
])
def test_parse_limit(params, expected):
    assert validation.parse_limit(params, max_limit=1000) == expected


@pytest.mark.parametrize(("value", "text"), [
    ("abc", "limit param must be an integer"),
    ("1.5", "limit param must be an integer"),
    ("", "limit param must be an integer"),
    ("-1", "limit param must be positive"),
])
def test_parse_limit_rejects(value, text):
    with pytest.raises(exception.ValidationError) as exc:
        validation.parse_limit({"limit": value}, max_limit=1000)
    assert exc.value.user_message() == text


def test_parse_marker():
    assert validation.parse_marker({}) is None
    assert validation.parse_marker({"marker": UUID}) == UUID


@pytest.mark.parametrize(("params", "expected"), [
    ({}, 0), ({"offset": "0"}, 0), ({"offset": "25"}, 25),
])
def test_parse_offset(params, expected):
    assert validation.parse_offset(params) == expected


@pytest.mark.parametrize(("value", "text"), [
    ("-1", "offset must be >= 0"),
    ("x", "offset must be an integer"),
    ("", "offset must be an integer"),
    ("2147483648", "offset must be <= 2147483647"),
])
def test_parse_offset_rejects(value, text):
    with pytest.raises(exception.ValidationError) as exc:
        validation.parse_offset({"offset": value})
    assert exc.value.user_message() == text


SORT_KEYS = {"created_at", "id", "name", "size", "status"}


@pytest.mark.parametrize(("params", "expected"), [
    ({}, [("created_at", "desc"), ("id", "desc")]),
    ({"sort": "size:asc"},
     [("size", "asc"), ("created_at", "asc"), ("id", "asc")]),
    ({"sort": " name , size:asc "},
     [("name", "desc"), ("size", "asc"), ("created_at", "desc"),
      ("id", "desc")]),
    ({"sort": "id:asc,created_at"}, [("id", "asc"), ("created_at", "desc")]),
    ({"sort_key": "size"},
     [("size", "desc"), ("created_at", "desc"), ("id", "desc")]),
    ({"sort_key": "size", "sort_dir": "asc"},
     [("size", "asc"), ("created_at", "asc"), ("id", "asc")]),
    ({"sort_dir": "asc"}, [("created_at", "asc"), ("id", "asc")]),
])
def test_parse_sort(params, expected):
    assert validation.parse_sort(params, SORT_KEYS) == expected


@pytest.mark.parametrize("params", [
    {"sort": "name", "sort_key": "size"},
    {"sort": "name", "sort_dir": "asc"},
])
def test_parse_sort_rejects_mixed_styles(params):
    with pytest.raises(exception.ValidationError) as exc:
        validation.parse_sort(params, SORT_KEYS)
    assert exc.value.user_message() == (
        "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot "
        "be used with the 'sort' parameter.")


@pytest.mark.parametrize("params", [
    {"sort": "bogus"}, {"sort": ""}, {"sort_key": "bogus"},
    {"sort": "name,bogus:asc"},
])
def test_parse_sort_rejects_unknown_keys(params):
    with pytest.raises(exception.InvalidInput) as exc:
        validation.parse_sort(params, SORT_KEYS)
    assert exc.value.user_message() == (
        "Invalid input received: Invalid sort key")


@pytest.mark.parametrize("params", [
    {"sort": "name:up"}, {"sort": "bogus:ASC"}, {"sort_dir": "down"},
])
def test_parse_sort_rejects_unknown_directions_first(params):
    with pytest.raises(exception.InvalidInput) as exc:
        validation.parse_sort(params, SORT_KEYS)
    assert exc.value.user_message() == (
        "Invalid input received: Unknown sort direction, must be 'desc' or "
        "'asc'.")


def test_validators_are_built_once_per_schema():
    schema = validation.schema_for(volumes.CREATE, APIVersion.parse("3.54"))
    first = validation._validator(schema)
    assert validation._validator(schema) is first
    copy = dict(schema)
    assert validation._validator(copy) is not first
    # The cached validator still reports errors, request after request.
    for _ in range(2):
        with pytest.raises(exception.ValidationError):
            validation.validate(schema, {})
