"""http_basic mode end to end, as its users use it.

One deployment (api with 2 gunicorn workers in ``[api] auth_strategy =
http_basic``, a scheduler and one volume node with the file backend, on
PostgreSQL and a fresh RabbitMQ vhost) serves every test of this module.
The htpasswd file holds bcrypt entries for ``operator`` (an admin of the
configured project) and the agents of ``compute1`` and ``compute2``.

The clients are the real ones: python-openstackclient and
python-cinderclient as subprocesses, openstacksdk as a library,
``ashlar-agent`` as a subprocess, and raw oslo.messaging on the bus (the
RPC door, and a fake api on a vhost of its own that lies to the agent).
Every refusal is checked together with the state it must have left alone,
as the operator sees it.
"""

import base64
import json
import os
import re
import subprocess
import sys
import uuid

import bcrypt
import openstack
import oslo_messaging
import pytest
import requests

from deploy.testbed import harness
from tests.functional import door

#: The project of the harness's endpoint, configured as the operator's.
PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
OPERATOR = "operator"
AGENT1 = "ashlar-agent-compute1"
AGENT2 = "ashlar-agent-compute2"
PASSWORDS = {OPERATOR: "operator-Secret-1", AGENT1: "compute1-Secret-1",
             AGENT2: "compute2-Secret-1"}
CLI_TIMEOUT = 120
MA_TYPE = {"volume_type": {"name": "multiattach",
                           "extra_specs": {"multiattach": "<is> True"}}}
UNAUTHORIZED = {"unauthorized": {
    "code": 401, "message": "The request you have made requires authentication."}}
REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                        r"[0-9a-f]{4}-[0-9a-f]{12}$")


def basic(user: str, password: str | None = None) -> str:
    """An ``Authorization: Basic`` value (``user``'s own password unless
    ``password`` is given)."""
    pair = "%s:%s" % (user, PASSWORDS[user] if password is None else password)
    return "Basic " + base64.b64encode(pair.encode()).decode()


def htpasswd_line(user: str, password: str) -> str:
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4))
    return "%s:%s\n" % (user, hashed.decode())


def rest_client(endpoint: str, authorization: str | None = None,
                **headers: str) -> harness.Client:
    """harness.Client without its noauth token, with these headers."""
    client = harness.Client(endpoint)
    client.session.headers.pop("X-Auth-Token")
    if authorization:
        client.session.headers["Authorization"] = authorization
    client.session.headers.update(headers)
    return client


# -- the deployment -------------------------------------------------------------
class Ashlar:
    """The running deployment and the operator's view of it."""

    def __init__(self, dep: harness.Deployment, user_file, trans) -> None:
        self.dep = dep
        self.user_file = user_file
        self.transport = trans
        self.base = "http://127.0.0.1:%d" % dep.port
        self.operator = rest_client(dep.endpoint, basic(OPERATOR))

    def volume(self, **fields) -> str:
        """An available volume of the operator's."""
        vid = self.operator.create_volume(size=1, **fields)["id"]
        self.operator.wait_status(vid, "available")
        return vid

    def attach_rest(self, volume_id: str, host: str) -> str:
        """An attachment connected to ``host`` and completed, made by the
        operator."""
        return self.operator.attach(volume_id, host)

    def state(self) -> dict:
        """Every volume's and attachment's status, as the operator sees
        them (all projects)."""
        volumes = self.operator.get("/volumes/detail",
                                    params={"all_tenants": 1})
        attachments = self.operator.get("/attachments",
                                        params={"all_tenants": 1})
        assert volumes.status_code == attachments.status_code == 200
        return {"volumes": {v["id"]: v["status"]
                            for v in volumes.json()["volumes"]},
                "attachments": {a["id"]: a["status"]
                                for a in attachments.json()["attachments"]}}

    def attachment(self, attachment_id: str) -> dict | None:
        resp = self.operator.get("/attachments/%s" % attachment_id)
        if resp.status_code == 404:
            return None
        assert resp.status_code == 200, resp.text
        return resp.json()["attachment"]

    def agent_conf(self, name: str, host: str, user: str | None = None,
                   password: str | None = None,
                   transport_url: str | None = None) -> str:
        """An ``ashlar-agent`` config: ``host``, and ``[agent_auth]``
        http_basic as ``user`` (no ``[agent_auth]`` without a user)."""
        lines = ["[DEFAULT]", "host = %s" % host,
                 "state_path = %s" % (self.dep.tmp / ("agent-" + host)),
                 "transport_url = %s" % (transport_url
                                         or self.dep.transport_url),
                 "rpc_call_timeout = 30"]
        if user is not None:
            lines += ["[agent_auth]", "auth_type = http_basic",
                      "username = %s" % user,
                      "password = %s" % (PASSWORDS[user] if password is None
                                         else password)]
        path = self.dep.tmp / ("%s.conf" % name)
        path.write_text("\n".join(lines) + "\n")
        return str(path)


def agent(conf: str, *args: str) -> subprocess.CompletedProcess:
    """``ashlar-agent --config-file CONF ARGS`` (stdout: its JSON)."""
    return subprocess.run(
        [sys.executable, "-m", "services.agent", "--config-file", conf,
         *args], cwd=harness.REPO, capture_output=True, text=True,
        timeout=CLI_TIMEOUT)


def agent_ok(conf: str, *args: str) -> dict:
    out = agent(conf, *args)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def door_transport(vhost):
    trans = door.transport(vhost)
    yield trans
    trans.cleanup()


@pytest.fixture(scope="module")
def ashlar(tmp_path_factory, vhost, door_transport):
    tmp = tmp_path_factory.mktemp("http-basic")
    user_file = tmp / "htpasswd"
    user_file.write_text("".join(htpasswd_line(user, password)
                                 for user, password in PASSWORDS.items()))
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp, vhost, db_url, api_workers=2)
    dep.db_sync()
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "node1")
        dep.start("api", "services.api", "api", extra=(
            "[api]\nauth_strategy = http_basic\n"
            "[http_basic]\nuser_file = %s\nproject_id = %s\n"
            % (user_file, PROJECT)))
        deployment = Ashlar(dep, user_file, door_transport)
        harness.wait_for(lambda: len(deployment.operator.pools()) == 1,
                         timeout=60, what="the volume node's pool, through "
                         "http_basic auth")
        resp = deployment.operator.post("/types", MA_TYPE)
        assert resp.status_code == 200, resp.text
        # The door's queue exists once a worker serves it: a call before
        # would be dropped by the broker.
        missing = str(uuid.uuid4())

        def door_answers() -> bool:
            try:
                door.call(door_transport, {
                    "request_id": door.request_id(),
                    "credential": {"Authorization": basic(OPERATOR)}},
                    "attachment_get", timeout=5, attachment_id=missing)
            except Exception as exc:  # noqa: BLE001 - the expected refusal
                return type(exc).__name__.startswith("AttachmentNotFound")
            return False
        harness.wait_for(door_answers, timeout=60,
                         what="the api's RPC door to answer")
        yield deployment
    finally:
        dep.stop_all()
        drop()


# -- 1. the real clients ----------------------------------------------------------
def _no_os_env() -> dict:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("OS_", "CINDER_"))}


def openstack_cli(ashlar, *args: str, password: str | None = None):
    """``openstack --os-auth-type http_basic ... ARGS -f json``."""
    return subprocess.run(
        [sys.executable, "-m", "openstackclient.shell",
         "--os-auth-type", "http_basic", "--os-username", OPERATOR,
         "--os-password", password or PASSWORDS[OPERATOR],
         "--os-endpoint", ashlar.base + "/v3", *args, "-f", "json"],
        capture_output=True, text=True, env=_no_os_env(),
        timeout=CLI_TIMEOUT, cwd=harness.REPO)


def cinder_cli(ashlar, *args: str, password: str | None = None):
    """``cinder`` with keystoneauth's http_basic plugin and the endpoint
    given.  NOTE: cinderclient's shell insists on some project
    (``--os-project-id``) before it looks at the plugin; with
    ``--os-endpoint`` it never puts it in a URL."""
    return subprocess.run(
        [sys.executable, "-m", "cinderclient.shell",
         "--os-auth-type", "http_basic", "--os-username", OPERATOR,
         "--os-password", password or PASSWORDS[OPERATOR],
         "--os-project-id", PROJECT, "--os-endpoint", ashlar.base + "/v3",
         *args], capture_output=True, text=True, env=_no_os_env(),
        timeout=CLI_TIMEOUT, cwd=harness.REPO)


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, "exit %d\n%s\n%s" % (
        proc.returncode, proc.stdout, proc.stderr[-3000:])
    return proc.stdout


def test_openstack_cli_creates_lists_and_shows(ashlar):
    created = json.loads(_ok(openstack_cli(
        ashlar, "volume", "create", "--size", "1", "hb-osc-vol")))
    assert created["name"] == "hb-osc-vol" and created["size"] == 1
    assert created["user_id"] == OPERATOR
    ashlar.operator.wait_status(created["id"], "available")
    listed = json.loads(_ok(openstack_cli(ashlar, "volume", "list")))
    assert {v["ID"]: v["Status"] for v in listed}[created["id"]] == \
        "available"
    shown = json.loads(_ok(openstack_cli(ashlar, "volume", "show",
                                         created["id"])))
    assert shown["name"] == "hb-osc-vol" and shown["status"] == "available"
    assert shown["os-vol-tenant-attr:tenant_id"] == PROJECT

    before = ashlar.state()
    refused = openstack_cli(ashlar, "volume", "create", "--size", "1",
                            "hb-osc-refused", password="wrong")
    assert refused.returncode != 0
    assert "401" in refused.stderr, refused.stderr[-3000:]
    assert ashlar.state() == before


def test_cinder_cli_lists(ashlar):
    vid = ashlar.volume(name="hb-cinder-vol")
    listed = _ok(cinder_cli(ashlar, "list"))
    assert vid in listed and "hb-cinder-vol" in listed
    shown = _ok(cinder_cli(ashlar, "show", vid))
    assert "hb-cinder-vol" in shown and "available" in shown
    refused = cinder_cli(ashlar, "list", password="wrong")
    assert refused.returncode != 0
    assert "HTTP 401" in refused.stderr, refused.stderr[-3000:]


def _sdk(ashlar, password: str | None = None, override: bool = False):
    """openstacksdk with keystoneauth's http_basic plugin: the plugin's
    ``endpoint`` serves every service, or (``override``) the block-storage
    endpoint is given on its own."""
    auth = {"username": OPERATOR,
            "password": password or PASSWORDS[OPERATOR]}
    extra = {}
    if override:
        extra["block_storage_endpoint_override"] = ashlar.base + "/v3"
    else:
        auth["endpoint"] = ashlar.base + "/v3"
    return openstack.connect(auth_type="http_basic", auth=auth,
                             load_yaml_config=False, load_envvars=False,
                             **extra)


def test_openstacksdk_creates_lists_and_deletes(ashlar):
    conn = _sdk(ashlar)
    try:
        assert conn.block_storage.get_endpoint().rstrip("/") == \
            ashlar.base + "/v3"
        volume = conn.block_storage.create_volume(size=1, name="hb-sdk-vol")
        harness.wait_for(lambda: conn.block_storage.get_volume(
            volume.id).status == "available",
            what="the sdk's volume to be available")
        assert volume.id in {v.id for v in conn.block_storage.volumes()}
        overridden = _sdk(ashlar, override=True)
        try:
            assert overridden.block_storage.get_volume(volume.id).name == \
                "hb-sdk-vol"
        finally:
            overridden.close()
        conn.block_storage.delete_volume(volume)
        harness.wait_for(lambda: volume.id not in {
            v.id for v in conn.block_storage.volumes()},
            what="the sdk's volume to be gone")
    finally:
        conn.close()

    before = ashlar.state()
    wrong = _sdk(ashlar, password="wrong")
    try:
        with pytest.raises(openstack.exceptions.HttpException) as caught:
            wrong.block_storage.create_volume(size=1, name="hb-sdk-refused")
        assert caught.value.status_code == 401
    finally:
        wrong.close()
    assert ashlar.state() == before


# -- 2. REST refusals ---------------------------------------------------------------
REFUSED = {
    "wrong password": {"Authorization": basic(OPERATOR, "wrong")},
    "unknown user": {"Authorization": basic("mallory",
                                            PASSWORDS[OPERATOR])},
    "no credential": {},
    "noauth token": {"X-Auth-Token": "admin:admin"},
    "noauth token for the project": {"X-Auth-Token": "admin:%s" % PROJECT},
    "forged identity headers": {
        "Authorization": basic(OPERATOR, "wrong"), "X-Roles": "admin",
        "X-Project-Id": PROJECT, "X-User-Id": OPERATOR,
        "X-Identity-Status": "Confirmed", "X-Service-Roles": "service"},
}


@pytest.mark.parametrize("headers", REFUSED.values(), ids=REFUSED.keys())
def test_rest_refuses_without_a_valid_password(ashlar, headers):
    before = ashlar.state()
    vid = next(iter(before["volumes"]), str(uuid.uuid4()))
    calls = [("GET", "/v3/volumes", None),
             ("GET", "/v3/%s/volumes/detail" % PROJECT, None),
             ("POST", "/v3/volumes", {"volume": {"size": 1}}),
             ("POST", "/v3/%s/volumes" % PROJECT, {"volume": {"size": 1}}),
             ("POST", "/v3/types", {"volume_type": {"name": "hb-forged"}}),
             ("DELETE", "/v3/volumes/%s" % vid, None)]
    for method, path, body in calls:
        resp = requests.request(method, ashlar.base + path, json=body,
                                headers=headers, timeout=30)
        assert resp.status_code == 401, (method, path, resp.text)
        assert resp.json() == UNAUTHORIZED
        assert resp.headers["WWW-Authenticate"] == 'Basic realm="ashlar"'
    assert ashlar.state() == before
    names = {t["name"] for t in ashlar.operator.get("/types").json()[
        "volume_types"]}
    assert "hb-forged" not in names


def test_malformed_authorization_is_400(ashlar):
    before = ashlar.state()
    for value in ("Basic !!!", "Bearer abc",
                  "Basic " + base64.b64encode(b"no-colon").decode()):
        resp = requests.post(ashlar.base + "/v3/volumes",
                             json={"volume": {"size": 1}},
                             headers={"Authorization": value}, timeout=30)
        assert resp.status_code == 400, (value, resp.text)
        assert resp.json() == {"badRequest": {
            "code": 400, "message": "Malformed authorization header."}}
    assert ashlar.state() == before


def test_an_agent_user_gets_no_project_data(ashlar):
    """An agent's basic credential is no operator: REST project data is
    403 (it names no project) and nothing is created."""
    before = ashlar.state()
    as_agent = rest_client(ashlar.base + "/v3", basic(AGENT1))
    assert as_agent.get("/volumes").status_code == 403
    resp = as_agent.post("/volumes", {"volume": {"size": 1}})
    assert resp.status_code == 403, resp.text
    assert ashlar.state() == before


def test_discovery_answers_without_credentials(ashlar):
    root = requests.get(ashlar.base + "/", timeout=30)
    assert root.status_code == 300, root.text
    assert any(v["id"].startswith("v3") for v in root.json()["versions"])
    v3 = requests.get(ashlar.base + "/v3", timeout=30)
    assert v3.status_code == 200, v3.text
    assert [v["id"] for v in v3.json()["versions"]] == ["v3.0"]


def test_the_operator_works_and_sees_the_configured_project(ashlar):
    vid = ashlar.volume(name="hb-rest-vol")
    shown = ashlar.operator.get("/volumes/%s" % vid).json()["volume"]
    assert shown["os-vol-tenant-attr:tenant_id"] == PROJECT
    assert shown["user_id"] == OPERATOR
    # Another project in the URL is Cinder's 400.
    other = rest_client(ashlar.base + "/v3/" + "0" * 32, basic(OPERATOR))
    assert other.get("/volumes").status_code == 400


def test_entries_added_while_the_api_runs_work(ashlar, tmp_path):
    """A user made by ``ashlar-manage user set`` ($2b$) and an entry in the
    form Apache's ``htpasswd -B`` writes ($2y$: the same bcrypt under
    Apache's prefix), added to the file while the api runs."""
    conf = tmp_path / "manage.conf"
    conf.write_text("[http_basic]\nuser_file = %s\n" % ashlar.user_file)
    subprocess.run([sys.executable, "-m", "services.manage", "--config-file",
                    str(conf), "user", "set", "clerk"], check=True,
                   capture_output=True, timeout=120, cwd=harness.REPO,
                   env=dict(os.environ, ASHLAR_USER_PASSWORD="clerk-Secret-1"))
    apache = htpasswd_line("apache", "apache-Secret-1").replace(
        ":$2b$", ":$2y$")
    with ashlar.user_file.open("a") as f:
        f.write(apache)
    text = ashlar.user_file.read_text()
    assert re.search(r"^clerk:\$2b\$", text, re.M)
    assert re.search(r"^apache:\$2y\$", text, re.M)
    for user, password in (("clerk", "clerk-Secret-1"),
                           ("apache", "apache-Secret-1")):
        good = rest_client(ashlar.dep.endpoint, "Basic " + base64.b64encode(
            ("%s:%s" % (user, password)).encode()).decode())
        assert good.get("/volumes").status_code == 200
        wrong = rest_client(ashlar.dep.endpoint, "Basic " + base64.b64encode(
            ("%s:wrong" % user).encode()).decode())
        assert wrong.get("/volumes").status_code == 401
    assert ashlar.operator.get("/volumes").status_code == 200


def test_removing_a_user_ends_its_access_at_once(ashlar):
    """A verified pair is remembered for cache_time (300 s here), but an
    edit of the file ends that at once, in every worker."""
    password = "leaver-Secret-1"
    with ashlar.user_file.open("a") as f:
        f.write(htpasswd_line("leaver", password))
    auth = ("leaver", password)
    # NOTE: fresh connections, so that both workers remember the pair.
    for _ in range(10):
        resp = requests.get(ashlar.dep.endpoint + "/volumes", auth=auth,
                            timeout=30)
        assert resp.status_code == 200, resp.text
    kept = [line for line in ashlar.user_file.read_text().splitlines(True)
            if not line.startswith("leaver:")]
    ashlar.user_file.write_text("".join(kept))
    for _ in range(10):
        resp = requests.get(ashlar.dep.endpoint + "/volumes", auth=auth,
                            timeout=30)
        assert resp.status_code == 401, resp.text
    assert ashlar.operator.get("/volumes").status_code == 200


# -- 3. the agent over RPC ------------------------------------------------------------
def test_agent_attaches_and_detaches_with_basic_credentials(ashlar):
    vid = ashlar.volume(volume_type="multiattach")
    conf = ashlar.agent_conf("agent-c1", "compute1", AGENT1)
    attached = agent_ok(conf, "attach", vid, "--instance", str(uuid.uuid4()))
    assert attached["volume_id"] == vid
    assert attached["device"]["path"].endswith(".raw")
    assert os.path.exists(attached["device"]["path"])
    assert ashlar.attachment(attached["id"])["status"] == "attached"
    assert ashlar.operator.volume_status(vid) == "in-use"
    detached = agent_ok(conf, "detach", attached["id"])
    assert detached == {"attachment_id": attached["id"],
                        "disconnected": True, "still_sharing": []}
    assert ashlar.attachment(attached["id"]) is None
    assert ashlar.operator.volume_status(vid) == "available"


def test_agent_cannot_detach_another_hosts_attachment(ashlar):
    """compute1's agent asking to detach compute2's attachment: the door
    says it does not exist (as for a made-up id, so the answer tells
    nothing about other hosts), so the agent connects and disconnects
    nothing and the attachment stays; compute2's agent still detaches it.

    NOTE: the agent's detach is idempotent (an attachment already gone is
    done), so it exits 0 with ``disconnected: null`` and says "already
    detached, or not this host's", the same answer as for an id that never
    existed.
    """
    vid = ashlar.volume(volume_type="multiattach")
    conf1 = ashlar.agent_conf("agent-c1", "compute1", AGENT1)
    conf2 = ashlar.agent_conf("agent-c2", "compute2", AGENT2)
    theirs = agent_ok(conf2, "attach", vid, "--instance", str(uuid.uuid4()))
    before = ashlar.state()

    out = agent(conf1, "detach", theirs["id"])
    assert out.returncode == 0, out.stderr[-3000:]
    not_found = {"disconnected": None, "still_sharing": [],
                 "not_found": "already detached, or not this host's"}
    assert json.loads(out.stdout) == dict(not_found,
                                          attachment_id=theirs["id"])
    made_up = str(uuid.uuid4())
    assert agent_ok(conf1, "detach", made_up) == dict(
        not_found, attachment_id=made_up)
    assert ashlar.state() == before
    assert ashlar.attachment(theirs["id"])["status"] == "attached"
    assert os.path.exists(theirs["device"]["path"])

    assert agent_ok(conf2, "detach", theirs["id"])["disconnected"] is True
    assert ashlar.operator.volume_status(vid) == "available"


AGENT_CREDENTIALS = {
    "wrong password": (AGENT1, "wrong"),
    "unknown agent": ("ashlar-agent-compute9", "compute9-Secret-1"),
    "no [agent_auth]": (None, None),
}


@pytest.mark.parametrize("user, password", AGENT_CREDENTIALS.values(),
                         ids=AGENT_CREDENTIALS.keys())
def test_agent_without_a_valid_credential_is_refused(ashlar, user, password):
    vid = ashlar.volume(volume_type="multiattach")
    conf = ashlar.agent_conf("agent-refused", "compute1", user, password)
    before = ashlar.state()
    out = agent(conf, "attach", vid, "--instance", str(uuid.uuid4()))
    assert out.returncode != 0
    assert out.stdout == ""
    assert "NotAuthenticated" in out.stderr, out.stderr[-3000:]
    assert "The request you have made requires authentication." in out.stderr
    assert ashlar.state() == before


def test_agent_cannot_attach_for_another_host(ashlar):
    """host = compute2 with compute1's credential: the connector's host is
    not the one the user is bound to; no attachment is made."""
    vid = ashlar.volume(volume_type="multiattach")
    conf = ashlar.agent_conf("agent-c2-as-c1", "compute2", AGENT1)
    before = ashlar.state()
    out = agent(conf, "attach", vid, "--instance", str(uuid.uuid4()))
    assert out.returncode != 0
    assert out.stdout == ""
    assert "VolumeNotFound" in out.stderr, out.stderr[-3000:]
    assert ashlar.state() == before
    assert ashlar.operator.get("/volumes/%s" % vid).json()["volume"][
        "attachments"] == []


# -- 4. the RPC door, raw -------------------------------------------------------------
FORGED = {"is_admin": True, "roles": ["admin"], "project_id": "admin",
          "user_id": "admin", "service_roles": ["service"]}


def test_door_refuses_a_forged_context(ashlar):
    vid = ashlar.volume(volume_type="multiattach")
    aid = ashlar.attach_rest(vid, "compute2")
    before = ashlar.state()
    forged = [dict(FORGED),
              dict(FORGED, request_id=door.request_id()),
              dict(FORGED, request_id=door.request_id(),
                   credential={"X-Auth-Token": "admin:admin"}),
              dict(FORGED, request_id=door.request_id(),
                   credential={"Authorization": basic(OPERATOR, "wrong"),
                               "X-Roles": "admin", "X-Project-Id": PROJECT})]
    for ctxt in forged:
        for method in ("attachment_get", "attachment_delete"):
            with pytest.raises(Exception) as caught:
                door.call(ashlar.transport, ctxt, method, attachment_id=aid)
            assert "NotAuthenticated" in type(caught.value).__name__, (
                ctxt, method, repr(caught.value))
    assert ashlar.state() == before
    assert ashlar.attachment(aid)["status"] == "attached"
    assert ashlar.operator.delete("/attachments/%s" % aid).status_code == 200


def test_door_serves_a_valid_credential_and_echoes_the_request(ashlar):
    vid = ashlar.volume(volume_type="multiattach")
    aid = ashlar.attach_rest(vid, "compute2")
    rid = door.request_id()
    answer = door.call(ashlar.transport, {
        "request_id": rid, "credential": {"Authorization": basic(OPERATOR)}},
        "attachment_get", attachment_id=aid)
    assert answer["request_id"] == rid
    assert answer["attachment"]["id"] == aid
    assert answer["attachment"]["volume_id"] == vid
    # The bound agent sees its host's attachment too.
    rid = door.request_id()
    answer = door.call(ashlar.transport, {
        "request_id": rid, "credential": {"Authorization": basic(AGENT2)}},
        "attachment_get", attachment_id=aid)
    assert answer["request_id"] == rid and answer["attachment"]["id"] == aid
    assert ashlar.operator.delete("/attachments/%s" % aid).status_code == 200


def test_door_keeps_an_agent_to_its_host(ashlar):
    vid = ashlar.volume(volume_type="multiattach")
    aid = ashlar.attach_rest(vid, "compute2")
    before = ashlar.state()
    credentials = [{"Authorization": basic(AGENT1)},
                   {"Authorization": basic(AGENT1), "X-Roles": "admin",
                    "X-Project-Id": PROJECT, "X-Service-Roles": "service"}]
    for credential in credentials:
        for method in ("attachment_get", "attachment_delete",
                       "attachment_complete"):
            ctxt = dict(FORGED, request_id=door.request_id(),
                        credential=credential)
            with pytest.raises(Exception) as caught:
                door.call(ashlar.transport, ctxt, method, attachment_id=aid)
            assert "AttachmentNotFound" in type(caught.value).__name__, (
                method, repr(caught.value))
    assert ashlar.state() == before
    assert ashlar.attachment(aid)["status"] == "attached"
    assert ashlar.operator.delete("/attachments/%s" % aid).status_code == 200


# -- 5. a forged reply -------------------------------------------------------------
class FakeApi:
    """Answers the agent on topic ``ashlar-api`` as no api would: an
    attachment that is not the request's."""

    target = oslo_messaging.Target(version="1.1")

    def __init__(self, lie: str, device_path: str) -> None:
        self.lie = lie
        self.device_path = device_path
        self.volume_id = str(uuid.uuid4())
        self.calls: list[tuple[str, dict, dict]] = []

    def _answer(self, ctxt: dict, attachment_id: str, volume_id: str) -> dict:
        rid = ctxt.get("request_id")
        if self.lie == "request_id":
            rid = door.request_id()
        elif self.lie == "volume_id":
            volume_id = str(uuid.uuid4())
        elif self.lie == "attachment_id":
            attachment_id = str(uuid.uuid4())
        return {"request_id": rid, "attachment": {
            "id": attachment_id, "volume_id": volume_id,
            "status": "attaching", "attach_mode": "rw",
            "instance": str(uuid.uuid4()),
            "shared_connections_by_attachment": [],
            "connection_info": {"driver_volume_type": "local",
                                "device_path": self.device_path,
                                "volume_id": volume_id,
                                "attachment_id": attachment_id}}}

    def ping(self, ctxt):
        return "pong"

    def attachment_create(self, ctxt, volume_id, instance_uuid=None,
                          connector=None, mode=None):
        self.calls.append(("attachment_create", ctxt, {
            "volume_id": volume_id, "connector": connector}))
        return self._answer(ctxt, str(uuid.uuid4()), volume_id)

    def attachment_get(self, ctxt, attachment_id):
        self.calls.append(("attachment_get", ctxt, {}))
        return self._answer(ctxt, attachment_id, self.volume_id)

    def attachment_complete(self, ctxt, attachment_id):
        self.calls.append(("attachment_complete", ctxt, {}))
        return {"request_id": ctxt.get("request_id")}

    def attachment_delete(self, ctxt, attachment_id):
        self.calls.append(("attachment_delete", ctxt, {}))
        return {"request_id": ctxt.get("request_id"), "attachments": [],
                "shared_connections_by_attachment": []}


@pytest.fixture(scope="module")
def fake_vhost(vhost):
    """A second fresh vhost, where no Ashlar api listens."""
    url, remove = harness.broker_vhost()
    if url == vhost:
        harness.unavailable("a second RabbitMQ vhost (TEST_TRANSPORT_URL "
                            "is one given vhost)", RuntimeError(url))
    yield url
    remove()


@pytest.fixture
def fake_api(request, fake_vhost, tmp_path):
    """A FakeApi serving ``ashlar-api`` on a vhost where no api runs."""
    device = tmp_path / "fake-device"
    device.write_bytes(b"untouched")
    api = FakeApi(request.param, str(device))
    trans = door.transport(fake_vhost)
    server = oslo_messaging.get_rpc_server(
        trans, oslo_messaging.Target(exchange=door.EXCHANGE,
                                     topic=door.API_TOPIC, server="fake-api"),
        [api], executor="threading")
    server.start()
    try:
        harness.wait_for(lambda: door.call(trans, {}, "ping", timeout=5)
                         == "pong", what="the fake api to answer")
        yield fake_vhost, api
    finally:
        server.stop()
        server.wait()
        trans.cleanup()


def _lied_to(out: subprocess.CompletedProcess) -> None:
    assert out.returncode != 0
    assert out.stdout == ""
    assert "does not belong to this request" in out.stderr, \
        out.stderr[-3000:]


@pytest.mark.parametrize("fake_api", ["request_id", "volume_id"],
                         indirect=True)
def test_agent_refuses_a_forged_attach_answer(ashlar, fake_api):
    url, api = fake_api
    conf = ashlar.agent_conf("agent-fake", "compute1", AGENT1,
                             transport_url=url)
    vid = str(uuid.uuid4())
    _lied_to(agent(conf, "attach", vid, "--instance", str(uuid.uuid4())))
    assert [name for name, _ctxt, _args in api.calls] == ["attachment_create"]
    _name, ctxt, args = api.calls[0]
    # What the agent put on the wire: its request id and credential only
    # (oslo.messaging's amqp driver adds the caller's timeout on receipt).
    assert set(ctxt) - {"client_timeout"} == {"request_id", "credential"}
    assert REQUEST_ID.match(ctxt["request_id"])
    assert ctxt["credential"] == {"Authorization": basic(AGENT1)}
    assert args["volume_id"] == vid and args["connector"]["host"] == \
        "compute1"
    assert open(api.device_path, "rb").read() == b"untouched"


@pytest.mark.parametrize("fake_api", ["request_id", "attachment_id"],
                         indirect=True)
def test_agent_refuses_a_forged_detach_answer(ashlar, fake_api):
    url, api = fake_api
    conf = ashlar.agent_conf("agent-fake", "compute1", AGENT1,
                             transport_url=url)
    _lied_to(agent(conf, "detach", str(uuid.uuid4())))
    assert [name for name, _ctxt, _args in api.calls] == ["attachment_get"]
    assert open(api.device_path, "rb").read() == b"untouched"
