"""The one extra-spec matcher: volume type extra specs against capabilities.

The scheduler's capabilities filter and the API's early rejection both call
this module, so they can never disagree about whether a pool fits a type.
The semantics are Cinder's (``cinder/scheduler/filters/extra_specs_ops.py``
and ``capabilities_filter.py``), quirks included:

- A spec value starts with an operator word, then its operand.  Only the
  first word after the operator counts (``s== a b`` compares with ``a``).
- ``=`` means *at least*: ``free_capacity_gb="= 100"`` matches 200.
- ``==``, ``!=``, ``>=``, ``<=`` and ``=`` compare as floats; ``s==``,
  ``s!=``, ``s<``, ``s<=``, ``s>``, ``s>=`` compare as strings; ``<in>`` is
  containment (a substring for strings); ``<is>`` parses both sides with
  ``bool_from_string`` (anything unrecognised reads as False);
  ``<or> a <or> b`` is string equality with any alternative;
  ``<all-in> a b`` needs every operand in the value (all the words count).
- A value without an operator is compared whole with ``==``, so a boolean
  capability ``True`` never equals the spec ``"True"``: use ``<is> True``.
- A capability of None, or an operator without an operand, never matches.
- Keys scoped ``capabilities:`` name a capability (``capabilities:a:b`` is
  ``caps["a"]["b"]``); keys with any other scope (``qos:``, ``RESKEY:``,
  ``provisioning:``, vendor scopes) are not requirements; unscoped keys are.
- A missing capability fails; a list-valued capability passes when any of
  its elements matches.

Where Cinder raises (``<or>`` with no alternative, ``TypeError`` from
comparing a number with a string, ``<in>`` on a number) this module simply
reports no match.
"""

import operator
from collections.abc import Callable, Mapping
from typing import Any

CAPABILITIES_SCOPE = "capabilities"
MULTIATTACH_KEY = "multiattach"
#: The exact value Cinder's volume API compares with to mark a volume
#: multiattach; ``<is> true`` or ``capabilities:multiattach`` do not count.
MULTIATTACH_VALUE = "<is> True"

_IS = "<is>"
_OR = "<or>"
_ALL_IN = "<all-in>"
_MISSING = object()


def _numeric(compare: Callable[[float, float], bool]) -> Callable[[Any, str], bool]:
    """Return a comparison of both sides converted to float."""
    return lambda value, operand: compare(float(value), float(operand))


#: ``oslo_utils.strutils.bool_from_string`` once :func:`_as_bool` has
#: imported it.
_bool_from_string: Callable[[Any], bool] | None = None


def _as_bool(value: Any) -> bool:
    """``value`` read as ``<is>`` reads it: oslo's ``bool_from_string``
    (anything it does not read as true is False)."""
    global _bool_from_string
    if _bool_from_string is None:
        # NOTE(ashlar): imported at the first use: strutils compiles its
        # password-masking patterns at import, about 40 ms of the start
        # of every volume node, which imports this module for its reports
        # but rarely matches an ``<is>``.  Kept afterwards: an import
        # statement costs more than the parse on every reservation of a
        # single-writer type.
        from oslo_utils import strutils
        _bool_from_string = strutils.bool_from_string
    return _bool_from_string(value)


def _is(value: Any, operand: str) -> bool:
    """Compare both sides read as booleans."""
    return _as_bool(value) is _as_bool(operand)


def is_true(spec: str | None) -> bool:
    """Tell whether a spec value says yes, as ``<is>`` reads its operand:
    ``"<is> True"``, or for specs that are not capabilities a bare
    ``"True"`` (``ashlar:multiattach_single_writer``).

    :param spec: the extra-spec value; None (no such spec) is False.
    """
    if spec is None:
        return False
    words = str(spec).split()
    if words and words[0] == _IS:
        words = words[1:]
    return bool(words) and _as_bool(words[0])


def _contains(value: Any, operand: str) -> bool:
    """Tell whether ``operand`` is in ``value`` (a substring for strings)."""
    return operand in value


_OPERATORS: dict[str, Callable[[Any, str], bool]] = {
    # NOTE(ashlar): "=" is "at least", not equality; Cinder's "the = trap".
    "=": _numeric(operator.ge),
    "==": _numeric(operator.eq),
    "!=": _numeric(operator.ne),
    ">=": _numeric(operator.ge),
    "<=": _numeric(operator.le),
    "<in>": _contains,
    _IS: _is,
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
}


def match_value(capability_value: Any, requirement: str | None) -> bool:
    """Tell whether one capability value satisfies one extra-spec value.

    :param capability_value: the value a pool reports (a list is *not*
        expanded here; :func:`unsatisfied_specs` does that).
    :param requirement: the extra-spec value, e.g. ``"<is> True"``.
    :returns: True when the value satisfies the requirement.
    """
    if requirement is None:
        return capability_value is None
    words = requirement.split()
    op = words[0] if words else ""
    if op == _OR:
        return capability_value is not None and _match_or(
            capability_value, words[1:])
    if op == _ALL_IN:
        return _match_all_in(capability_value, words[1:])
    method = _OPERATORS.get(op)
    if method is None:
        return bool(capability_value == requirement)
    if capability_value is None or len(words) < 2:
        return False
    try:
        return bool(method(capability_value, words[1]))
    except (TypeError, ValueError):
        return False


def _match_or(capability_value: Any, words: list[str]) -> bool:
    """Match ``a <or> b <or> c`` (``words``) by string equality.

    NOTE(ashlar): as in Cinder, every second word is taken as a separator
    without checking that it is ``<or>``.
    """
    return any(capability_value == word for word in words[::2])


def _match_all_in(capability_value: Any, operands: list[str]) -> bool:
    """``<all-in> a b``: every operand is in the value (Cinder's operator
    for lists of features); no operand, or a value that cannot contain
    them, is no match."""
    if capability_value is None or not operands:
        return False
    try:
        return all(operand in capability_value for operand in operands)
    except TypeError:
        return False


def _capability_path(key: str) -> tuple[str, ...] | None:
    """Return the capability path an extra-spec key names, or None."""
    scope = key.split(":")
    if scope[0] == CAPABILITIES_SCOPE:
        return tuple(scope[1:])
    if len(scope) > 1:
        return None
    return (key,)


def _lookup(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """Walk nested capabilities along ``path``; ``_MISSING`` if absent."""
    value: Any = capabilities
    for name in path:
        try:
            value = value[name]
        except (KeyError, TypeError):
            return _MISSING
    return value


def _satisfies(capabilities: Mapping[str, Any], path: tuple[str, ...],
               requirement: str | None) -> bool:
    """Tell whether the capability at ``path`` satisfies ``requirement``."""
    value = _lookup(capabilities, path)
    if value is _MISSING:
        return False
    values = value if isinstance(value, list) else [value]
    return any(match_value(item, requirement) for item in values)


def capability_specs(
        extra_specs: Mapping[str, str | None]) -> dict[str, str | None]:
    """Return only the extra specs that are capability requirements.

    :param extra_specs: a volume type's extra specs.
    :returns: the unscoped and ``capabilities:`` scoped specs, in order.
    """
    return {key: value for key, value in extra_specs.items()
            if _capability_path(key) is not None}


def unsatisfied_specs(capabilities: Mapping[str, Any],
                      extra_specs: Mapping[str, str | None]) -> list[str]:
    """List the extra-spec keys a pool does not satisfy.

    :param capabilities: one pool's capabilities.
    :param extra_specs: a volume type's extra specs.
    :returns: the failing keys in the order given; empty when the pool
        satisfies the type.
    """
    return [key for key, requirement in extra_specs.items()
            if (path := _capability_path(key)) is not None
            and not _satisfies(capabilities, path, requirement)]


def is_multiattach_spec(extra_specs: Mapping[str, str | None]) -> bool:
    """Tell whether a type makes its volumes multiattach.

    Cinder's volume API compares the unscoped ``multiattach`` spec with the
    exact string ``"<is> True"``, so ``"<is> true"`` or ``"True"`` do not
    make a volume multiattach (although ``"<is> true"`` still restricts
    placement to multiattach pools).

    :param extra_specs: a volume type's extra specs.
    :returns: True when ``multiattach`` is exactly ``"<is> True"``.
    """
    return extra_specs.get(MULTIATTACH_KEY) == MULTIATTACH_VALUE
