"""Quota and limit policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base

QUOTA_SET = "/os-quota-sets/{project_id}"

rules = [
    policy.DocumentedRuleDefault(
        name="volume_extension:quotas:show", check_str=base.READER,
        description="Show a project's quotas (with usage, or defaults).",
        operations=[{"method": "GET", "path": QUOTA_SET},
                    {"method": "GET", "path": QUOTA_SET + "/defaults"},
                    {"method": "GET", "path": QUOTA_SET + "?usage=True"}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:quotas:update",
        check_str=base.RULE_ADMIN_API, description="Update a project's quotas.",
        operations=[{"method": "PUT", "path": QUOTA_SET}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:quotas:delete",
        check_str=base.RULE_ADMIN_API,
        description="Reset a project's quotas to the defaults.",
        operations=[{"method": "DELETE", "path": QUOTA_SET}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:quota_classes",
        check_str=base.RULE_ADMIN_API,
        description="Show or update a quota class (the defaults).",
        operations=[{"method": "GET", "path": "/os-quota-class-sets/{class}"},
                    {"method": "PUT",
                     "path": "/os-quota-class-sets/{class}"}]),
    policy.DocumentedRuleDefault(
        name="limits_extension:used_limits", check_str=base.READER,
        description="Show the project's usage in /limits.",
        operations=[{"method": "GET", "path": "/limits"}]),
]


def list_rules() -> list:
    return rules
