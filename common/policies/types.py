"""Volume type, extra spec and type access policies (Cinder's names)."""

from common.policies import base

TYPES = "/types"
TYPE = "/types/{type_id}"
SPECS = "/types/{type_id}/extra_specs"
SPEC = "/types/{type_id}/extra_specs/{extra_spec_key}"
TYPE_ACTION = "/types/{type_id}/action (%s)"


rules = [
    base.rule("volume_extension:type_create", base.RULE_ADMIN_API,
              "Create a volume type.", ("POST", TYPES)),
    base.rule("volume_extension:type_update", base.RULE_ADMIN_API,
              "Update a volume type.", ("PUT", TYPE)),
    base.rule("volume_extension:type_delete", base.RULE_ADMIN_API,
              "Delete a volume type.", ("DELETE", TYPE)),
    base.rule("volume_extension:type_get", base.READER,
              "Show a volume type.", ("GET", TYPE)),
    base.rule("volume_extension:type_get_all", base.READER,
              "List volume types.", ("GET", TYPES)),
    base.rule("volume_extension:access_types_extra_specs", base.READER,
              "Include a type's extra_specs in type shows and lists.",
              ("GET", TYPE), ("GET", TYPES)),
    base.rule("volume_extension:access_types_qos_specs_id", base.RULE_ADMIN_API,
              "Include a type's qos_specs_id in type shows and lists.",
              ("GET", TYPE), ("GET", TYPES)),
    base.rule("volume_extension:types_extra_specs:index", base.READER,
              "List a type's extra specs.", ("GET", SPECS)),
    base.rule("volume_extension:types_extra_specs:show", base.READER,
              "Show one extra spec of a type.", ("GET", SPEC)),
    base.rule("volume_extension:types_extra_specs:read_sensitive",
              base.RULE_ADMIN_API,
              "See the extra specs that are not visible to users (all but "
              "multiattach, RESKEY:availability_zones and "
              "replication_enabled).", ("GET", SPECS), ("GET", SPEC)),
    base.rule("volume_extension:types_extra_specs:create", base.RULE_ADMIN_API,
              "Create or update extra specs of a type.", ("POST", SPECS)),
    base.rule("volume_extension:types_extra_specs:update", base.RULE_ADMIN_API,
              "Update one extra spec of a type.", ("PUT", SPEC)),
    base.rule("volume_extension:types_extra_specs:delete", base.RULE_ADMIN_API,
              "Delete one extra spec of a type.", ("DELETE", SPEC)),
    base.rule("volume_extension:volume_type_access", base.MEMBER,
              "Include os-volume-type-access:is_public in type views.",
              ("GET", TYPE), ("GET", TYPES)),
    base.rule("volume_extension:volume_type_access:addProjectAccess",
              base.RULE_ADMIN_API, "Give a project access to a private type.",
              ("POST", TYPE_ACTION % "addProjectAccess")),
    base.rule("volume_extension:volume_type_access:removeProjectAccess",
              base.RULE_ADMIN_API, "Take a project's access to a private type.",
              ("POST", TYPE_ACTION % "removeProjectAccess")),
    base.rule("volume_extension:volume_type_access:get_all_for_type",
              base.RULE_ADMIN_API, "List the projects that may use a private "
              "type.", ("GET", "/types/{type_id}/os-volume-type-access")),
]
rules += [
    base.rule("volume_extension:volume_type_encryption:%s" % action,
              base.RULE_ADMIN_API, desc, *operations)
    for action, desc, operations in (
        ("get", "Show a volume type's encryption, or one key of it.",
         (("GET", "/types/{type_id}/encryption"),
          ("GET", "/types/{type_id}/encryption/{key}"))),
        ("create", "Make a volume type encrypted.",
         (("POST", "/types/{type_id}/encryption"),)),
        ("update", "Change a volume type's encryption.",
         (("PUT", "/types/{type_id}/encryption/{encryption_id}"),)),
        ("delete", "Make a volume type unencrypted.",
         (("DELETE", "/types/{type_id}/encryption/{encryption_id}"),)))
]


def list_rules() -> list:
    return rules
