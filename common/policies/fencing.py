"""Fencing policies (Ashlar's fencing extension)."""

from common.policies import attachments
from common.policies import base


rules = [
    base.rule("volume:attachment_fence", base.MEMBER,
              "Fence an attachment: revoke its host's I/O to the volume at the "
              "backend (Ashlar).",
              ("POST", "/attachments/{attachment_id}/action (ashlar-fence)")),
    base.rule("volume:attachment_takeover", attachments.MEMBER_OR_AGENT,
              "Make an attachment the volume's writer, fencing the other "
              "writers first (Ashlar). A compute agent only through an "
              "attachment the volume's project made for its host: through "
              "one the agent made, the rule must pass without the host.",
              ("POST", "/attachments/{attachment_id}/action (ashlar-takeover)")),
    base.rule("volume:attachment_unfence", base.RULE_ADMIN_API,
              "Lift the fence of an attachment (Ashlar).",
              ("POST", "/attachments/{attachment_id}/action (ashlar-unfence)")),
    base.rule("volume:host_fence", base.RULE_ADMIN_API,
              "Fence, or lift the fence of, every attachment of a compute host "
              "(Ashlar).", ("PUT", "/ashlar-fencing/{fence|unfence}")),
]


def list_rules() -> list:
    return rules
