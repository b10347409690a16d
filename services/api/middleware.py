"""falcon middleware: request ids, project-in-URL, auth, microversions, bodies.

Order matters (see ``app.create_app``): the request id comes first so every
later failure carries it; the URL is normalised before routing; the context
exists before any resource runs; the microversion is known before routing so
a method that does not exist at the version can answer 404.
"""

import json
import uuid
from typing import Any

import falcon

from common import context as ashlar_context
from common import exception
from services.api import faults
from services.api import microversion

#: First path segments after /v3/ that are collections, not project ids.
COLLECTIONS = frozenset([
    "volumes", "types", "attachments", "os-services", "scheduler-stats",
    "capabilities", "limits", "os-availability-zone", "extensions"])


class RequestId:
    """Give every request a ``req-<uuid>`` and echo it in the response."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.request_id = "req-%s" % uuid.uuid4()

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: Any, req_succeeded: bool) -> None:
        request_id = req.context.get("request_id")
        if request_id:
            resp.set_header("x-openstack-request-id", request_id)
            resp.set_header("x-compute-request-id", request_id)


class ProjectInUrl:
    """Accept ``/v3/{project_id}/<path>`` and ``/v3/<path>`` alike.

    The project segment is taken out before routing and kept in
    ``req.context.url_project`` so links can be built in the request's form.
    """

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.url_project = None
        path = req.path
        if path.endswith(".json"):
            path = path[:-len(".json")]
        parts = path.split("/")
        # ['', 'v3', '<project or collection>', ...]
        if (len(parts) > 3 and parts[1] == "v3" and parts[2]
                and parts[2] not in COLLECTIONS):
            req.context.url_project = parts[2]
            path = "/".join(parts[:2] + parts[3:])
        req.path = path


class NoAuth:
    """Cinder's ``noauth``: the token ``user:project``; admin by default.

    Roles the request states (``X-Roles``, as keystonemiddleware would set)
    replace the default ``admin``, so non-admin policies can be exercised;
    ``X-Service-Roles`` marks a service caller.  Without a token the caller is
    ``admin:admin`` (Cinder answers a bodiless 204 instead).
    """

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        token = req.get_header("X-Auth-Token") or "admin:admin"
        user_id, sep, project_id = token.partition(":")
        if not sep:
            project_id = user_id
        req.context.ctxt = _context(req, user_id, project_id,
                                    req.get_header("X-Roles"))


class KeystoneHeaders:
    """Read the identity keystonemiddleware's auth_token put in headers."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.get_header("X-Identity-Status") != "Confirmed":
            if req.path.rstrip("/") not in ("", "/v3"):
                raise exception.NotAuthorized()
            return
        req.context.ctxt = _context(req, req.get_header("X-User-Id"),
                                    req.get_header("X-Project-Id"),
                                    req.get_header("X-Roles") or "")


def _context(req: falcon.Request, user_id: str | None, project_id: str | None,
             roles_header: str | None) -> ashlar_context.RequestContext:
    url_project = req.context.url_project
    if url_project and url_project != project_id:
        raise exception.Invalid("Malformed request url")
    if roles_header is None:
        roles = ["admin"]
    else:
        roles = [r.strip() for r in roles_header.split(",") if r.strip()]
    service_roles = [r.strip() for r in
                     (req.get_header("X-Service-Roles") or "").split(",")
                     if r.strip()]
    return ashlar_context.RequestContext(
        user_id=user_id, project_id=project_id, roles=roles,
        service_roles=service_roles, request_id=req.context.request_id)


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
                         resource: Any, req_succeeded: bool) -> None:
        version = req.context.get("api_version")
        if version is not None:
            resp.set_headers(microversion.response_headers(version))


def read_body(req: falcon.Request) -> Any:
    """Return the JSON body, with Cinder's 415/400 answers for bad ones."""
    raw = req.bounded_stream.read()
    if not raw:
        raise exception.MalformedRequestBody()
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UnsupportedMediaType()
    try:
        return json.loads(raw)
    except ValueError:
        raise exception.MalformedRequestBody()


class UnsupportedMediaType(exception.AshlarException):
    msg_fmt = "Unsupported Content-Type"
    code = 415


def not_found_at_version() -> falcon.HTTPError:
    """Cinder's deliberately vague 404 for a method above the version."""
    return falcon.HTTPNotFound(description=faults.GENERIC_NOT_FOUND)
