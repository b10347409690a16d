"""Volume policies (Cinder's names and defaults)."""

from oslo_policy import policy

from common.policies import base


def _action(name: str, check: str, desc: str,
            action: str) -> policy.DocumentedRuleDefault:
    return base.rule(name, check, desc,
                     ("POST", "/volumes/{volume_id}/action (%s)" % action))


rules = [
    base.rule("volume:create", base.MEMBER, "Create a volume.",
              ("POST", "/volumes")),
    base.rule("volume:get", base.READER, "Show a volume.",
              ("GET", "/volumes/{volume_id}")),
    base.rule("volume:get_all", base.READER,
              "List volumes, or show their summary.", ("GET", "/volumes")),
    base.rule("volume:update", base.MEMBER,
              "Update a volume, or set its bootable flag.",
              ("PUT", "/volumes/{volume_id}")),
    base.rule("volume:delete", base.MEMBER, "Delete a volume.",
              ("DELETE", "/volumes/{volume_id}")),
    base.rule("volume:get_volume_metadata", base.READER,
              "Show a volume's metadata or one key of it.",
              ("GET", "/volumes/{volume_id}/metadata"),
              ("GET", "/volumes/{volume_id}/metadata/{key}")),
    base.rule("volume:create_volume_metadata", base.MEMBER,
              "Merge keys into a volume's metadata.",
              ("POST", "/volumes/{volume_id}/metadata")),
    base.rule("volume:update_volume_metadata", base.MEMBER,
              "Replace a volume's metadata, or set one key of it.",
              ("PUT", "/volumes/{volume_id}/metadata"),
              ("PUT", "/volumes/{volume_id}/metadata/{key}")),
    base.rule("volume:delete_volume_metadata", base.MEMBER,
              "Delete one key of a volume's metadata.",
              ("DELETE", "/volumes/{volume_id}/metadata/{key}")),
    base.rule("volume:force_delete", base.RULE_ADMIN_API,
              "Delete a volume whatever its status (DELETE with force, 3.23+).",
              ("DELETE", "/volumes/{volume_id}")),
    base.rule("volume:multiattach", base.MEMBER,
              "Create a volume of a multiattach type, or retype into one.",
              ("POST", "/volumes")),
    base.rule("volume:multiattach_bootable_volume", base.MEMBER,
              "Attach a bootable multiattach volume that is already attached.",
              ("POST", "/attachments")),
    base.rule("volume_extension:volume_tenant_attribute", base.READER,
              "Show the owning project of a volume.", ("GET", "/volumes/detail")),
    base.rule("volume_extension:volume_host_attribute", base.RULE_ADMIN_API,
              "Show the host of a volume (and of its attachments).",
              ("GET", "/volumes/detail")),
    base.rule("volume_extension:volume_mig_status_attribute",
              base.RULE_ADMIN_API,
              "Show a volume's migration status and name id.",
              ("GET", "/volumes/detail")),
    _action("volume:retype", base.MEMBER,
            "Change a volume's type.", "os-retype"),
    _action("volume:extend", base.MEMBER, "Extend a volume.", "os-extend"),
    _action("volume:extend_attached_volume", base.MEMBER,
            "Extend a volume that is in use (3.42+).", "os-extend"),
    _action("volume:update_readonly_flag", base.MEMBER,
            "Make a volume read-only for new attachments, or not.",
            "os-update_readonly_flag"),
    _action("volume_extension:volume_actions:reserve", base.MEMBER,
            "Mark a volume attaching (legacy attach flow).", "os-reserve"),
    _action("volume_extension:volume_actions:unreserve", base.MEMBER,
            "Undo os-reserve (legacy attach flow).", "os-unreserve"),
    _action("volume_extension:volume_actions:detach", base.MEMBER,
            "Detach one attachment of a volume (legacy).", "os-detach"),
    _action("volume_extension:volume_admin_actions:force_delete",
            base.RULE_ADMIN_API, "Force-delete a volume.", "os-force_delete"),
    _action("volume_extension:volume_admin_actions:reset_status",
            base.RULE_ADMIN_API, "Reset a volume's statuses.",
            "os-reset_status"),
    _action("volume_extension:volume_admin_actions:force_detach",
            base.RULE_ADMIN_API,
            "Delete one attachment whatever its status, terminating only "
            "its own connection.", "os-force_detach"),
    _action("volume_extension:volume_admin_actions:migrate_volume",
            base.RULE_ADMIN_API, "Migrate a volume.", "os-migrate_volume"),
]


def list_rules() -> list:
    return rules
