"""Volume policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base


def _rule(name: str, check: str, desc: str, method: str, path: str):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=desc,
        operations=[{"method": method, "path": path}])


def _action(name: str, check: str, desc: str, action: str):
    return _rule(name, check, desc, "POST",
                 "/volumes/{volume_id}/action (%s)" % action)


rules = [
    _rule("volume:create", base.RULE_ADMIN_OR_OWNER, "Create a volume.",
          "POST", "/volumes"),
    _rule("volume:get", base.RULE_ADMIN_OR_OWNER, "Show a volume.",
          "GET", "/volumes/{volume_id}"),
    _rule("volume:get_all", base.RULE_ADMIN_OR_OWNER, "List volumes.",
          "GET", "/volumes"),
    _rule("volume:update", base.RULE_ADMIN_OR_OWNER,
          "Update a volume, or set its bootable flag.",
          "PUT", "/volumes/{volume_id}"),
    _rule("volume:delete", base.RULE_ADMIN_OR_OWNER, "Delete a volume.",
          "DELETE", "/volumes/{volume_id}"),
    _rule("volume:multiattach", base.RULE_ADMIN_OR_OWNER,
          "Create a volume of a multiattach type, or retype into one.",
          "POST", "/volumes"),
    _rule("volume:multiattach_bootable_volume", base.RULE_ADMIN_OR_OWNER,
          "Attach a bootable multiattach volume that is already attached.",
          "POST", "/attachments"),
    _rule("volume_extension:volume_tenant_attribute", base.RULE_ADMIN_API,
          "Show the owning project of a volume.", "GET", "/volumes/detail"),
    _rule("volume_extension:volume_host_attribute", base.RULE_ADMIN_API,
          "Show the host of a volume.", "GET", "/volumes/detail"),
    _action("volume:retype", base.RULE_ADMIN_OR_OWNER,
            "Change a volume's type.", "os-retype"),
    _action("volume:extend", base.RULE_ADMIN_OR_OWNER,
            "Extend a volume.", "os-extend"),
    _action("volume:extend_attached_volume", base.RULE_ADMIN_OR_OWNER,
            "Extend a volume that is in use (3.42+).", "os-extend"),
    _action("volume:update_readonly_flag", base.RULE_ADMIN_OR_OWNER,
            "Make a volume read-only for new attachments, or not.",
            "os-update_readonly_flag"),
    _action("volume_extension:volume_actions:detach",
            base.RULE_ADMIN_OR_OWNER,
            "Detach one attachment of a volume (legacy).", "os-detach"),
    _action("volume_extension:volume_admin_actions:force_delete",
            base.RULE_ADMIN_API, "Force-delete a volume.", "os-force_delete"),
    _action("volume_extension:volume_admin_actions:reset_status",
            base.RULE_ADMIN_API, "Reset a volume's statuses.",
            "os-reset_status"),
    _action("volume_extension:volume_admin_actions:force_detach",
            base.RULE_ADMIN_API,
            "Delete one attachment whatever its status, terminating only "
            "its own connection.", "os-force_detach"),
    _action("volume_extension:volume_admin_actions:migrate_volume",
            base.RULE_ADMIN_API, "Migrate a volume.", "os-migrate_volume"),
]


def list_rules() -> list:
    return rules
