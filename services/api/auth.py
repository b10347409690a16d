"""Who is calling: the three authentication modes, for REST and the RPC door.

``keystone``
    keystonemiddleware's ``auth_token`` validates the token against
    Keystone (and caches the answer); the identity comes from the headers
    it sets, after stripping any a caller sent.
``http_basic``
    ``Authorization: Basic`` checked against an htpasswd file of bcrypt
    entries with oslo.middleware's ``basic_auth`` functions; every user is
    in ``[http_basic] project_id`` with ``[http_basic] roles``.
``noauth``
    Cinder's development scheme (``X-Auth-Token: user:project``, admin
    unless ``X-Roles`` says otherwise), on loopback addresses only.

The RPC door verifies the credential a compute agent's message carries
through the very same middleware (``CredentialVerifier``), so both doors
believe the same things.  In keystone and http_basic modes a user named
``[api] agent_user_prefix`` + host is the compute agent of that host
(``RequestContext.agent_host``).
"""

import hashlib
import ipaddress
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable

import webob
import webob.exc
from oslo_config import cfg
from oslo_log import log as logging
from oslo_middleware import basic_auth
from oslo_middleware import healthcheck

from common import context as ashlar_context
from common import exception
from common import policy
from services.api import faults

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]

#: Paths that answer without credentials (version discovery and the API's
#: OpenAPI document), after the trailing slash is gone.
UNAUTHENTICATED_PATHS = frozenset(["", "/", "/v3", "/openapi.yaml"])
#: oslo.middleware's healthcheck (200 "OK", no detail), before any check.
HEALTHCHECK_PATH = "/healthcheck"
#: Where the http_basic middleware leaves the verified user (an environ key
#: no request header can set).
BASIC_USER = "ashlar.basic_user"
#: Keystone's bootstrap roles and the ones each implies.
IMPLIED_ROLES = {"admin": ("member", "reader"), "member": ("reader",)}
#: The headers a credential may consist of.
CREDENTIAL_HEADERS = ("X-Auth-Token", "Authorization")
#: The environ key of the request id the first WSGI layer gives a request.
REQUEST_ID = "ashlar.request_id"


def with_implied(roles: list[str]) -> list[str]:
    """``roles`` plus those Keystone's bootstrap roles imply (admin ->
    member -> reader), as a Keystone token would list them."""
    result = list(roles)
    for role in roles:
        result += [r for r in IMPLIED_ROLES.get(role, ()) if r not in result]
    return result


def _split(header: str | None) -> list[str]:
    return [item.strip() for item in (header or "").split(",") if item.strip()]


# -- the WSGI layer -------------------------------------------------------------
def anonymous(request_id: str) -> None:
    """Log as no one, under ``request_id``, until the caller is known.

    NOTE(ashlar): oslo.log takes the thread's current oslo.context; without
    this, what is logged before a request's context exists (a refused
    credential) would carry the identity of whatever this thread served
    last.
    """
    ashlar_context.RequestContext(request_id=request_id, is_admin=False)


class _Outer:
    """The first WSGI layer: a request id (``REQUEST_ID`` in the environ),
    an anonymous logging context, oslo.middleware's healthcheck, and
    version discovery past authentication."""

    def __init__(self, inner: WSGIApp, authenticated: WSGIApp) -> None:
        self.inner = inner
        self.authenticated = authenticated
        self.health = healthcheck.Healthcheck(None,
                                              {"path": HEALTHCHECK_PATH})

    def __call__(self, environ: dict, start_response: Callable
                 ) -> Iterable[bytes]:
        environ[REQUEST_ID] = request_id = "req-%s" % uuid.uuid4()
        anonymous(request_id)
        path = environ.get("PATH_INFO", "").rstrip("/")
        if path == HEALTHCHECK_PATH:
            return self.health(environ, start_response)
        if path in UNAUTHENTICATED_PATHS:
            return self.inner(environ, start_response)
        return self.authenticated(environ, start_response)


class BasicAuth:
    """HTTP basic authentication with oslo.middleware's ``basic_auth``
    functions, remembering a verified pair for ``cache_time`` seconds.

    NOTE(ashlar): oslo.middleware's ``BasicAuthMiddleware`` runs bcrypt on
    every request (about 0.2 s of CPU at the usual cost of 12); a pair is
    remembered by its SHA-256 together with the file's identity, so an
    edited file ends every remembered pair at once.
    """

    def __init__(self, app: WSGIApp, conf: cfg.ConfigOpts) -> None:
        self.app = app
        self.user_file = conf.http_basic.user_file
        self.cache_time = conf.http_basic.cache_time
        basic_auth.validate_auth_file(self.user_file)
        self._known: dict[bytes, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, environ: dict, start_response: Callable
                 ) -> Iterable[bytes]:
        environ.pop(BASIC_USER, None)
        try:
            environ[BASIC_USER] = self._user(environ)
        except webob.exc.HTTPException as exc:
            return _fault(exc.code)(environ, start_response)
        return self.app(environ, start_response)

    def _user(self, environ: dict) -> str:
        """:raises webob.exc.HTTPException: 401 or 400 as oslo says; 401
            for a password bcrypt cannot take (over 72 bytes); 503 while
            the user file cannot be read."""
        token = basic_auth.parse_header(environ)
        stat = self._stat()
        key = hashlib.sha256(("%s:%s:%s:%s" % (
            stat.st_ino, stat.st_mtime_ns, stat.st_size, token)
        ).encode()).digest()
        now = time.monotonic()
        with self._lock:
            known = self._known.get(key)
        if known is not None and known[0] > now:
            return known[1]
        username, password = basic_auth.parse_token(token)
        user = self._authenticate(username, password)
        with self._lock:
            if len(self._known) > 10000:
                self._known.clear()
            self._known[key] = (now + self.cache_time, user)
        return user

    def _stat(self) -> os.stat_result:
        """:raises webob.exc.HTTPServiceUnavailable: the file is gone or
            unreadable (nobody can be told apart; no connection is cut)."""
        try:
            return os.stat(self.user_file)
        except OSError as exc:
            LOG.error("http_basic user file %(file)s: %(error)s",
                      {"file": self.user_file, "error": exc})
            raise webob.exc.HTTPServiceUnavailable()

    def _authenticate(self, username: str, password: bytes) -> str:
        """The user name of a pair the file holds.

        NOTE(ashlar): bcrypt refuses a password over 72 bytes with a
        ValueError, which no stored hash can match: that is a wrong
        password.  oslo.middleware answers a file that vanished after our
        ``stat`` with a 400; it is the file's fault, not the caller's.
        """
        try:
            return basic_auth.authenticate(self.user_file, username,
                                           password)["HTTP_X_USER_NAME"]
        except ValueError:
            raise webob.exc.HTTPUnauthorized()
        except webob.exc.HTTPBadRequest:
            self._stat()
            raise


_FAULT_MESSAGES = {
    401: "The request you have made requires authentication.",
    503: "Authentication is unavailable; try again later.",
}


def _fault(code: int) -> webob.Response:
    """Cinder's fault envelope for an authentication failure."""
    message = _FAULT_MESSAGES.get(code, "Malformed authorization header.")
    resp = webob.Response(status=code, content_type="application/json",
                          json_body=faults.fault_body(code, message))
    if code == 401:
        resp.headers["WWW-Authenticate"] = 'Basic realm="ashlar"'
    return resp


def wrap(conf: cfg.ConfigOpts, inner: WSGIApp,
         discovery: bool = True) -> WSGIApp:
    """Put the authentication middleware of ``[api] auth_strategy`` in
    front of ``inner``; with ``discovery`` (REST), behind the first layer
    (``_Outer``): version discovery and the OpenAPI document pass without
    credentials (as Cinder's ``/``), and oslo.middleware's healthcheck
    answers ``/healthcheck`` before anything (as Cinder's pipeline).

    :raises ImportError: keystone mode without keystonemiddleware.
    """
    strategy = conf.api.auth_strategy
    if strategy == "noauth":
        return _Outer(inner, inner) if discovery else inner
    if strategy == "keystone":
        from keystonemiddleware import auth_token
        authenticated = auth_token.AuthProtocol(
            inner, {"oslo_config_config": conf})
    else:
        authenticated = BasicAuth(inner, conf)
    if not discovery:
        return authenticated
    return _Outer(inner, authenticated)


# -- the identity -----------------------------------------------------------------
def agent_host(conf: cfg.ConfigOpts, user_name: str | None,
               domain_id: str | None = None) -> str | None:
    """The compute host a verified user acts for, if it is an agent."""
    prefix = conf.api.agent_user_prefix
    if not prefix or not user_name or not user_name.startswith(prefix):
        return None
    if domain_id is not None and domain_id != conf.api.agent_user_domain_id:
        return None
    host = user_name[len(prefix):]
    return host if policy.valid_host(host) else None


def context_from_environ(conf: cfg.ConfigOpts, environ: dict,
                         **ids: str | None
                         ) -> ashlar_context.RequestContext | None:
    """The caller's context from what this mode's middleware verified;
    None when it verified no one (keystone without a confirmed identity).

    :param ids: ``request_id`` and ``global_request_id``.
    """
    strategy = conf.api.auth_strategy
    if strategy == "keystone":
        return _keystone(conf, environ, ids)
    if strategy == "http_basic":
        user = environ.get(BASIC_USER)
        return _basic(conf, user, ids) if user else None
    return _noauth(environ, ids)


def _keystone(conf: cfg.ConfigOpts, environ: dict,
              ids: dict) -> ashlar_context.RequestContext | None:
    if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
        return None
    ctxt = ashlar_context.RequestContext.from_environ(environ, **ids)
    if "service" in (ctxt.roles or []):
        ctxt.agent_host = agent_host(conf, environ.get("HTTP_X_USER_NAME"),
                                     environ.get("HTTP_X_USER_DOMAIN_ID"))
    return ctxt


def _basic(conf: cfg.ConfigOpts, user: str,
           ids: dict) -> ashlar_context.RequestContext:
    host = agent_host(conf, user)
    if host is not None:
        return ashlar_context.RequestContext(
            user_id=user, user_name=user, project_id=None,
            roles=["service"], agent_host=host, **ids)
    return ashlar_context.RequestContext(
        user_id=user, user_name=user, project_id=conf.http_basic.project_id,
        roles=with_implied(conf.http_basic.roles), **ids)


#: The token keystoneauth's ``none`` plugin sends (``openstack
#: --os-auth-type none``): no credential at all.
NONE_PLUGIN_TOKEN = "notused"
#: Who a noauth request without a token is: admin of the ``admin`` project
#: (where ``cinder --os-auth-type noauth --os-project-id admin`` works).
NOAUTH_DEFAULT = "admin:admin"


def _noauth(environ: dict, ids: dict) -> ashlar_context.RequestContext:
    token = environ.get("HTTP_X_AUTH_TOKEN")
    if not token or token == NONE_PLUGIN_TOKEN:
        token = NOAUTH_DEFAULT
    user_id, sep, project_id = token.partition(":")
    if not sep:
        project_id = user_id
    roles_header = environ.get("HTTP_X_ROLES")
    roles = ["admin"] if roles_header is None else _split(roles_header)
    return ashlar_context.RequestContext(
        user_id=user_id or None, project_id=project_id or None,
        roles=with_implied(roles),
        service_roles=_split(environ.get("HTTP_X_SERVICE_ROLES")), **ids)


# -- the RPC door -----------------------------------------------------------------
class CredentialVerifier:
    """Verify the credential an RPC message carries as REST would.

    The credential is the headers a keystoneauth plugin makes
    (``X-Auth-Token``, or ``Authorization: Basic``); they go through this
    mode's middleware (keystonemiddleware's token cache included) in front
    of an app that only notes that it was reached.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.app = wrap(conf, self._reached, discovery=False)

    @staticmethod
    def _reached(environ: dict, start_response: Callable) -> list[bytes]:
        environ["ashlar.verified"] = True
        start_response("204 No Content", [])
        return []

    def context(self, credential: object,
                **ids: str | None) -> ashlar_context.RequestContext:
        """:raises NotAuthenticated: no credential, or a refused one.
        :raises AuthenticationUnavailable: credentials cannot be checked
            now (the http_basic user file is gone)."""
        if not isinstance(credential, dict):
            credential = {}
        headers = {name: value for name, value in credential.items()
                   if name in CREDENTIAL_HEADERS and isinstance(value, str)}
        environ = webob.Request.blank("/v3/rpc-door", headers=headers).environ
        answered: list[str] = []
        for _chunk in self.app(environ,
                               lambda status, *_: answered.append(status)):
            pass
        ctxt = None
        if environ.get("ashlar.verified"):
            ctxt = context_from_environ(self.conf, environ, **ids)
        if ctxt is None:
            if answered and answered[0].startswith("503"):
                raise exception.AuthenticationUnavailable()
            raise exception.NotAuthenticated()
        return ctxt


# -- where noauth may listen ----------------------------------------------------------
def check_bind(conf: cfg.ConfigOpts) -> None:
    """Refuse noauth on an address other than loopback unless
    ``[api] noauth_allow_remote``; warn whenever noauth serves.

    :raises NoAuthNotLoopback:
    """
    if conf.api.auth_strategy != "noauth":
        return
    if not is_loopback(conf.api.bind_host) and not conf.api.noauth_allow_remote:
        raise exception.NoAuthNotLoopback(host=conf.api.bind_host)
    LOG.warning("auth_strategy is noauth: every caller that reaches "
                "%(host)s:%(port)s may act as an administrator of every "
                "project", {"host": conf.api.bind_host,
                            "port": conf.api.bind_port})


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
