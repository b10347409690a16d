"""Snapshot policies (Cinder's names and defaults)."""

from common.policies import base


rules = [
    base.rule("volume:create_snapshot", base.MEMBER, "Create a snapshot.",
              ("POST", "/snapshots")),
    base.rule("volume:get_snapshot", base.READER, "Show a snapshot.",
              ("GET", "/snapshots/{snapshot_id}")),
    base.rule("volume:get_all_snapshots", base.READER, "List snapshots.",
              ("GET", "/snapshots"), ("GET", "/snapshots/detail")),
    base.rule("volume:update_snapshot", base.MEMBER, "Update a snapshot.",
              ("PUT", "/snapshots/{snapshot_id}")),
    base.rule("volume:delete_snapshot", base.MEMBER, "Delete a snapshot.",
              ("DELETE", "/snapshots/{snapshot_id}")),
    base.rule("volume:get_snapshot_metadata", base.READER,
              "Show a snapshot's metadata or one key of it.",
              ("GET", "/snapshots/{snapshot_id}/metadata"),
               ("GET", "/snapshots/{snapshot_id}/metadata/{key}")),
    base.rule("volume:update_snapshot_metadata", base.MEMBER,
              "Set or replace a snapshot's metadata.",
              ("POST", "/snapshots/{snapshot_id}/metadata"),
               ("PUT", "/snapshots/{snapshot_id}/metadata"),
               ("PUT", "/snapshots/{snapshot_id}/metadata/{key}")),
    base.rule("volume:delete_snapshot_metadata", base.MEMBER,
              "Delete one key of a snapshot's metadata.",
              ("DELETE", "/snapshots/{snapshot_id}/metadata/{key}")),
    base.rule("volume_extension:extended_snapshot_attributes", base.READER,
              "Show a snapshot's project and progress.",
              ("GET", "/snapshots/detail")),
    base.rule("volume:revert_to_snapshot", base.MEMBER,
              "Revert a volume to its latest snapshot (3.40+).",
              ("POST", "/volumes/{volume_id}/action (revert)")),
    base.rule("volume_extension:snapshot_admin_actions:reset_status",
              base.RULE_ADMIN_API, "Reset a snapshot's status.",
              ("POST", "/snapshots/{snapshot_id}/action (os-reset_status)")),
    base.rule("volume_extension:snapshot_admin_actions:force_delete",
              base.RULE_ADMIN_API, "Force-delete a snapshot.",
              ("POST", "/snapshots/{snapshot_id}/action (os-force_delete)")),
    base.rule("snapshot_extension:snapshot_actions:update_snapshot_status",
              base.MEMBER,
              "Move a creating or deleting snapshot on (a compute host's "
              "assisted snapshot).",
              ("POST", "/snapshots/{snapshot_id}/action "
               "(os-update_snapshot_status)")),
]


def list_rules() -> list:
    return rules
