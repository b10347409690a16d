"""``[api] auth_strategy = keystone``: auth_token in front, discovery open.

keystonemiddleware rejects a request without a token by itself, so nothing
here talks to a keystone server.
"""

import falcon
import pytest
from falcon import testing
from oslo_config import cfg

from common import policy
from common.conf import api as api_conf
from services.api import auth
from services.api import errors
from services.api import middleware
from services.api import routes
from services.api.resources import versions

pytest.importorskip("keystonemiddleware")


class Volumes:
    def on_get(self, req, resp):
        resp.media = {"project": req.context.ctxt.project_id}


def _conf(tmp_path, strategy):
    path = tmp_path / "ashlar.conf"
    path.write_text("[api]\nauth_strategy = %s\n[keystone_authtoken]\n"
                    "www_authenticate_uri = http://keystone.example/v3\n"
                    % strategy)
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf(["--config-file", str(path)], project="ashlar")
    policy.get_enforcer(conf)
    return conf


def _inner(conf):
    app = falcon.App(middleware=[middleware.RequestId(),
                                 middleware.ProjectInUrl(routes.COLLECTIONS),
                                 middleware.Microversion(),
                                 middleware.Identity(conf)])
    app.req_options.strip_url_path_trailing_slash = True
    errors.register(app)
    app.add_route("/", versions.Versions())
    app.add_route("/v3", versions.Versions(status="200 OK"))
    app.add_route("/openapi.yaml", versions.OpenAPI())
    app.add_route("/v3/volumes", Volumes())
    return app


@pytest.fixture
def keystone(tmp_path):
    conf = _conf(tmp_path, "keystone")
    return testing.TestClient(auth.wrap(conf, _inner(conf)))


def test_noauth_has_only_the_first_layer(tmp_path):
    conf = _conf(tmp_path, "noauth")
    inner = _inner(conf)
    wrapped = auth.wrap(conf, inner)
    assert wrapped.inner is inner and wrapped.authenticated is inner


@pytest.mark.parametrize(("path", "status"), [
    ("/", 300), ("/v3", 200), ("/v3/", 200), ("/openapi.yaml", 200)])
def test_discovery_needs_no_token(keystone, path, status):
    resp = keystone.simulate_get(path)
    assert resp.status_code == status


def test_other_paths_need_a_token(keystone):
    resp = keystone.simulate_get("/v3/volumes")
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == \
        'Keystone uri="http://keystone.example/v3"'


def test_identity_headers_from_the_caller_are_not_trusted(keystone):
    resp = keystone.simulate_get("/v3/volumes", headers={
        "X-Identity-Status": "Confirmed", "X-Project-Id": "p1",
        "X-Roles": "admin"})
    assert resp.status_code == 401
