"""services.api.auth: http_basic against an htpasswd file, noauth only on
loopback, the agent binding, and the RPC door's credential check (noauth
and http_basic; keystone runs against a real Keystone in
tests/functional/test_security.py)."""

import base64
import os
import time

import bcrypt
import falcon
import pytest
from falcon import testing
from oslo_config import cfg
from oslo_context import context as oslo_context

from common import exception
from common import policy
from common.conf import api as api_conf
from services.api import auth
from services.api import errors
from services.api import middleware
from services.api import routes


class Versions:
    def on_get(self, req, resp):
        resp.media = {"has_context": "ctxt" in req.context}


class Whoami:
    def on_get(self, req, resp):
        ctxt = req.context.ctxt
        resp.media = {"user": ctxt.user_id, "project": ctxt.project_id,
                      "roles": ctxt.roles, "agent_host": ctxt.agent_host,
                      "is_admin": ctxt.is_admin}


def _conf(tmp_path, strategy="http_basic", **api):
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("auth_strategy", strategy, "api")
    conf.set_override("user_file", str(tmp_path / "htpasswd"), "http_basic")
    conf.set_override("project_id", "ops", "http_basic")
    for name, value in api.items():
        conf.set_override(name, value, "api")
    policy.get_enforcer(conf)
    return conf


def _htpasswd(tmp_path, **users):
    lines = ["%s:%s" % (name, bcrypt.hashpw(password.encode(),
                                            bcrypt.gensalt(rounds=4)).decode())
             for name, password in users.items()]
    (tmp_path / "htpasswd").write_text("\n".join(lines) + "\n")


def _basic(user, password):
    pair = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
    return {"Authorization": "Basic " + pair}


@pytest.fixture
def basic(tmp_path):
    _htpasswd(tmp_path, operator="s3cret", **{"ashlar-agent-c1": "agentpw"})
    conf = _conf(tmp_path)
    inner = falcon.App(middleware=[middleware.RequestId(),
                                   middleware.ProjectInUrl(routes.COLLECTIONS),
                                   middleware.Microversion(),
                                   middleware.Identity(conf)])
    errors.register(inner)
    inner.add_route("/v3/whoami", Whoami())
    inner.add_route("/v3", Versions())
    yield testing.TestClient(auth.wrap(conf, inner)), tmp_path
    policy.reset()


def test_basic_user_is_the_configured_projects_admin(basic):
    client, _ = basic
    body = client.simulate_get("/v3/whoami", headers=dict(
        _basic("operator", "s3cret"), **{"X-Roles": "reader",
                                         "X-Project-Id": "other"})).json
    assert body == {"user": "operator", "project": "ops",
                    "roles": ["admin", "member", "reader"],
                    "agent_host": None, "is_admin": True}


@pytest.mark.parametrize("headers", [
    {}, _basic("operator", "wrong"), _basic("nobody", "s3cret"),
    {"X-Auth-Token": "admin:admin"},
    {"X-Identity-Status": "Confirmed", "X-Roles": "admin"}])
def test_basic_refuses_without_the_right_password(basic, headers):
    client, _ = basic
    resp = client.simulate_get("/v3/whoami", headers=headers)
    assert resp.status_code == 401
    assert resp.json == {"unauthorized": {
        "code": 401,
        "message": "The request you have made requires authentication."}}


def test_a_refused_request_logs_as_no_one_under_its_own_id(basic):
    """What is logged before the caller is known carries this request's
    id and no identity, not the last identity the thread served."""
    client, _ = basic
    client.simulate_get("/v3/whoami", headers=_basic("operator", "s3cret"))
    assert oslo_context.get_current().user_id == "operator"
    resp = client.simulate_get("/v3/whoami", headers=_basic("x", "y"))
    assert resp.status_code == 401
    current = oslo_context.get_current()
    assert current.user_id is None
    assert current.request_id.startswith("req-")
    ok = client.simulate_get("/v3/whoami", headers=_basic("operator",
                                                          "s3cret"))
    assert ok.headers["x-openstack-request-id"] == \
        oslo_context.get_current().request_id


def test_basic_malformed_header_is_400(basic):
    client, _ = basic
    resp = client.simulate_get("/v3/whoami",
                               headers={"Authorization": "Basic !!!"})
    assert resp.status_code == 400 and "badRequest" in resp.json


def test_basic_discovery_needs_no_credential(basic):
    client, _ = basic
    resp = client.simulate_get("/v3", headers={"X-Roles": "admin"})
    assert resp.status_code == 200
    assert resp.json == {"has_context": False}
    assert client.simulate_get("/v3/whoami").status_code == 401


def test_basic_agent_user_is_bound_to_its_host(basic):
    client, _ = basic
    body = client.simulate_get("/v3/whoami",
                               headers=_basic("ashlar-agent-c1",
                                              "agentpw")).json
    assert body == {"user": "ashlar-agent-c1", "project": None,
                    "roles": ["service"], "agent_host": "c1",
                    "is_admin": False}


def test_basic_remembers_a_pair_until_the_file_changes(basic, monkeypatch):
    client, tmp_path = basic
    calls = []
    real = auth.basic_auth.authenticate
    monkeypatch.setattr(auth.basic_auth, "authenticate",
                        lambda *a: calls.append(a) or real(*a))
    for _ in range(3):
        assert client.simulate_get("/v3/whoami", headers=_basic(
            "operator", "s3cret")).status_code == 200
    assert len(calls) == 1
    _htpasswd(tmp_path, operator="changed")
    os.utime(tmp_path / "htpasswd", ns=(time.time_ns(),
                                        time.time_ns() + 10**9))
    assert client.simulate_get("/v3/whoami", headers=_basic(
        "operator", "s3cret")).status_code == 401
    assert client.simulate_get("/v3/whoami", headers=_basic(
        "operator", "changed")).status_code == 200


# -- the agent binding --------------------------------------------------------------
@pytest.mark.parametrize(("user", "domain", "host"), [
    ("ashlar-agent-c1", None, "c1"),
    ("ashlar-agent-c1.example.org", "default", "c1.example.org"),
    ("ashlar-agent-c1", "other", None),
    ("ashlar-agent-", None, None),
    ("ashlar-agent-<no host>", None, None),
    ("c1", None, None),
    (None, None, None)])
def test_agent_host_of_a_user_name(tmp_path, user, domain, host):
    assert auth.agent_host(_conf(tmp_path), user, domain) == host


# -- the RPC door ------------------------------------------------------------------
def test_door_verifies_basic_credentials(basic):
    _client, tmp_path = basic
    verifier = auth.CredentialVerifier(_conf(tmp_path))
    ctxt = verifier.context(_basic("ashlar-agent-c1", "agentpw"),
                            request_id="req-1")
    assert (ctxt.agent_host, ctxt.roles, ctxt.request_id) == (
        "c1", ["service"], "req-1")
    for credential in (None, {}, _basic("ashlar-agent-c1", "nope"),
                       {"X-Roles": "admin", "is_admin": True},
                       {"Authorization": 42}, "Basic x", ["a"]):
        with pytest.raises(exception.NotAuthenticated):
            verifier.context(credential)


def test_basic_password_over_72_bytes_is_401_not_500(basic):
    """bcrypt refuses such a password with a ValueError: a wrong password
    to the caller, on REST and on the door."""
    client, tmp_path = basic
    long = "x" * 73
    resp = client.simulate_get("/v3/whoami", headers=_basic("operator", long))
    assert resp.status_code == 401
    assert resp.json["unauthorized"]["code"] == 401
    verifier = auth.CredentialVerifier(_conf(tmp_path))
    with pytest.raises(exception.NotAuthenticated):
        verifier.context(_basic("ashlar-agent-c1", long))


def test_basic_without_its_user_file_is_503_then_recovers(basic):
    """A user file removed while the api runs: every request gets a 503
    in Cinder's envelope (no closed connection, nobody let in), the door
    says so too, and a restored file serves again."""
    client, tmp_path = basic
    verifier = auth.CredentialVerifier(_conf(tmp_path))
    saved = (tmp_path / "htpasswd").read_text()
    (tmp_path / "htpasswd").unlink()
    for headers in (_basic("operator", "s3cret"), _basic("x", "y")):
        resp = client.simulate_get("/v3/whoami", headers=headers)
        assert resp.status_code == 503
        assert resp.json["serviceUnavailable"]["code"] == 503
    with pytest.raises(exception.AuthenticationUnavailable):
        verifier.context(_basic("ashlar-agent-c1", "agentpw"))
    (tmp_path / "htpasswd").write_text(saved)
    ok = client.simulate_get("/v3/whoami", headers=_basic("operator",
                                                          "s3cret"))
    assert ok.status_code == 200 and ok.json["user"] == "operator"


def test_basic_file_gone_after_the_stat_is_503_not_400(basic, monkeypatch):
    """oslo.middleware answers a file it cannot open with a 400; when the
    file is what is missing, the caller is told 503."""
    client, tmp_path = basic
    real_stat = os.stat
    calls = []

    def stat_then_vanish(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        if str(path) == str(tmp_path / "htpasswd") and not calls:
            calls.append(path)
            os.unlink(path)
        return result
    monkeypatch.setattr(auth.os, "stat", stat_then_vanish)
    resp = client.simulate_get("/v3/whoami",
                               headers=_basic("operator", "s3cret"))
    assert calls and resp.status_code == 503


def test_healthcheck_answers_without_credentials(basic):
    client, _tmp = basic
    resp = client.simulate_get("/healthcheck")
    assert resp.status_code == 200
    assert client.simulate_get("/v3/whoami").status_code == 401


def test_door_in_noauth_reads_the_token_only(tmp_path):
    verifier = auth.CredentialVerifier(_conf(tmp_path, "noauth"))
    ctxt = verifier.context({"X-Auth-Token": "u:p1", "X-Roles": "reader"})
    assert (ctxt.user_id, ctxt.project_id) == ("u", "p1")
    assert ctxt.is_admin and ctxt.agent_host is None


def test_noauth_without_a_credential_is_admin_of_admin(tmp_path):
    """No token, or the none plugin's (``openstack --os-auth-type none``),
    lands where ``cinder --os-project-id admin`` does."""
    verifier = auth.CredentialVerifier(_conf(tmp_path, "noauth"))
    for credential in ({"X-Auth-Token": auth.NONE_PLUGIN_TOKEN},
                       {"X-Auth-Token": "admin"}):
        ctxt = verifier.context(credential)
        assert (ctxt.user_id, ctxt.project_id) == ("admin", "admin")


# -- where noauth may listen -----------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost",
                                  "127.0.0.2"])
def test_noauth_serves_on_loopback(tmp_path, host):
    auth.check_bind(_conf(tmp_path, "noauth", bind_host=host))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "api.example"])
def test_noauth_refuses_other_addresses(tmp_path, host):
    with pytest.raises(exception.NoAuthNotLoopback) as caught:
        auth.check_bind(_conf(tmp_path, "noauth", bind_host=host))
    assert "noauth_allow_remote" in str(caught.value)
    auth.check_bind(_conf(tmp_path, "noauth", bind_host=host,
                          noauth_allow_remote=True))
    auth.check_bind(_conf(tmp_path, "http_basic", bind_host=host))
