"""Cluster and worker-cleanup policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name="clusters:get_all", check_str=base.RULE_ADMIN_API,
        description="List clusters.",
        operations=[{"method": "GET", "path": "/clusters"},
                    {"method": "GET", "path": "/clusters/detail"}]),
    policy.DocumentedRuleDefault(
        name="clusters:get", check_str=base.RULE_ADMIN_API,
        description="Show cluster.",
        operations=[{"method": "GET", "path": "/clusters/{cluster_id}"}]),
    policy.DocumentedRuleDefault(
        name="clusters:update", check_str=base.RULE_ADMIN_API,
        description="Update cluster.",
        operations=[{"method": "PUT", "path": "/clusters/{cluster_id}"}]),
    policy.DocumentedRuleDefault(
        name="workers:cleanup", check_str=base.RULE_ADMIN_API,
        description="Clean up workers: have a live volume service resume "
                    "the work of services that are down.",
        operations=[{"method": "POST", "path": "/workers/cleanup"}]),
]


def list_rules() -> list:
    return rules
