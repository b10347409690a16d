"""oslo.policy enforcement with Ashlar's defaults (``common/policies``)."""

from typing import Any

from oslo_config import cfg
from oslo_policy import policy

from common import exception
from common import policies

_ENFORCER: policy.Enforcer | None = None


def get_enforcer(conf: cfg.ConfigOpts | None = None) -> policy.Enforcer:
    """Return the process's enforcer, creating it on first use."""
    global _ENFORCER
    if _ENFORCER is None:
        _ENFORCER = policy.Enforcer(conf or cfg.CONF)
        _ENFORCER.register_defaults(policies.list_rules())
    return _ENFORCER


def reset() -> None:
    """Forget the enforcer (tests, or after a config change)."""
    global _ENFORCER
    _ENFORCER = None


def _credentials(context: Any) -> dict:
    creds = context.to_policy_values()
    creds["is_admin"] = getattr(context, "is_admin", False)
    return creds


def authorize(context: Any, action: str, target: dict,
              fatal: bool = True) -> bool:
    """Check ``action``; raise PolicyNotAuthorized when denied and fatal."""
    enforcer = get_enforcer()
    try:
        return enforcer.authorize(action, target, _credentials(context),
                                  do_raise=fatal,
                                  exc=exception.PolicyNotAuthorized,
                                  action=action)
    except policy.InvalidScope:
        raise exception.PolicyNotAuthorized(action=action)


def check_is_admin(context: Any) -> bool:
    """Whether the context's roles make it an administrator."""
    creds = context.to_policy_values()
    return get_enforcer().authorize("context_is_admin", {}, creds)
