"""Manage and unmanage policies (Cinder's names and defaults: admins)."""

from common.policies import base


rules = [
    base.rule("volume_extension:volume_manage", base.RULE_ADMIN_API,
              "Adopt existing storage as a volume.",
              ("POST", "/os-volume-manage"), ("POST", "/manageable_volumes")),
    base.rule("volume_extension:volume_unmanage", base.RULE_ADMIN_API,
              "Forget a volume, its storage left.",
              ("POST", "/volumes/{volume_id}/action (os-unmanage)")),
    base.rule("volume_extension:list_manageable", base.RULE_ADMIN_API,
              "List what a backend holds that a volume could adopt.",
              ("GET", "/os-volume-manage"), ("GET", "/os-volume-manage/detail"),
              ("GET", "/manageable_volumes"),
              ("GET", "/manageable_volumes/detail")),
    base.rule("snapshot_extension:snapshot_manage", base.RULE_ADMIN_API,
              "Adopt existing storage as a snapshot.",
              ("POST", "/os-snapshot-manage"),
              ("POST", "/manageable_snapshots")),
    base.rule("snapshot_extension:snapshot_unmanage", base.RULE_ADMIN_API,
              "Forget a snapshot, its storage left.",
              ("POST", "/snapshots/{snapshot_id}/action (os-unmanage)")),
    base.rule("snapshot_extension:list_manageable", base.RULE_ADMIN_API,
              "List what a backend holds that a snapshot could adopt.",
              ("GET", "/os-snapshot-manage"),
              ("GET", "/os-snapshot-manage/detail"),
              ("GET", "/manageable_snapshots"),
              ("GET", "/manageable_snapshots/detail")),
]


def list_rules() -> list:
    return rules
