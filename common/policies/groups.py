"""Group type, group and group snapshot policies (Cinder's names and
defaults)."""

from common.policies import base

_TYPES = "/group_types/{group_type_id}"
_SPECS = _TYPES + "/group_specs"

rules = [
    base.rule("group:group_types:create", base.RULE_ADMIN_API,
              "Create a group type.", ("POST", "/group_types")),
    base.rule("group:group_types:update", base.RULE_ADMIN_API,
              "Update a group type.", ("PUT", _TYPES)),
    base.rule("group:group_types:delete", base.RULE_ADMIN_API,
              "Delete a group type.", ("DELETE", _TYPES)),
    base.rule("group:access_group_types_specs", base.RULE_ADMIN_API,
              "Show a group type's group specs in its body.",
              ("GET", _TYPES), ("GET", "/group_types")),
    base.rule("group:group_types_specs:get", base.RULE_ADMIN_API,
              "Show one group spec of a group type.",
              ("GET", _SPECS + "/{g_spec_id}")),
    base.rule("group:group_types_specs:get_all", base.RULE_ADMIN_API,
              "List a group type's group specs.", ("GET", _SPECS)),
    base.rule("group:group_types_specs:create", base.RULE_ADMIN_API,
              "Set group specs of a group type.", ("POST", _SPECS)),
    base.rule("group:group_types_specs:update", base.RULE_ADMIN_API,
              "Update one group spec of a group type.",
              ("PUT", _SPECS + "/{g_spec_id}")),
    base.rule("group:group_types_specs:delete", base.RULE_ADMIN_API,
              "Delete one group spec of a group type.",
              ("DELETE", _SPECS + "/{g_spec_id}")),
    base.rule("group:get_all", base.READER, "List groups.",
              ("GET", "/groups"), ("GET", "/groups/detail")),
    base.rule("group:create", base.MEMBER, "Create a group.",
              ("POST", "/groups"),
              ("POST", "/groups/action (create-from-src)")),
    base.rule("group:get", base.READER, "Show a group.",
              ("GET", "/groups/{group_id}")),
    base.rule("group:update", base.MEMBER,
              "Update a group (its name, description and volumes).",
              ("PUT", "/groups/{group_id}")),
    base.rule("group:delete", base.MEMBER, "Delete a group.",
              ("POST", "/groups/{group_id}/action (delete)")),
    base.rule("group:reset_status", base.RULE_ADMIN_API,
              "Reset the status of a group.",
              ("POST", "/groups/{group_id}/action (reset_status)")),
    base.rule("group:group_project_attribute", base.RULE_ADMIN_API,
              "Show a group's project (3.58+).",
              ("GET", "/groups/{group_id}"), ("GET", "/groups/detail")),
    base.rule("group:get_all_group_snapshots", base.READER,
              "List group snapshots.", ("GET", "/group_snapshots"),
              ("GET", "/group_snapshots/detail")),
    base.rule("group:create_group_snapshot", base.MEMBER,
              "Create a group snapshot.", ("POST", "/group_snapshots")),
    base.rule("group:get_group_snapshot", base.READER,
              "Show a group snapshot.",
              ("GET", "/group_snapshots/{group_snapshot_id}")),
    base.rule("group:delete_group_snapshot", base.MEMBER,
              "Delete a group snapshot.",
              ("DELETE", "/group_snapshots/{group_snapshot_id}")),
    base.rule("group:group_snapshot_project_attribute", base.RULE_ADMIN_API,
              "Show a group snapshot's project (3.58+).",
              ("GET", "/group_snapshots/{group_snapshot_id}"),
              ("GET", "/group_snapshots/detail")),
    base.rule("group:reset_group_snapshot_status", base.RULE_ADMIN_API,
              "Reset the status of a group snapshot.",
              ("POST", "/group_snapshots/{group_snapshot_id}/action "
                       "(reset_status)")),
]


def list_rules() -> list:
    return rules
