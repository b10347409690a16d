"""Request ids, the project in URLs, noauth, bodies and the fault envelope,
through a falcon app with Ashlar's middleware and error handlers."""

import json
import re
from unittest import mock

import falcon
import pytest
from falcon import testing
from oslo_config import cfg

from common import policy
from common.conf import api as api_conf
from services.api import errors
from services.api import middleware
from services.api import routes
from services.api.resources import base

REQ_ID = re.compile(r"^req-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$")


class Echo:
    """Answers with what the middleware made of the request."""

    def on_get(self, req, resp, **params):
        ctxt = req.context.ctxt
        resp.media = {"user": ctxt.user_id, "project": ctxt.project_id,
                      "roles": ctxt.roles, "is_admin": ctxt.is_admin,
                      "service_roles": ctxt.service_roles,
                      "global_request_id": ctxt.global_request_id,
                      "url_project": req.context.url_project,
                      "path": req.path, "params": params}

    def on_post(self, req, resp, **params):
        resp.media = {"body": middleware.read_body(req)}


class Paged:
    """Pages of three rows; ``rows`` says how many this one holds."""

    def on_get(self, req, resp):
        count = req.get_param_as_int("rows", default=2)
        rows = [type("Row", (), {"id": "id-%d" % i}) for i in range(count)]
        resp.media = base.next_links(req, "volumes", rows, 3)


class Boom:
    def on_get(self, req, resp):
        raise RuntimeError("secret detail")


def _app(strategy="noauth"):
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf([], project="ashlar")
    conf.set_override("auth_strategy", strategy, "api")
    policy.get_enforcer(conf)
    app = falcon.App(middleware=[middleware.RequestId(),
                                 middleware.ProjectInUrl(routes.COLLECTIONS),
                                 middleware.Microversion(),
                                 middleware.Identity(conf)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    app.resp_options.media_handlers[middleware.VND_JSON] = \
        falcon.media.JSONHandler()
    errors.register(app)
    app.add_route("/", Echo())
    app.add_route("/v3", Echo())
    app.add_route("/v3/volumes", Echo())
    app.add_route("/v3/volumes/detail", Paged())
    app.add_route("/v3/volumes/{volume_id}", Echo())
    app.add_route("/v3/boom", Boom())
    return testing.TestClient(app)


@pytest.fixture
def client():
    return _app()


def _fault(resp, key, code):
    assert resp.status_code == code
    assert list(resp.json) == [key]
    assert resp.json[key]["code"] == code
    return resp.json[key]["message"]


# -- request ids ---------------------------------------------------------------
def test_each_request_logs_one_access_line(client, caplog):
    caplog.set_level("INFO", logger="services.api.middleware")
    client.simulate_get("/v3/volumes", query_string="limit=2")
    client.simulate_delete("/v3/volumes")
    lines = [r.getMessage() for r in caplog.records
             if r.name == "services.api.middleware"]
    assert len(lines) == 2, lines
    assert re.fullmatch(r"GET /v3/volumes\?limit=2 status: 200 time: "
                        r"\d+\.\d{4}", lines[0]), lines[0]
    assert lines[1].startswith("DELETE /v3/volumes status: 404 ")


def test_request_id_on_success_and_failure(client):
    for path in ("/v3/volumes", "/v3/nowhere", "/v3/boom"):
        resp = client.simulate_get(path)
        rid = resp.headers["x-openstack-request-id"]
        assert REQ_ID.match(rid)
        assert resp.headers["x-compute-request-id"] == rid


def test_callers_request_id_becomes_the_global_one(client):
    mine = "req-12345678-1234-1234-1234-123456789abc"
    resp = client.simulate_get("/v3/volumes",
                               headers={"X-OpenStack-Request-ID": mine})
    assert resp.headers["x-openstack-request-id"] != mine
    assert resp.json["global_request_id"] == mine


def test_malformed_caller_request_id_is_dropped(client):
    resp = client.simulate_get("/v3/volumes", headers={
        "X-OpenStack-Request-ID": "evil\nheader"})
    assert resp.json["global_request_id"] is None


# -- project in URL ------------------------------------------------------------
@pytest.mark.parametrize(("path", "project", "routed"), [
    ("/v3/volumes", None, "/v3/volumes"),
    ("/v3/p1/volumes", "p1", "/v3/volumes"),
    ("/v3/p1/volumes/abc", "p1", "/v3/volumes/abc"),
    ("/v3/p1/volumes.json", "p1", "/v3/volumes"),
    ("/v3/volumes/abc.json", None, "/v3/volumes/abc"),
])
def test_project_segment_is_optional(client, path, project, routed):
    token = "u:%s" % (project or "p0")
    resp = client.simulate_get(path, headers={"X-Auth-Token": token})
    assert resp.status_code == 200
    assert resp.json["url_project"] == project
    assert resp.json["path"] == routed


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "POST"])
@pytest.mark.parametrize("path", ["/v3/volumes/", "/v3/p0/volumes/"])
def test_a_collection_with_a_trailing_slash_is_an_empty_id(client, method,
                                                           path):
    """Tempest's test_get_volume_without_passing_volume_id: Cinder's 404,
    not the list."""
    resp = client.simulate_request(method, path,
                                   headers={"X-Auth-Token": "u:p0"})
    assert _fault(resp, "itemNotFound", 404) == \
        "The resource could not be found."


def test_a_trailing_slash_elsewhere_is_still_stripped(client):
    for path in ("/v3/", "/v3/volumes/abc/", "/v3/p0/volumes/abc/"):
        resp = client.simulate_get(path, headers={"X-Auth-Token": "u:p0"})
        assert resp.status_code == 200, path


def test_every_collection_routed_is_known_to_the_project_segment():
    """A collection missing from COLLECTIONS would be taken for a project
    in ``/v3/<collection>/<id>``."""
    conf = mock.MagicMock()
    conf.api.max_limit = 1000
    firsts = {path.split("/")[2]
              for path, _resource in routes.route_table(mock.MagicMock(), conf)
              if path.startswith("/v3/") and path.count("/") >= 2}
    assert firsts == routes.COLLECTIONS


@pytest.mark.parametrize("path", ["/v3/p1", "/v3/p1/", "/v3.json",
                                  "/v3/nowhere", "/v3/p1/nowhere"])
def test_project_alone_and_unknown_paths_are_404(client, path):
    resp = client.simulate_get(path, headers={"X-Auth-Token": "u:p1"})
    assert _fault(resp, "itemNotFound", 404) == \
        "The resource could not be found."


def test_project_must_be_the_callers(client):
    resp = client.simulate_get("/v3/p2/volumes",
                               headers={"X-Auth-Token": "u:p1"})
    assert _fault(resp, "badRequest", 400) == "Malformed request url"


def test_unsupported_method_is_404_not_405(client):
    resp = client.simulate_delete("/v3/volumes")
    assert _fault(resp, "itemNotFound", 404) == \
        "The resource could not be found."


# -- noauth ----------------------------------------------------------------------
@pytest.mark.parametrize(("token", "user", "project"), [
    (None, "admin", "admin"),
    ("alice:p1", "alice", "p1"),
    ("solo", "solo", "solo"),
    (":p1", None, "p1"),
    ("notused", "admin", "admin"),  # keystoneauth's none plugin
])
def test_noauth_token(client, token, user, project):
    headers = {"X-Auth-Token": token} if token else {}
    body = client.simulate_get("/v3/volumes", headers=headers).json
    assert (body["user"], body["project"]) == (user, project)
    assert body["roles"] == ["admin", "member", "reader"]
    assert body["is_admin"] is True


@pytest.mark.parametrize(("roles", "implied"), [
    ("member", ["member", "reader"]),
    ("reader", ["reader"]),
    ("member,admin", ["member", "admin", "reader"]),
    ("", []),
])
def test_noauth_roles_imply_as_keystone_bootstrap_does(client, roles,
                                                       implied):
    body = client.simulate_get("/v3/volumes", headers={
        "X-Auth-Token": "u:p1", "X-Roles": roles}).json
    assert body["roles"] == implied


def test_noauth_x_headers_do_not_override_the_token(client):
    body = client.simulate_get("/v3/volumes", headers={
        "X-Auth-Token": "alice:p1", "X-User-Id": "bob",
        "X-Project-Id": "p2"}).json
    assert (body["user"], body["project"]) == ("alice", "p1")


def test_noauth_honours_x_roles(client):
    body = client.simulate_get("/v3/volumes", headers={
        "X-Auth-Token": "alice:p1", "X-Roles": "member, reader"}).json
    assert body["roles"] == ["member", "reader"]
    assert body["is_admin"] is False
    body = client.simulate_get("/v3/volumes", headers={
        "X-Auth-Token": "alice:p1", "X-Roles": ""}).json
    assert (body["roles"], body["is_admin"]) == ([], False)


def test_noauth_service_roles(client):
    body = client.simulate_get("/v3/volumes", headers={
        "X-Auth-Token": "nova:service", "X-Roles": "member",
        "X-Service-Roles": "service,admin"}).json
    assert body["service_roles"] == ["service", "admin"]
    assert body["is_admin"] is False


# -- keystone headers ------------------------------------------------------------
@pytest.fixture
def keystone():
    return _app("keystone")


def test_keystone_identity_from_auth_token_headers(keystone):
    body = keystone.simulate_get("/v3/p1/volumes", headers={
        "X-Identity-Status": "Confirmed", "X-User-Id": "u1",
        "X-Project-Id": "p1", "X-Roles": "member",
        "X-Service-Roles": "service"}).json
    assert (body["user"], body["project"]) == ("u1", "p1")
    assert body["roles"] == ["member"]
    assert body["service_roles"] == ["service"]
    assert body["is_admin"] is False
    assert body["url_project"] == "p1"


def test_keystone_admin_role(keystone):
    body = keystone.simulate_get("/v3/volumes", headers={
        "X-Identity-Status": "Confirmed", "X-User-Id": "u1",
        "X-Project-Id": "p1", "X-Roles": "admin,member"}).json
    assert body["is_admin"] is True


@pytest.mark.parametrize("status", [None, "Invalid"])
def test_keystone_without_identity_is_401(keystone, status):
    headers = {"X-Identity-Status": status} if status else {}
    resp = keystone.simulate_get("/v3/volumes", headers=headers)
    assert _fault(resp, "unauthorized", 401) == \
        "The request you have made requires authentication."


def test_keystone_url_project_must_match(keystone):
    resp = keystone.simulate_get("/v3/p2/volumes", headers={
        "X-Identity-Status": "Confirmed", "X-User-Id": "u1",
        "X-Project-Id": "p1", "X-Roles": "member"})
    assert _fault(resp, "badRequest", 400) == "Malformed request url"


# -- bodies ------------------------------------------------------------------------
def _post(client, data, content_type="application/json"):
    headers = {"Content-Type": content_type} if content_type else {}
    return client.simulate_post("/v3/volumes", body=data, headers=headers)


@pytest.mark.parametrize("content_type", [None, "text/plain", "text/json",
                                          "application/xml"])
def test_body_needs_json_content_type(client, content_type):
    resp = _post(client, b'{"a": 1}', content_type)
    assert _fault(resp, "badMediaType", 415) == "Unsupported Content-Type"


@pytest.mark.parametrize("data", [b"", b"{bad", b'{"a": ', b"\xff\xfe",
                                  b"[" * 20000 + b"]" * 20000])
def test_bad_json_is_400(client, data):
    assert _fault(_post(client, data), "badRequest", 400) == \
        "Malformed request body"


def test_json_with_charset(client):
    resp = _post(client, b'{"a": 1}', "application/json; charset=utf-8")
    assert resp.json == {"body": {"a": 1}}


def test_too_large_body_is_413(client):
    data = json.dumps({"a": "x" * middleware.MAX_REQUEST_BODY_SIZE}).encode()
    resp = _post(client, data)
    assert _fault(resp, "overLimit", 413) == "Request is too large."
    assert resp.json["overLimit"]["retryAfter"] == "0"
    assert resp.headers["Retry-After"] == "0"


def test_unexpected_error_is_a_generic_500(client):
    resp = client.simulate_get("/v3/boom")
    message = _fault(resp, "computeFault", 500)
    assert message == ("The server has either erred or is incapable of "
                       "performing the requested operation.")
    assert "secret" not in resp.text


# -- microversion headers ----------------------------------------------------------
def test_vary_is_appended_not_replaced(client):
    resp = client.simulate_get("/v3/volumes", headers={
        "OpenStack-API-Version": "volume 3.27"})
    assert resp.headers["OpenStack-API-Version"] == "volume 3.27"
    assert resp.headers["Vary"] == "OpenStack-API-Version"


def test_vendor_accept_is_echoed(client):
    resp = client.simulate_get("/v3/volumes", headers={
        "Accept": "application/vnd.openstack.volume+json"})
    assert resp.headers["Content-Type"] == \
        "application/vnd.openstack.volume+json"
    assert resp.json["project"] == "admin"


# -- next links --------------------------------------------------------------------
def test_next_link_only_after_a_full_page(client):
    assert client.simulate_get("/v3/volumes/detail").json == {}
    body = client.simulate_get("/v3/p1/volumes/detail", params={
        "rows": "3", "sort": "name:asc", "marker": "old"},
        headers={"X-Auth-Token": "u:p1"}).json
    (link,) = body["volumes_links"]
    assert link["rel"] == "next"
    assert link["href"] == ("http://falconframework.org/v3/p1/volumes/detail"
                            "?rows=3&sort=name%3Aasc&marker=id-2")
