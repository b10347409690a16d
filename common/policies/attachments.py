"""Attachment policies (Cinder's names)."""

from oslo_policy import policy

from common.policies import base


def _rule(name: str, desc: str, method: str, path: str):
    return policy.DocumentedRuleDefault(
        name=name, check_str=base.RULE_ADMIN_OR_OWNER, description=desc,
        operations=[{"method": method, "path": path}])


rules = [
    _rule("volume:attachment_create", "Create an attachment.",
          "POST", "/attachments"),
    _rule("volume:attachment_update", "Update an attachment with a connector.",
          "PUT", "/attachments/{attachment_id}"),
    _rule("volume:attachment_delete", "Delete an attachment.",
          "DELETE", "/attachments/{attachment_id}"),
    _rule("volume:attachment_complete", "Mark an attachment attached.",
          "POST", "/attachments/{attachment_id}/action (os-complete)"),
]


def list_rules() -> list:
    return rules
