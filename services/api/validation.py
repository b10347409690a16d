"""Check request bodies and list query parameters, with Cinder's messages.

``validate`` reproduces openstack/cinder
``cinder/api/validation/validators.py``: Draft 4 JSON Schema, minimum and
maximum also applied to digit strings, Cinder's custom formats, and only the
first error reported, as ``Invalid input for field/attribute <last path
element>. Value: <value>. <jsonschema message>`` (an array item as
``<array>[<index>]``), or the bare jsonschema
message for an error about the whole body.  A resource does::

    schema = validation.schema_for(schemas.volumes.CREATE, version)
    validation.validate(schema, req.media)

The query helpers follow ``cinder/api/common.py`` and ``cinder/utils.py``.
Every error is a ``common.exception.ValidationError`` (400, message as is)
or an ``InvalidInput`` (400, "Invalid input received: " prefix).
"""

import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator
from oslo_utils import strutils, uuidutils

from common import exception
from common import states
from services.api.microversion import APIVersion
from services.api.schemas import DB_MAX_INT, Schema, Versioned

_SORT_DIRS = ("asc", "desc")


class _InvalidName(Exception):
    """A blank type name; its text replaces the whole error message."""


#: The formats the schemas may use; jsonschema ignores any other.
#: NOTE: as in Cinder, an exception a checker does not declare in ``raises``
#: ends validation as it is: over-long names (InvalidInput) and bad
#: os-reset_status values (ValidationError with Cinder's own text).
FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("uuid")
def _is_uuid(value: object) -> bool:
    return uuidutils.is_uuid_like(value)


@FORMATS.checks("name", raises=_InvalidName)
def _is_name(value: object) -> bool:
    if isinstance(value, str) and not value.strip():
        raise _InvalidName("An invalid 'name' value was provided. "
                           "The 'name' can not be empty.")
    return True


@FORMATS.checks("printable")
def _is_printable(value: object) -> bool:
    categories = (unicodedata.category(char) for char in str(value or ""))
    return all(cat[0] != "C" and (cat[0] != "Z" or cat == "Zs")
               for cat in categories)


def _check_length(value: object, name: str, min_length: int) -> bool:
    """Check a stripped optional string; raise InvalidInput if it is bad."""
    if not value:
        return True
    try:
        strutils.check_string_length(str(value).strip(), name,
                                     min_length=min_length, max_length=255)
    except ValueError as exc:
        raise exception.InvalidInput(reason=str(exc)) from exc
    return True


@FORMATS.checks("name_non_mandatory_remove_white_spaces")
def _is_volume_name(value: object) -> bool:
    return _check_length(value, "name", 0)


@FORMATS.checks("description_non_mandatory_remove_white_spaces")
def _is_volume_description(value: object) -> bool:
    return _check_length(value, "description", 0)


@FORMATS.checks("disabled_reason", raises=exception.InvalidInput)
def _is_disabled_reason(value: object) -> bool:
    return _check_length(value, "disabled_reason", 1)


@FORMATS.checks("validate_volume_reset_body")
def _is_reset_body(value: object) -> bool:
    if isinstance(value, Mapping) and not any(
            value.get(key) for key in
            ("status", "attach_status", "migration_status")):
        raise exception.ValidationError(
            detail="Must specify 'status', 'attach_status' or "
                   "'migration_status' for update.")
    return True


def _check_status(kind: str, value: object,
                  valid: Collection[str]) -> bool:
    """Raise ValidationError unless value is empty or one of valid."""
    if value and str(value).lower() not in valid:
        raise exception.ValidationError(
            detail=f"{kind}: {value} is invalid, valid statuses are: {valid}.")
    return True


@FORMATS.checks("volume_status")
def _is_volume_status(value: object) -> bool:
    return _check_status("Volume status", value, states.VOLUME_STATUSES)


@FORMATS.checks("volume_attach_status")
def _is_attach_status(value: object) -> bool:
    # NOTE(ashlar): Cinder lists these as a list, the others as a tuple;
    # the message shows which.
    return _check_status("Volume attach status", value,
                         list(states.VOLUME_RESET_ATTACH_STATUSES))


@FORMATS.checks("volume_migration_status")
def _is_migration_status(value: object) -> bool:
    return _check_status("Volume migration status", value,
                         states.VOLUME_RESET_MIGRATION_STATUSES)


def _as_number(value: Any) -> float | None:
    """Return value as a number, like Cinder, or None if it is not one."""
    for convert in (int, float):
        try:
            return convert(value)
        except (TypeError, ValueError):
            continue
    return None


#: A keyword's check: (validator, the keyword's value, the instance, the
#: schema) -> its errors.
_Check = Callable[[Validator, Any, Any, Schema],
                  Iterator[jsonschema.ValidationError]]


def _numeric_bound(keyword: str) -> _Check:
    """Return a Draft 4 bound check that also reads digit strings."""
    check = jsonschema.Draft4Validator.VALIDATORS[keyword]

    def bound(validator: Validator, limit: float, instance: Any,
              schema: Schema) -> Iterator[jsonschema.ValidationError]:
        number = _as_number(instance)
        if number is not None:
            yield from check(validator, limit, number, schema)

    return bound


_Validator = jsonschema.validators.extend(
    jsonschema.Draft4Validator,
    {"minimum": _numeric_bound("minimum"),
     "maximum": _numeric_bound("maximum")})


def schema_for(table: Versioned, version: APIVersion) -> Schema:
    """Return the schema of table that applies at version.

    :raises LookupError: version is older than the table's first entry, so
        the route should not exist at that version.
    """
    for first, schema in reversed(table):
        if version >= first:
            return schema
    raise LookupError(f"No schema at microversion {version}")


#: Validators built so far, by ``id`` of their schema, each with the schema
#: it was built for (which keeps the id from being reused).  Schemas are
#: module-level constants, so this holds a few dozen entries.
_VALIDATORS: dict[int, tuple[Schema, Validator]] = {}
_VALIDATORS_MAX = 512


def _validator(schema: Schema) -> Validator:
    """Return the validator of schema, built once (validators are reusable
    and keep no state between ``iter_errors`` calls)."""
    entry = _VALIDATORS.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    validator = _Validator(schema, format_checker=FORMATS)
    if len(_VALIDATORS) >= _VALIDATORS_MAX:
        _VALIDATORS.clear()
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


def validate(schema: Schema, body: Any) -> None:
    """Check body against schema.

    :raises common.exception.ValidationError: the first error, in Cinder's
        words, e.g. "'volume' is a required property".
    :raises common.exception.InvalidInput: a name or description is longer
        than 255 characters once stripped.
    """
    error = next(_validator(schema).iter_errors(body), None)
    if error is not None:
        raise exception.ValidationError(detail=_message(error))


def _message(error: jsonschema.ValidationError) -> str:
    """Word a jsonschema error as Cinder does."""
    if isinstance(error.cause, _InvalidName):
        return str(error.cause)
    if error.path:
        return (f"Invalid input for field/attribute {_field(error.path)}. "
                f"Value: {error.instance}. {error.message}")
    return error.message


def _field(path: Iterable[str | int]) -> str:
    """The last path element; an array item as ``name[index]`` (Cinder
    names the bare index, which names no field)."""
    *head, last = path
    if isinstance(last, int) and head:
        return "%s[%d]" % (head[-1], last)
    return str(last)


def parse_bool_param(name: str, value: object) -> bool:
    """Parse a strict boolean such as ``all_tenants`` or ``cascade``.

    Accepts booleans and, in any case, 1/0, t/f, true/false, on/off, y/n and
    yes/no.  The caller decides what absence means; ``None`` is rejected
    (Cinder's answer to ``"multiattach": null``).

    :raises common.exception.ValidationError: e.g. "Value 'maybe' for
        'all_tenants' is not a boolean."
    """
    if not strutils.is_valid_boolstr(value):
        raise exception.ValidationError(
            detail=f"Value '{value}' for '{name}' is not a boolean.")
    return strutils.bool_from_string(value, strict=True)


#: Query parameters as falcon's ``req.params`` holds them: a repeated one
#: as a list.
Params = Mapping[str, str | list[str]]


def _param(params: Params, name: str) -> str | None:
    """Return a query parameter; the last one when it is repeated."""
    value = params.get(name)
    return value[-1] if isinstance(value, list) else value


def parse_limit(params: Params, max_limit: int) -> int:
    """Return ``limit``, capped at max_limit, which is also the default.

    :param params: the query parameters, as falcon's ``req.params``.
    :raises common.exception.ValidationError: not an integer, or negative.
    """
    raw = _param(params, "limit")
    if raw is None:
        return max_limit
    try:
        limit = int(raw)
    except ValueError:
        raise exception.ValidationError(
            detail="limit param must be an integer") from None
    if limit < 0:
        raise exception.ValidationError(detail="limit param must be positive")
    return min(limit, max_limit)


def parse_marker(params: Params) -> str | None:
    """Return ``marker``, the id of the last item already seen, or None."""
    return _param(params, "marker")


def parse_offset(params: Params) -> int:
    """Return ``offset``, 0 by default.

    :raises common.exception.ValidationError: e.g. "offset must be >= 0".
    """
    raw = _param(params, "offset")
    try:
        # NOTE(ashlar): oslo.utils annotates ``value`` as int, but it
        # reads any value through ``int(str(value))`` (a wrong stub).
        return strutils.validate_integer(
            0 if raw is None else raw,  # type: ignore[arg-type]
            "offset", 0, DB_MAX_INT)
    except ValueError as exc:
        raise exception.ValidationError(detail=str(exc)) from None


def parse_sort(params: Params, allowed_keys: Collection[str],
               default_keys: tuple[str, ...] = ("created_at", "id"),
               default_dir: str = "desc") -> list[tuple[str, str]]:
    """Return ``[(key, direction), ...]`` from the sort parameters.

    ``sort`` is ``key[:dir],...``; ``sort_key``/``sort_dir`` is the
    deprecated single-key form.  A key without a direction gets default_dir.
    The default_keys not requested are appended, in the direction of the
    first requested key, so ties always break the same way.

    :param allowed_keys: the keys a caller may sort by.
    :raises common.exception.ValidationError: both forms were given.
    :raises common.exception.InvalidInput: a direction other than asc/desc
        (checked first), or a key not in allowed_keys.
    """
    requested = _requested_sort(params, default_keys[0], default_dir)
    if any(direction not in _SORT_DIRS for _key, direction in requested):
        raise exception.InvalidInput(
            reason="Unknown sort direction, must be 'desc' or 'asc'.")
    if any(key not in allowed_keys for key, _direction in requested):
        raise exception.InvalidInput(reason="Invalid sort key")
    keys = [key for key, _direction in requested]
    first_dir = requested[0][1]
    return requested + [(key, first_dir) for key in default_keys
                        if key not in keys]


def _requested_sort(params: Params, default_key: str,
                    default_dir: str) -> list[tuple[str, str]]:
    """Split the sort parameters into (key, direction) pairs."""
    sort = _param(params, "sort")
    if sort is None:
        key = _param(params, "sort_key")
        direction = _param(params, "sort_dir")
        return [((default_key if key is None else key).strip(),
                 (default_dir if direction is None else direction).strip())]
    if "sort_key" in params or "sort_dir" in params:
        raise exception.ValidationError(
            detail="The 'sort_key' and 'sort_dir' parameters are deprecated "
                   "and cannot be used with the 'sort' parameter.")
    pairs = []
    for item in sort.strip().split(","):
        key, _sep, direction = item.partition(":")
        pairs.append((key.strip(), (direction or default_dir).strip()))
    return pairs
