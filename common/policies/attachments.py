"""Attachment policies (Cinder's names; Ashlar adds the compute agent)."""

from common.policies import base

#: Cinder's member rule, or the compute agent of the connector's host.
MEMBER_OR_AGENT = "%s or %s" % (base.MEMBER, base.COMPUTE_AGENT)


rules = [
    base.rule("volume:attachment_create", MEMBER_OR_AGENT,
              "Create an attachment.", ("POST", "/attachments")),
    base.rule("volume:attachment_update", MEMBER_OR_AGENT,
              "Update an attachment with a connector.",
              ("PUT", "/attachments/{attachment_id}")),
    base.rule("volume:attachment_delete", MEMBER_OR_AGENT,
              "Delete an attachment.", ("DELETE", "/attachments/{attachment_id}")),
    base.rule("volume:attachment_complete", MEMBER_OR_AGENT,
              "Mark an attachment attached.",
              ("POST", "/attachments/{attachment_id}/action (os-complete)")),
    base.rule("volume:attachment_get", "%s or %s" % (base.READER,
                                                     base.COMPUTE_AGENT),
              "Show an attachment (Ashlar: Cinder decides by project alone).",
              ("GET", "/attachments/{attachment_id}")),
]


def list_rules() -> list:
    return rules
