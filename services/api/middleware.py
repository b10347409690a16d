"""falcon middleware: request ids, project-in-URL, auth, microversions, bodies.

Order matters (see ``app.create_app``): the request id comes first so every
later failure carries it; the URL is normalised before routing; the context
exists before any resource runs; the microversion is known before routing so
a method that does not exist at the version can answer 404.
"""

import json
import re
import time
import uuid
from collections.abc import Collection
from typing import Any, Protocol

import falcon
from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from services.api import auth
from services.api import faults
from services.api import microversion

LOG = logging.getLogger(__name__)

#: Cinder's ``osapi_max_request_body_size``: larger bodies get a 413.
MAX_REQUEST_BODY_SIZE = 114688

REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                         r"[0-9a-f]{4}-[0-9a-f]{12}$")
#: An Accept value Cinder echoes back as the response's Content-Type.
VND_JSON = "application/vnd.openstack.volume+json"


class Middleware(Protocol):
    """What every class here is to ``falcon.App``: falcon's WSGI
    middleware interface, whose ``process_request`` each has (some have
    ``process_response`` too)."""

    def process_request(self, req: falcon.Request,
                        resp: falcon.Response) -> None: ...


class RequestId:
    """Give every request a ``req-<uuid>`` and echo it in the response;
    log one access line per request at INFO (method, path, status,
    duration; the request id in the line's context).

    A well-formed ``X-OpenStack-Request-ID`` from the caller becomes the
    context's ``global_request_id`` (oslo.middleware's convention), so one
    operation can be followed across services; the response always carries
    this service's own id, as Cinder's does.
    """

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.monotonic()
        req.context.request_id = (req.env.get(auth.REQUEST_ID)
                                  or "req-%s" % uuid.uuid4())
        incoming = req.get_header("X-OpenStack-Request-ID") or ""
        req.context.global_request_id = (
            incoming if REQUEST_ID.match(incoming) else None)

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: object, req_succeeded: bool) -> None:
        request_id = req.context.get("request_id")
        if request_id:
            resp.set_header("x-openstack-request-id", request_id)
            resp.set_header("x-compute-request-id", request_id)
        accept = (req.get_header("Accept") or "").split(";")[0].strip()
        if accept == VND_JSON and resp.content_type in (None,
                                                          falcon.MEDIA_JSON):
            resp.content_type = VND_JSON
        started = req.context.get("started")
        LOG.info("%(method)s %(path)s status: %(status)s time: %(time).4f",
                 {"method": req.method, "path": req.relative_uri,
                  "status": resp.status_code,
                  "time": 0.0 if started is None
                  else time.monotonic() - started})


class NoNul:
    """A NUL character in the path or the query is a 400.

    NOTE(ashlar): no Cinder field may hold one, and PostgreSQL refuses
    text with it (a 500 otherwise: the fuzzer found it in list filters).
    """

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if "\x00" in req.path or "%00" in req.query_string or any(
                "\x00" in value for values in req.params.values()
                for value in (values if isinstance(values, list)
                              else [values])):
            raise exception.Invalid("A NUL character is not allowed in a "
                                    "request's path or query.")


class ProjectInUrl:
    """Accept ``/v3/{project_id}/<path>`` and ``/v3/<path>`` alike.

    The project segment is taken out before routing and kept in
    ``req.context.url_project`` so links can be built in the request's form.

    NOTE(ashlar): Cinder routes a project segment only when it matches
    ``project_id_regex`` (hex digits and dashes by default), so ``admin``
    gives a plain 404 there.  Ashlar takes any first segment that is not a
    collection name, which serves keystone project ids and names alike.  As
    in Cinder, ``/v3/{project}`` and ``/v3/{project}/`` alone are 404s, and
    a ``.json`` suffix is tolerated on resource paths.  A collection's
    name with a trailing slash (``GET /v3/volumes/``) is an empty id, a 404
    as in Cinder, not the collection.
    """

    def __init__(self, collections: Collection[str]) -> None:
        """:param collections: the collection names, the first segments
            after ``/v3/`` of the routes (``routes.COLLECTIONS``)."""
        self.collections = frozenset(collections)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.url_project = None
        req.context.original_path = path = req.path
        if path.startswith("/v3/") and path.endswith(".json"):
            path = path[:-len(".json")]
        parts = path.split("/")
        # ['', 'v3', '<project or collection>', '<collection>', ...]
        if (len(parts) > 3 and parts[1] == "v3" and parts[2] and parts[3]
                and parts[2] not in self.collections):
            req.context.url_project = parts[2]
            path = "/".join(parts[:2] + parts[3:])
        if (req.env.get("PATH_INFO", "").endswith("/")
                and path.count("/") == 2 and path.startswith("/v3/")
                and path[len("/v3/"):] in self.collections):
            raise falcon.HTTPNotFound(description=faults.GENERIC_NOT_FOUND)
        req.path = path


class Identity:
    """Put the caller's context on the request (``services.api.auth``).

    In keystone and http_basic modes the WSGI middleware in front of the
    app (``auth.wrap``) verified the credential; version discovery answers
    without one, anything else without a verified identity is a 401.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctxt = auth.context_from_environ(
            self.conf, req.env, request_id=req.context.request_id,
            global_request_id=req.context.global_request_id)
        if ctxt is None:
            if req.path.rstrip("/") not in auth.UNAUTHENTICATED_PATHS:
                raise exception.NotAuthenticated()
            return
        _check_url_project(req, ctxt.project_id)
        req.context.ctxt = ctxt


def _check_url_project(req: falcon.Request, project_id: str | None) -> None:
    """Cinder's 400 for a URL project other than the caller's."""
    url_project = req.context.url_project
    if url_project and url_project != project_id:
        raise exception.Invalid("Malformed request url")


class Microversion:
    """Negotiate ``OpenStack-API-Version`` and echo it on every v3 answer."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.api_version = None
        try:
            req.context.api_version = microversion.parse_header(req.headers)
        except microversion.VersionError as exc:
            resp.status = falcon.code_to_http_status(exc.status)
            resp.media = exc.body
            resp.set_headers(exc.headers)
            resp.complete = True

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: object, req_succeeded: bool) -> None:
        version = req.context.get("api_version")
        if version is None:
            return
        for name, value in microversion.response_headers(version).items():
            if name == "Vary":
                resp.append_header(name, value)
            else:
                resp.set_header(name, value)


def read_body(req: falcon.Request) -> Any:
    """Return the JSON body, with Cinder's 413/415/400 answers for bad ones.

    NOTE(ashlar): Cinder answers an empty POST/PUT body with a 500; it is
    the caller's mistake, so Ashlar says 400 "Malformed request body".
    """
    if (req.content_length or 0) > MAX_REQUEST_BODY_SIZE:
        raise RequestTooLarge()
    raw = req.bounded_stream.read(MAX_REQUEST_BODY_SIZE + 1)
    if len(raw) > MAX_REQUEST_BODY_SIZE:
        raise RequestTooLarge()
    if not raw:
        raise exception.MalformedRequestBody()
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UnsupportedMediaType()
    if b"\\u0000" in raw:
        raise exception.Invalid("A NUL character is not allowed in a "
                                "request body.")
    try:
        # NOTE(ashlar): strict UTF-8 first: json.loads of bytes decodes
        # with 'surrogatepass', letting encoded surrogates through.
        text = raw.decode("utf-8")
        body = json.loads(text)
    except (ValueError, RecursionError):
        raise exception.MalformedRequestBody() from None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(body):
        raise exception.Invalid("A lone UTF-16 surrogate is not allowed in "
                                "a request body.")
    return body


#: A JSON escape of a UTF-16 surrogate (``\ud800`` to ``\udfff``): the
#: only way a parsed body can hold a lone one, which no database takes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string of the parsed body (key or value) holds a surrogate
    that no pair made a character of."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


class UnsupportedMediaType(exception.AshlarException):
    msg_fmt = "Unsupported Content-Type"
    code = 415


class RequestTooLarge(exception.AshlarException):
    msg_fmt = "Request is too large."
    code = 413


def not_found_at_version() -> falcon.HTTPError:
    """Cinder's deliberately vague 404 for a method above the version."""
    return falcon.HTTPNotFound(description=faults.GENERIC_NOT_FOUND)
