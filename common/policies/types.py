"""Volume type policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name="volume_extension:types_manage", check_str=base.RULE_ADMIN_API,
        description="Create, update and delete volume types and their "
                    "extra specs.",
        operations=[{"method": "POST", "path": "/types"},
                    {"method": "PUT", "path": "/types/{type_id}"},
                    {"method": "DELETE", "path": "/types/{type_id}"},
                    {"method": "POST", "path": "/types/{type_id}/extra_specs"}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:type_get", check_str="",
        description="Show or list volume types.",
        operations=[{"method": "GET", "path": "/types"},
                    {"method": "GET", "path": "/types/{type_id}"}]),
]


def list_rules() -> list:
    return rules
