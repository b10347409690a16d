"""User message policies (Cinder's names and defaults)."""

from common.policies import base


rules = [
    base.rule("message:get_all", base.READER, "List messages.",
              ("GET", "/messages")),
    base.rule("message:get", base.READER, "Show a message.",
              ("GET", "/messages/{message_id}")),
    base.rule("message:delete", base.MEMBER, "Delete a message.",
              ("DELETE", "/messages/{message_id}")),
]


def list_rules() -> list:
    return rules
