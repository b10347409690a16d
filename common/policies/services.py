"""Service, pool and capability policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name="volume_extension:services:index", check_str=base.RULE_ADMIN_API,
        description="List services.",
        operations=[{"method": "GET", "path": "/os-services"}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:services:update", check_str=base.RULE_ADMIN_API,
        description="Enable or disable a service.",
        operations=[{"method": "PUT", "path": "/os-services/{action}"}]),
    policy.DocumentedRuleDefault(
        name="volume:freeze_host", check_str=base.RULE_ADMIN_API,
        description="Freeze a volume host (refused: no replication).",
        operations=[{"method": "PUT", "path": "/os-services/freeze"}]),
    policy.DocumentedRuleDefault(
        name="volume:thaw_host", check_str=base.RULE_ADMIN_API,
        description="Thaw a volume host (refused: no replication).",
        operations=[{"method": "PUT", "path": "/os-services/thaw"}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:hosts", check_str=base.RULE_ADMIN_API,
        description="List hosts and their services, or show the volume "
                    "usage of a volume host.",
        operations=[{"method": "GET", "path": "/os-hosts"},
                    {"method": "GET", "path": "/os-hosts/{host_name}"}]),
    policy.DocumentedRuleDefault(
        name="scheduler_extension:scheduler_stats:get_pools",
        check_str=base.RULE_ADMIN_API, description="List pools.",
        operations=[{"method": "GET", "path": "/scheduler-stats/get_pools"}]),
    policy.DocumentedRuleDefault(
        name="volume_extension:capabilities", check_str=base.RULE_ADMIN_API,
        description="Show a backend's capabilities.",
        operations=[{"method": "GET", "path": "/capabilities/{host}"}]),
]


def list_rules() -> list:
    return rules
