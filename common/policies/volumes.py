"""Volume policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base


def _rule(name: str, check: str, desc: str, method: str, path: str):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=desc,
        operations=[{"method": method, "path": path}])


rules = [
    _rule("volume:create", base.RULE_ADMIN_OR_OWNER, "Create a volume.",
          "POST", "/volumes"),
    _rule("volume:get", base.RULE_ADMIN_OR_OWNER, "Show a volume.",
          "GET", "/volumes/{volume_id}"),
    _rule("volume:get_all", base.RULE_ADMIN_OR_OWNER, "List volumes.",
          "GET", "/volumes"),
    _rule("volume:update", base.RULE_ADMIN_OR_OWNER, "Update a volume.",
          "PUT", "/volumes/{volume_id}"),
    _rule("volume:delete", base.RULE_ADMIN_OR_OWNER, "Delete a volume.",
          "DELETE", "/volumes/{volume_id}"),
    _rule("volume:multiattach", base.RULE_ADMIN_OR_OWNER,
          "Create a volume of a multiattach type, or retype into one.",
          "POST", "/volumes"),
    _rule("volume:multiattach_bootable_volume", base.RULE_ADMIN_OR_OWNER,
          "Attach a bootable multiattach volume that is already in use.",
          "POST", "/attachments"),
    _rule("volume_extension:volume_tenant_attribute", base.RULE_ADMIN_API,
          "Show the owning project of a volume.", "GET", "/volumes/detail"),
    _rule("volume_extension:volume_host_attribute", base.RULE_ADMIN_API,
          "Show the host of a volume.", "GET", "/volumes/detail"),
    _rule("volume_extension:volume_admin_actions:force_delete",
          base.RULE_ADMIN_API, "Force-delete a volume.",
          "POST", "/volumes/{volume_id}/action (os-force_delete)"),
]


def list_rules() -> list:
    return rules
