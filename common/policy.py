"""oslo.policy enforcement with Ashlar's defaults (``common/policies``)."""

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from oslo_config import cfg
from oslo_policy import policy

from common import exception
from common import policies
from common.context import RequestContext

#: Seconds between two looks at the policy file for changes.
RECHECK_INTERVAL = 1.0


#: Checks whose result depends on the rule, target and credentials alone
#: (not, e.g., on an ``http:`` check's remote answer).
_PURE_CHECKS = frozenset({"TrueCheck", "FalseCheck", "NotCheck", "AndCheck",
                          "OrCheck", "RuleCheck", "RoleCheck",
                          "GenericCheck"})
_MEMO_LIMIT = 10000


def _pure(check: object) -> bool:
    if type(check).__name__ not in _PURE_CHECKS:
        return False
    inner = list(getattr(check, "rules", ()))
    if isinstance(check, policy.NotCheck):
        inner.append(check.rule)
    return all(_pure(sub) for sub in inner)


class Enforcer(policy.Enforcer):
    """An Enforcer that looks for policy file changes at most once per
    ``RECHECK_INTERVAL`` and remembers its decisions until the next look.

    NOTE(ashlar): oslo.policy searches the config dirs for the file and
    stats it on every check (a dozen system calls), then evaluates the rule
    tree, inspecting each check's signature; a request makes two or three
    checks, about a tenth of a millisecond each.  Decisions are remembered
    only while every rule is a pure function of target and credentials.

    NOTE(ashlar): oslo.policy is not thread-safe: a reload replaces
    ``self.rules`` with the file's rules and then adds the defaults one by
    one, so a check in another thread meanwhile finds a rule missing and is
    denied (a gunicorn gthread worker's first requests, or a policy file
    change).  One lock per enforcer covers every reload and evaluation;
    with the memo, a check holds it for a dictionary lookup (a rule with an
    ``http:`` check holds it for the remote call: such checks run one at a
    time per process).
    """

    _next_check = 0.0
    _memo: dict | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.RLock()
        super().__init__(*args, **kwargs)

    def load_rules(self, force_reload: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            if force_reload or not self.rules or now >= self._next_check:
                super().load_rules(force_reload)
                self._next_check = now + RECHECK_INTERVAL
                self._memo = ({} if all(_pure(check)
                                        for check in self.rules.values())
                              else None)

    def set_rules(self, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            super().set_rules(*args, **kwargs)
            self._memo = None
            self._next_check = 0.0

    def clear(self) -> None:
        with self._lock:
            super().clear()
            self._memo = None
            self._next_check = 0.0

    def decide(self, action: str, target: dict, creds: dict,
               creds_key: tuple | None = None) -> bool:
        """Whether ``creds`` may do ``action`` on ``target``;
        ``creds_key``: ``_frozen(creds)``, when the caller has it.

        :raises InvalidScope:
        """
        key = (action, _frozen(target),
               _frozen(creds) if creds_key is None else creds_key)
        return self._remembered(
            key, lambda: bool(self.authorize(action, target, creds)))

    def target_free(self, action: str, creds: dict,
                    creds_key: tuple) -> bool:
        """Whether ``action``'s rule answers ``creds`` (``_frozen`` as
        ``creds_key``) alike for every target (``admin_api``; for an
        admin, ``role:admin or (... project_id ...)``): a list view then
        asks once, not once per project.  Remembered as decisions are."""
        return self._remembered(("target_free", action, creds_key),
                                lambda: self._reads_target_free(action, creds))

    def _reads_target_free(self, action: str, creds: dict) -> bool:
        check = self.rules.get(action)
        try:
            return check is not None and _fixed(check, self, creds) is not None
        except (AttributeError, KeyError, TypeError):
            # NOTE(ashlar): a check class of an oslo.policy release we have
            # not read, or a rule that names a missing one: the rule is
            # decided per target, as any other.
            return False

    def _remembered(self, key: tuple, compute: Callable[[], bool]) -> bool:
        """``compute()`` with the rules loaded, remembered under ``key``
        while every rule is pure, until the next look at the file."""
        with self._lock:
            self.load_rules()
            memo = self._memo
            try:
                if memo is not None and key in memo:
                    return memo[key]
            except TypeError:  # an unhashable value: compute afresh
                memo = None
            found = compute()
            if memo is not None and len(memo) < _MEMO_LIMIT:
                memo[key] = found
        return found


#: How deep ``rule:`` references are followed before giving up.
_MAX_DEPTH = 20


def _mentions_target(check: Any, rules: dict, depth: int = 0) -> bool:
    """Whether ``check``'s value may depend on the target: it, or a rule
    it refers to, formats the target into a match (``%(project_id)s``),
    or is a check this function does not know (such as ``http:``)."""
    name = type(check).__name__
    if name in ("TrueCheck", "FalseCheck"):
        return False
    if name in ("GenericCheck", "RoleCheck"):
        return "%" in check.match
    if depth > _MAX_DEPTH:
        return True
    if name == "RuleCheck":
        sub = rules.get(check.match)
        return sub is None or _mentions_target(sub, rules, depth + 1)
    if name in ("AndCheck", "OrCheck"):
        return any(_mentions_target(sub, rules, depth + 1)
                   for sub in check.rules)
    if name == "NotCheck":
        return _mentions_target(check.rule, rules, depth + 1)
    return True


def _fixed(check: Any, enforcer: Enforcer, creds: dict,
           depth: int = 0) -> bool | None:
    """``check``'s value for ``creds`` if it is the same for every target
    (a target-free part decides an ``or`` or an ``and``), else None."""
    if not _mentions_target(check, enforcer.rules):
        return bool(enforcer.enforce(check, {}, creds))
    name = type(check).__name__
    if depth > _MAX_DEPTH:
        return None
    if name == "RuleCheck":
        return _fixed(enforcer.rules[check.match], enforcer, creds,
                      depth + 1)
    if name in ("AndCheck", "OrCheck"):
        values = [_fixed(sub, enforcer, creds, depth + 1)
                  for sub in check.rules]
        decisive = name == "OrCheck"
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if name == "NotCheck":
        value = _fixed(check.rule, enforcer, creds, depth + 1)
        return None if value is None else not value
    return None


def _frozen(values: dict) -> tuple:
    """A hashable key; values keep their type (``True``, ``1`` and ``1.0``
    are equal in Python but not to a ``GenericCheck``)."""
    return tuple(sorted(
        (key, type(value).__name__,
         tuple(value) if isinstance(value, list) else value)
        for key, value in values.items()))


_ENFORCER: Enforcer | None = None
_CREATING = threading.Lock()


def get_enforcer(conf: cfg.ConfigOpts | None = None) -> Enforcer:
    """Return the process's enforcer, creating it on first use.

    NOTE(ashlar): published only with every default registered and the
    rules loaded; a thread that saw it half built denied what it lacked.
    """
    global _ENFORCER
    enforcer = _ENFORCER
    if enforcer is None:
        with _CREATING:
            if _ENFORCER is None:
                built = Enforcer(conf or cfg.CONF)
                built.register_defaults(policies.list_rules())
                built.load_rules()
                _ENFORCER = built
            enforcer = _ENFORCER
    return enforcer


def reset() -> None:
    """Forget the enforcer (tests, or after a config change)."""
    global _ENFORCER
    _ENFORCER = None


#: What a target says for a missing project or host, and a credential for
#: a missing agent binding: none of them is a project id or a valid host
#: (``HOST_PATTERN``), so ``project_id:%(project_id)s`` never matches a
#: caller without a project to an object without one, nor
#: ``agent_host:%(host)s`` a caller that is no agent to an unknown host.
NO_PROJECT = "<no project>"
NO_HOST = "<no host>"
NOT_AN_AGENT = "<not an agent>"
#: A host name as a connector or an agent binding may carry it.
HOST_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,254}$")


def valid_host(host: object) -> bool:
    return isinstance(host, str) and bool(HOST_PATTERN.match(host))


def _credentials(context: RequestContext) -> dict:
    """The context's policy values in a plain dict, plus ``is_admin`` and
    ``agent_host``.

    NOTE(ashlar): oslo.context's mapping warns (DeprecationWarning) each
    time a rule reads a key added to it, and Cinder's rules read
    ``is_admin``.
    """
    creds = dict(context.to_policy_values())
    creds["is_admin"] = getattr(context, "is_admin", False)
    agent_host = getattr(context, "agent_host", None)
    creds["agent_host"] = agent_host if valid_host(agent_host) \
        else NOT_AN_AGENT
    return creds


def _safe_target(target: dict) -> dict:
    """The target with a missing project or an unknown host spelt so
    that no credential can match it."""
    if target.get("project_id") and ("host" not in target
                                     or valid_host(target["host"])):
        return target
    safe = dict(target)
    if not safe.get("project_id"):
        safe["project_id"] = NO_PROJECT
    if "host" in safe and not valid_host(safe["host"]):
        safe["host"] = NO_HOST
    return safe


def _decide(action: str, target: dict, creds: dict,
            creds_key: tuple | None = None) -> bool:
    """Whether ``creds`` may do ``action`` on ``target`` (made safe); an
    invalid scope is a no."""
    try:
        return get_enforcer().decide(action, _safe_target(target), creds,
                                     creds_key)
    except policy.InvalidScope:
        return False


def authorize(context: RequestContext, action: str, target: dict,
              fatal: bool = True) -> bool:
    """Check ``action``; raise PolicyNotAuthorized when denied and fatal."""
    allowed = _decide(action, target, _credentials(context))
    if not allowed and fatal:
        raise exception.PolicyNotAuthorized(action=action)
    return allowed


class Decisions:
    """One caller's decisions within one request (a list view checks a
    few rules per row): its credentials read once, and each action on
    each target decided once.  Made per request, so a policy file
    change shows from the next request on."""

    def __init__(self, context: RequestContext) -> None:
        self._creds = _credentials(context)
        self._creds_key = _frozen(self._creds)
        self._seen: dict[tuple, bool] = {}
        self._target_free: dict[str, bool] = {}

    def allowed(self, action: str, target: dict) -> bool:
        """Whether the caller may do ``action`` on ``target`` (never
        raises: what ``authorize`` with ``fatal=False`` answers).  A rule
        that answers the caller alike for every target is decided on the
        first target only."""
        free = self._target_free.get(action)
        if free is None:
            free = self._target_free[action] = get_enforcer().target_free(
                action, self._creds, self._creds_key)
        key = (action,) if free else (action, _frozen(target))
        try:
            return self._seen[key]
        except KeyError:
            found = self._seen[key] = _decide(action, target, self._creds,
                                              self._creds_key)
        except TypeError:  # an unhashable value: decide afresh
            found = _decide(action, target, self._creds, self._creds_key)
        return found


def check_is_admin(context: RequestContext) -> bool:
    """Whether the context's roles make it an administrator."""
    return get_enforcer().decide("context_is_admin", {},
                                 _credentials(context))
