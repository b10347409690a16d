"""Backup policies (Cinder's names and defaults)."""

from common.policies import base


rules = [
    base.rule("backup:create", base.MEMBER, "Create a backup.",
              ("POST", "/backups")),
    base.rule("backup:get", base.READER, "Show a backup.",
              ("GET", "/backups/{backup_id}")),
    base.rule("backup:get_all", base.READER, "List backups.",
              ("GET", "/backups"), ("GET", "/backups/detail")),
    base.rule("backup:delete", base.MEMBER, "Delete a backup.",
              ("DELETE", "/backups/{backup_id}")),
    base.rule("backup:restore", base.MEMBER, "Restore a backup.",
              ("POST", "/backups/{backup_id}/restore")),
    base.rule("backup:update", base.MEMBER, "Update a backup (3.9+).",
              ("PUT", "/backups/{backup_id}")),
    base.rule("backup:backup-import", base.RULE_ADMIN_API,
              "Import a backup's record.",
              ("POST", "/backups/import_record")),
    base.rule("backup:export-import", base.RULE_ADMIN_API,
              "Export a backup's record.",
              ("GET", "/backups/{backup_id}/export_record")),
    base.rule("volume_extension:backup_admin_actions:reset_status",
              base.RULE_ADMIN_API, "Reset the status of a backup.",
              ("POST", "/backups/{backup_id}/action (os-reset_status)")),
    base.rule("volume_extension:backup_admin_actions:force_delete",
              base.RULE_ADMIN_API, "Force-delete a backup.",
              ("POST", "/backups/{backup_id}/action (os-force_delete)")),
    base.rule("backup:backup_project_attribute", base.RULE_ADMIN_API,
              "Show a backup's project (3.18+).",
              ("GET", "/backups/{backup_id}"), ("GET", "/backups/detail")),
]


def list_rules() -> list:
    return rules
