"""Rules the resource policies are built from."""

from oslo_policy import policy

RULE_ADMIN_API = "rule:admin_api"
RULE_ADMIN_OR_OWNER = "rule:admin_or_owner"

rules = [
    policy.RuleDefault("context_is_admin", "role:admin",
                       "Decides who is an administrator."),
    policy.RuleDefault("admin_or_owner",
                       "is_admin:True or project_id:%(project_id)s",
                       "The caller is an administrator or owns the object."),
    policy.RuleDefault("admin_api", "is_admin:True",
                       "The caller is an administrator."),
    policy.RuleDefault("service_or_admin",
                       "is_admin:True or service_roles:service",
                       "The caller is an administrator or a service (a "
                       "service token, or X-Service-Roles in noauth)."),
]


def list_rules() -> list:
    return rules
