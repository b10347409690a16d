"""Volume transfer policies (Cinder's names and defaults)."""

from common.policies import base

_PATHS = ("/os-volume-transfer", "/volume-transfers")


def _on(method: str, suffix: str = "") -> tuple[tuple[str, str], ...]:
    return tuple((method, path + suffix) for path in _PATHS)


rules = [
    base.rule("volume:get_all_transfers", base.READER,
              "List volume transfers.", *_on("GET"), *_on("GET", "/detail")),
    base.rule("volume:create_transfer", base.MEMBER,
              "Offer a volume to another project.", *_on("POST")),
    base.rule("volume:get_transfer", base.READER, "Show a volume transfer.",
              *_on("GET", "/{transfer_id}")),
    base.rule("volume:accept_transfer", base.MEMBER,
              "Accept a volume transfer into the caller's project (with "
              "its auth key).", *_on("POST", "/{transfer_id}/accept")),
    base.rule("volume:delete_transfer", base.MEMBER,
              "Cancel a volume transfer.", *_on("DELETE", "/{transfer_id}")),
]


def list_rules() -> list:
    return rules
