"""Rules the resource policies are built from: Cinder's personas.

Keystone's ``bootstrap`` makes the roles ``admin``, ``member`` and
``reader``, each implying the next, and Cinder writes its defaults for
them: an admin anywhere is an administrator of every project; a member
works on its project's resources; a reader reads them.  A token without a
project (unscoped, or system-scoped without ``admin``) matches none of the
project rules: the operations refuse it before policy is asked (a target
with no project would otherwise match a caller with no project).

Ashlar adds one persona, the **compute agent**: a credential holding the
``service`` role whose user the api bound to one compute host
(``agent_host``, see ``common.context``).  It may manage the attachments
whose connector is its host's, in any project, and nothing else.
"""

from oslo_policy import policy

#: Administrator APIs (services, pools, quotas, types).
RULE_ADMIN_API = "rule:admin_api"
#: A project's reader, or an administrator.
READER = "rule:xena_system_admin_or_project_reader"
#: A project's member, or an administrator.
MEMBER = "rule:xena_system_admin_or_project_member"
#: The compute agent bound to the target's ``host``.
COMPUTE_AGENT = "rule:compute_agent"
#: Legacy owner rule, kept for policy files written against it.
RULE_ADMIN_OR_OWNER = "rule:admin_or_owner"

_PROJECT_READER = "role:reader and project_id:%(project_id)s"
_PROJECT_MEMBER = "role:member and project_id:%(project_id)s"


def rule(name: str, check: str, desc: str,
         *operations: tuple[str, str]) -> policy.DocumentedRuleDefault:
    """A documented default: ``operations`` are ``(method, path)`` pairs."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=desc,
        operations=[{"method": method, "path": path}
                    for method, path in operations])

rules = [
    policy.RuleDefault("context_is_admin", "role:admin",
                       "Decides what is required for the 'is_admin:True' "
                       "check to succeed."),
    policy.RuleDefault("admin_api",
                       "is_admin:True or (role:admin and "
                       "is_admin_project:True)",
                       "Default rule for most Admin APIs."),
    policy.RuleDefault("xena_system_admin_or_project_reader",
                       "(role:admin) or (%s)" % _PROJECT_READER,
                       "An administrator, or a reader of the object's "
                       "project."),
    policy.RuleDefault("xena_system_admin_or_project_member",
                       "(role:admin) or (%s)" % _PROJECT_MEMBER,
                       "An administrator, or a member of the object's "
                       "project."),
    policy.RuleDefault("admin_or_owner",
                       "is_admin:True or (role:admin and "
                       "is_admin_project:True) or project_id:%(project_id)s",
                       "Legacy: an administrator or the object's project."),
    policy.RuleDefault("service_or_admin",
                       "is_admin:True or service_roles:service or "
                       "rule:compute_agent",
                       "An administrator or a service (a service token: "
                       "Nova, or a compute agent); may delete an attachment "
                       "a compute host still holds connected."),
    policy.RuleDefault("compute_agent",
                       "role:service and agent_host:%(host)s",
                       "A compute host's agent acting for its own host: the "
                       "credential's user is bound to the host of the "
                       "attachment's connector ([api] agent_user_prefix)."),
]


def list_rules() -> list:
    return rules
