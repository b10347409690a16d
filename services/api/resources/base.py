"""Helpers every resource uses: context, version, body, list parameters."""

import re
from collections.abc import Mapping
from typing import Any, TypedDict
from urllib import parse

import falcon

from common import exception
from common.context import RequestContext
from services.api import microversion
from services.api import middleware
from services.api import validation
from services.api.schemas import Versioned


def ctxt(req: falcon.Request) -> RequestContext:
    return req.context.ctxt


def version(req: falcon.Request) -> microversion.APIVersion:
    return req.context.api_version


def require(req: falcon.Request, minimum: microversion.APIVersion) -> None:
    """404, as Cinder answers, for a method newer than the request's version."""
    if version(req) < minimum:
        raise middleware.not_found_at_version()


def body(req: falcon.Request, table: Versioned) -> Any:
    """The request body, validated against the schema for its version."""
    data = middleware.read_body(req)
    try:
        schema = validation.schema_for(table, version(req))
    except LookupError:
        raise middleware.not_found_at_version()
    validation.validate(schema, data)
    return data


def base_url(req: falcon.Request) -> str:
    return req.prefix


def url_project(req: falcon.Request) -> str | None:
    return req.context.url_project


def next_links(req: falcon.Request, key: str, rows: list,
               limit: int) -> dict:
    """``{"<key>_links": [next]}`` when the page is full, else ``{}``.

    The href is the request URL as the caller wrote it (project segment
    included), other query parameters kept, and ``marker`` set to the last
    item's id.  As Cinder, a full page links on even when it is the last
    (the next one is empty): clients follow links until one is missing, and
    Tempest's pagination tests expect exactly that.
    """
    if not (limit and len(rows) >= limit):
        return {}
    query = [(name, value)
             for name, values in req.params.items() if name != "marker"
             for value in (values if isinstance(values, list) else [values])]
    query.append(("marker", rows[-1].id))
    href = "%s%s?%s" % (req.prefix, req.context.get("original_path", req.path),
                        parse.urlencode(query))
    return {"%s_links" % key: [{"rel": "next", "href": href}]}


def flag(req: falcon.Request, name: str, default: bool = False) -> bool:
    """A strict boolean query parameter."""
    value = req.params.get(name)
    if value is None:
        return default
    return validation.parse_bool_param(name, value)


class ListParams(TypedDict):
    """The page a list call asks for (keyword arguments of its DB call)."""

    limit: int
    marker: str | None
    offset: int | None
    sort_keys: list[str]
    sort_dirs: list[str]


def list_params(req: falcon.Request, max_limit: int, sort_map: dict[str, str]
                ) -> ListParams:
    """limit/marker/offset/sort as keyword arguments of a DB list call.

    :param sort_map: API sort key -> column name.
    """
    pairs = validation.parse_sort(req.params, sort_map)
    return {"limit": validation.parse_limit(req.params, max_limit),
            "marker": validation.parse_marker(req.params),
            "offset": validation.parse_offset(req.params) or None,
            "sort_keys": [sort_map[key] for key, _dir in pairs],
            "sort_dirs": [direction for _key, direction in pairs]}


def filters(req: falcon.Request, allowed: dict[str, str],
            bools: tuple[str, ...] = (), ints: tuple[str, ...] = ()
            ) -> dict[str, object]:
    """Known filter parameters mapped to columns; unknown ones are ignored.
    A parameter given more than once counts with its last value.

    :raises ValidationError: a boolean or integer filter that is not one.
    """
    result: dict[str, object] = {}
    for key, column in allowed.items():
        given = req.params.get(key)
        if given is None:
            continue
        value = given[-1] if isinstance(given, list) else given
        if key in bools:
            result[column] = validation.parse_bool_param(key, value)
        elif key in ints:
            if not re.match(r"^-?[0-9]{1,10}$", value):
                raise exception.ValidationError(
                    detail="Invalid filter %s: '%s' is not an integer."
                    % (key, value))
            result[column] = int(value)
        else:
            result[column] = value
    return result


def accepted(resp: falcon.Response) -> None:
    """A 202 with an empty body, as Cinder answers an accepted action."""
    resp.status = falcon.HTTP_202
    resp.content_type = falcon.MEDIA_JSON
    resp.data = b""


def not_found(message: str) -> exception.NotFound:
    return exception.NotFound(message)


def action_body(req: falcon.Request, table: Mapping[str, Versioned]
                ) -> tuple[str, Any]:
    """``{"<action>": value}``: the action's name and value, validated
    against its schema at the request's microversion.

    :raises Invalid: not exactly one known action.
    """
    data = middleware.read_body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exception.Invalid("Malformed request body")
    name = next(iter(data))
    if name not in table:
        raise exception.Invalid("There is no such action: %s" % name)
    try:
        schema = validation.schema_for(table[name], version(req))
    except LookupError:
        raise middleware.not_found_at_version()
    validation.validate(schema, data)
    return name, data[name]



class Lister:
    """A list of one kind of row (``key``: ``snapshots``, ``backups``):
    one page of ``ops.list`` with the query's paging, sorting and
    filters (``sort_map``, ``filter_map``: query key -> column)."""

    key: str
    sort_map: dict[str, str]
    filter_map: dict[str, str]

    def __init__(self, ops: Any, max_limit: int) -> None:
        self.ops = ops
        self.max_limit = max_limit

    def _page(self, req: falcon.Request) -> tuple[list, dict]:
        kwargs = list_params(req, self.max_limit, self.sort_map)
        limit = kwargs["limit"]
        if not limit:
            return [], {}
        rows = self.ops.list(ctxt(req), all_tenants=flag(req, "all_tenants"),
                             filters=filters(req, self.filter_map), **kwargs)
        return rows, next_links(req, self.key, rows, limit)
