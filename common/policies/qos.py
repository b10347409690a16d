"""QoS specs policies (Cinder's names and defaults: admin)."""

from common.policies import base

_RULE = "volume_extension:qos_specs_manage:%s"

rules = [
    base.rule(_RULE % "create", base.RULE_ADMIN_API, "Create QoS specs.",
              ("POST", "/qos-specs")),
    base.rule(_RULE % "get", base.RULE_ADMIN_API,
              "Show QoS specs or their associations.",
              ("GET", "/qos-specs/{qos_id}"),
              ("GET", "/qos-specs/{qos_id}/associations")),
    base.rule(_RULE % "get_all", base.RULE_ADMIN_API, "List QoS specs.",
              ("GET", "/qos-specs")),
    base.rule(_RULE % "update", base.RULE_ADMIN_API,
              "Set or unset QoS specs keys, associate them with a volume "
              "type or disassociate them.",
              ("PUT", "/qos-specs/{qos_id}"),
              ("PUT", "/qos-specs/{qos_id}/delete_keys"),
              ("GET", "/qos-specs/{qos_id}/associate"),
              ("GET", "/qos-specs/{qos_id}/disassociate"),
              ("GET", "/qos-specs/{qos_id}/disassociate_all")),
    base.rule(_RULE % "delete", base.RULE_ADMIN_API, "Delete QoS specs.",
              ("DELETE", "/qos-specs/{qos_id}")),
]


def list_rules() -> list:
    return rules
