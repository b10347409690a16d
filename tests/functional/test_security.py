"""The attacker's view, in keystone mode: a real Keystone, real processes
(api behind keystonemiddleware, scheduler, one volume node on PostgreSQL
and RabbitMQ), real tokens of Cinder's personas, and the RPC door.

Project alpha owns a volume with an attachment; everyone else tries to
read, list, page past, change, attach, detach and delete it, over REST and
over the bus.  Every refusal is checked together with the state it must
have left alone, as an administrator of every project sees it.  The
http_basic mode has the same cases in test_http_basic.py, the broker's
permissions in test_rabbit_permissions.py.
"""

import json
import subprocess
import sys
import uuid

import openstack
import pytest

from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component
from tests.functional import door

MA_TYPE = {"volume_type": {"name": "multiattach",
                           "extra_specs": {"multiattach": "<is> True"}}}
AGENT_HOSTS = ("compute1", "compute2")


@pytest.fixture(scope="module")
def agents(keystone):
    """Compute agents: ``ashlar-agent-<host>``, role service on service."""
    found = {}
    for host in AGENT_HOSTS:
        user = keystone.create_user("ashlar-agent-" + host)
        keystone.grant(user, "service", "service")
        found[host] = user
    return found


class Site:
    """The deployment, tokens of the personas, and alpha's objects."""

    def __init__(self, dep, keystone, personas, agents, trans):
        self.dep, self.keystone, self.personas = dep, keystone, personas
        self.agents, self.trans = agents, trans
        self.root = "http://127.0.0.1:%d" % dep.port
        self.tokens: dict[str, str] = {}

    def token(self, who: str) -> str:
        """A token: ``alpha-member`` (on its project), ``system-admin``
        (system scope), ``unscoped:<user>``, ``agent:<host>``."""
        if who not in self.tokens:
            ks = self.keystone
            if who.startswith("unscoped:"):
                token = ks.unscoped_token(self.personas[who.split(":")[1]])
            elif who.startswith("system-"):
                token = ks.system_token(self.personas[who])
            elif who.startswith("agent:"):
                token = ks.project_token(self.agents[who.split(":")[1]])
            else:
                token = ks.project_token(self.personas[who])
            self.tokens[who] = token
        return self.tokens[who]

    def client(self, who: str, project: str | None = None) -> harness.Client:
        """``who``'s client on ``project``'s endpoint (default: the
        project-less one)."""
        path = "/v3/%s" % self.personas.projects[project] if project \
            else "/v3"
        client = harness.Client(self.root + path, version="3.60",
                                token=self.token(who))
        client.endpoint = self.root + path
        return client

    def state(self) -> dict:
        """Every volume and attachment, as an administrator sees them."""
        admin = self.client("system-admin")
        volumes = admin.get("/volumes/detail?all_tenants=1").json()["volumes"]
        attachments = admin.get("/attachments/detail?all_tenants=1").json()[
            "attachments"]
        return {"volumes": sorted((v["id"], v["status"], v["size"],
                                   v["name"]) for v in volumes),
                "attachments": sorted((a["id"], a["status"])
                                      for a in attachments)}


@pytest.fixture(scope="module")
def site(tmp_path_factory, keystone, personas, agents, vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("security"), vhost,
                             db_url)
    dep.db_sync()
    keystone.register_service("http://127.0.0.1:%d/v3/%%(project_id)s"
                              % dep.port)
    trans = door.transport(vhost)
    try:
        dep.start("scheduler", "services.scheduler", "sec-sched")
        dep.start("volume", "services.volume", "sec-node")
        dep.start("api", "services.api", "sec-api", extra=(
            "[api]\nauth_strategy = keystone\n"
            + keystone.authtoken_section(personas.service)))
        found = Site(dep, keystone, personas, agents, trans)
        admin = found.client("alpha-admin", "alpha")
        harness.wait_for(admin.pools, timeout=60, what="the pool")
        assert admin.post("/types", MA_TYPE).status_code == 200
        yield found
    finally:
        trans.cleanup()
        dep.stop_all()
        drop()


@pytest.fixture(scope="module")
def alpha(site):
    """alpha's multiattach volume and an attachment of it (host a1)."""
    member = site.client("alpha-member", "alpha")
    volume = member.create_volume(size=1, name="alpha-secret",
                                  volume_type="multiattach")
    member.wait_status(volume["id"], "available", timeout=60)
    resp = member.post("/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": _connector("a1")}})
    assert resp.status_code == 200, resp.text
    return {"volume": volume["id"], "attachment": resp.json()[
        "attachment"]["id"]}


def _connector(host):
    return {"host": host, "ip": "127.0.0.1", "initiator": "iqn.x:" + host,
            "platform": "x86_64", "os_type": "linux", "multipath": False}


# -- REST: another project ---------------------------------------------------------
REACH = {
    "show volume": ("GET", "/volumes/{volume}", None),
    "update volume": ("PUT", "/volumes/{volume}",
                      {"volume": {"name": "pwned"}}),
    "delete volume": ("DELETE", "/volumes/{volume}", None),
    "extend volume": ("POST", "/volumes/{volume}/action",
                      {"os-extend": {"new_size": 2}}),
    "page past volume": ("GET", "/volumes?marker={volume}", None),
    "show attachment": ("GET", "/attachments/{attachment}", None),
    "delete attachment": ("DELETE", "/attachments/{attachment}", None),
    "update attachment": ("PUT", "/attachments/{attachment}",
                          {"attachment": {"connector": _connector("b1")}}),
    "page past attachment": ("GET", "/attachments?marker={attachment}",
                             None),
    "attach volume": ("POST", "/attachments", {"attachment": {
        "volume_uuid": "{volume}", "connector": _connector("b1")}}),
}


def _fill(value, ids):
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", REACH, ids=list(REACH))
def test_rest_another_project_gets_404_and_changes_nothing(site, alpha,
                                                           case):
    method, path, body = REACH[case]
    before = site.state()
    resp = site.client("beta-member", "beta").request(
        method, _fill(path, alpha), json=_fill(body, alpha))
    assert resp.status_code == 404, (case, resp.text)
    assert site.state() == before


def test_rest_another_projects_lists_hold_nothing_of_alpha(site, alpha):
    beta = site.client("beta-member", "beta")
    for path in ("/volumes", "/volumes/detail", "/attachments/detail",
                 "/volumes?all_tenants=1",
                 "/volumes?all_tenants=1&project_id=%s"
                 % site.personas.projects["alpha"]):
        listed = beta.get(path).json()
        rows = listed.get("volumes", listed.get("attachments"))
        assert alpha["volume"] not in str(rows), path


# -- REST: alpha's reader ---------------------------------------------------------
WRITES = {"create volume": ("POST", "/volumes", {"volume": {"size": 1}}),
          **{k: v for k, v in REACH.items()
             if k in ("update volume", "delete volume", "extend volume",
                      "delete attachment", "attach volume")}}


@pytest.mark.parametrize("case", WRITES, ids=list(WRITES))
def test_rest_reader_reads_but_may_not_write(site, alpha, case):
    method, path, body = WRITES[case]
    reader = site.client("alpha-reader", "alpha")
    assert reader.get("/volumes/%s" % alpha["volume"]).status_code == 200
    before = site.state()
    resp = reader.request(method, _fill(path, alpha),
                          json=_fill(body, alpha))
    assert resp.status_code == 403, (case, resp.text)
    assert "Policy doesn't allow" in resp.text
    assert site.state() == before


# -- REST: tokens without a project ----------------------------------------------
PROJECTLESS = ["unscoped:norole", "unscoped:alpha-member", "system-reader"]


@pytest.mark.parametrize("who", PROJECTLESS)
@pytest.mark.parametrize("path", ["/volumes", "/volumes/detail",
                                  "/attachments", "/limits",
                                  "/volumes/summary"])
def test_rest_a_token_without_project_gets_no_project_data(site, alpha, who,
                                                           path):
    resp = site.client(who).get(path)
    assert resp.status_code == 403, resp.text
    assert alpha["volume"] not in resp.text


@pytest.mark.parametrize("who", PROJECTLESS)
def test_rest_a_token_without_project_creates_and_sees_nothing(site, alpha,
                                                              who):
    client = site.client(who)
    before = site.state()
    assert client.post("/volumes", {"volume": {"size": 1}}
                       ).status_code == 403
    assert client.get("/volumes/%s" % alpha["volume"]).status_code == 404
    assert client.get("/attachments/%s" % alpha["attachment"]
                      ).status_code == 404
    assert site.state() == before


def test_a_system_admin_is_an_administrator_without_a_project(site, alpha):
    admin = site.client("system-admin")
    listed = admin.get("/volumes?all_tenants=1").json()["volumes"]
    assert alpha["volume"] in {v["id"] for v in listed}
    assert admin.get("/volumes").status_code == 403
    assert admin.post("/volumes", {"volume": {"size": 1}}).status_code == 403


# -- REST: what a member sees ----------------------------------------------------
def test_members_see_no_host_nor_backend_error(site, alpha):
    """Nobody sees a backend's error text (Cinder's body has no field for
    it; a failure is a user message in Cinder's words); members do not see
    the host either."""
    shown = site.client("alpha-member", "alpha").get(
        "/volumes/%s" % alpha["volume"]).json()["volume"]
    assert shown["os-vol-tenant-attr:tenant_id"] == \
        site.personas.projects["alpha"]
    for hidden in ("os-vol-host-attr:host", "error_reason",
                   "os-vol-mig-status-attr:migstat"):
        assert hidden not in shown
    admin = site.client("alpha-admin", "alpha").get(
        "/volumes/%s" % alpha["volume"]).json()["volume"]
    assert admin["os-vol-host-attr:host"].startswith("sec-node@")
    assert "error_reason" not in admin


# -- REST: private types ----------------------------------------------------------
def test_a_private_type_is_for_the_projects_given_access(site):
    admin = site.client("alpha-admin", "alpha")
    made = admin.post("/types", {"volume_type": {
        "name": "private-gold", "os-volume-type-access:is_public": False}})
    type_id = made.json()["volume_type"]["id"]
    body = {"volume": {"size": 1, "volume_type": "private-gold"}}
    for who, project in (("alpha-member", "alpha"), ("beta-member", "beta")):
        before = site.state()
        assert site.client(who, project).post("/volumes", body
                                              ).status_code == 404
        assert site.state() == before
    assert admin.post("/types/%s/action" % type_id, {"addProjectAccess": {
        "project": site.personas.projects["alpha"]}}).status_code == 202
    alpha = site.client("alpha-member", "alpha")
    names = {t["name"] for t in alpha.get("/types").json()["volume_types"]}
    assert "private-gold" in names
    created = alpha.post("/volumes", body)
    assert created.status_code == 202
    beta = site.client("beta-member", "beta")
    assert "private-gold" not in {
        t["name"] for t in beta.get("/types").json()["volume_types"]}
    assert beta.post("/volumes", body).status_code == 404
    assert site.client("beta-member", "beta").post(
        "/types/%s/action" % type_id, {"addProjectAccess": {
            "project": site.personas.projects["beta"]}}).status_code == 403


# -- the personas through the real clients ------------------------------------------
def _sdk(site, who, project):
    user = site.personas[who]
    return openstack.connect(
        auth_url=site.keystone.auth_url, username=user.name,
        password=user.password, user_domain_name="Default",
        project_name=project, project_domain_name="Default",
        region_name="RegionOne", load_yaml_config=False, load_envvars=False)


def test_clients_reader_reads_but_may_not_create(site, alpha):
    ks, reader = site.keystone, site.personas["alpha-reader"]
    listed = keystone_component.openstack_cli(ks, reader, "alpha", "volume",
                                              "list")
    assert alpha["volume"] in {v["ID"] for v in listed}
    before = site.state()
    denied = keystone_component.openstack_run(
        ks, reader, "alpha", "volume", "create", "--size", "1", "nope")
    assert denied.returncode != 0 and "403" in denied.stderr
    conn = _sdk(site, "alpha-reader", "alpha")
    try:
        assert alpha["volume"] in {v.id for v in conn.block_storage.volumes()}
        with pytest.raises(openstack.exceptions.ForbiddenException):
            conn.block_storage.create_volume(size=1, name="nope")
    finally:
        conn.close()
    assert site.state() == before


def test_clients_admin_lists_every_project_member_only_its_own(site, alpha):
    ks = site.keystone
    beta_volume = site.client("beta-member", "beta").create_volume(
        size=1, name="beta-own")
    everything = keystone_component.openstack_cli(
        ks, site.personas["alpha-admin"], "alpha", "volume", "list",
        "--all-projects")
    assert {alpha["volume"], beta_volume["id"]} <= {
        v["ID"] for v in everything}
    conn = _sdk(site, "beta-member", "beta")
    try:
        own = {v.id for v in conn.block_storage.volumes(all_projects=True)}
    finally:
        conn.close()
    assert beta_volume["id"] in own and alpha["volume"] not in own


# -- quotas with the real clients -------------------------------------------------
def _limits(shown) -> dict:
    """``openstack quota show -f json``: rows of Resource and Limit."""
    return {row["Resource"]: row["Limit"] for row in shown}


def test_openstack_quota_show_and_set(site):
    """``openstack quota show|set --volume``: a member reads its project's
    quotas (by id: Keystone lets a member read its project, not list
    projects by name), only an admin sets them."""
    ks, personas = site.keystone, site.personas
    alpha_id, beta_id = (personas.projects[p] for p in ("alpha", "beta"))
    shown = _limits(keystone_component.openstack_cli(
        ks, personas["alpha-member"], "alpha", "quota", "show", "--volume",
        alpha_id))
    assert {"volumes", "gigabytes"} <= set(shown)
    denied = keystone_component.openstack_run(
        ks, personas["alpha-member"], "alpha", "quota", "set", "--volumes",
        "3", alpha_id)
    assert denied.returncode != 0 and "403" in denied.stderr
    done = keystone_component.openstack_run(
        ks, personas["alpha-admin"], "alpha", "quota", "set", "--volumes",
        "77", "beta")
    assert done.returncode == 0, done.stderr
    shown = _limits(keystone_component.openstack_cli(
        ks, personas["beta-member"], "beta", "quota", "show", "--volume",
        beta_id))
    assert shown["volumes"] == 77


# -- the RPC door -----------------------------------------------------------------
def _refused(site, credential, method, **kwargs) -> str:
    """The class of the error the door answers (``..._Remote``)."""
    with pytest.raises(Exception) as caught:
        _door(site, credential, method, **kwargs)
    return type(caught.value).__name__


def _door(site, credential, method, **kwargs):
    ctxt = {"request_id": door.request_id(), "credential": credential,
            "is_admin": True, "roles": ["admin"], "user_id": "admin",
            "project_id": site.personas.projects["alpha"],
            "service_roles": ["service"]}
    return door.call(site.trans, ctxt, method, **kwargs)


@pytest.mark.parametrize("credential", [
    {}, {"X-Auth-Token": "garbage"}, {"X-Auth-Token": "admin:admin"},
    {"X-Roles": "admin", "X-Identity-Status": "Confirmed"}],
    ids=["none", "garbage token", "noauth token", "forged identity"])
@pytest.mark.parametrize("method", ["attachment_get", "attachment_delete"])
def test_door_refuses_a_forged_context(site, alpha, credential, method):
    before = site.state()
    assert _refused(site, credential, method,
                    attachment_id=alpha["attachment"]) == \
        "NotAuthenticated_Remote"
    assert site.state() == before


def test_door_keeps_another_project_out(site, alpha):
    before = site.state()
    token = {"X-Auth-Token": site.token("beta-member")}
    for method in ("attachment_get", "attachment_delete",
                   "attachment_complete"):
        assert _refused(site, token, method,
                        attachment_id=alpha["attachment"]) == \
            "AttachmentNotFound_Remote"
    assert _refused(site, token, "attachment_create",
                    volume_id=alpha["volume"],
                    connector=_connector("b1")) == "VolumeNotFound_Remote"
    assert site.state() == before


def test_door_keeps_an_agent_to_its_host(site, alpha):
    token = {"X-Auth-Token": site.token("agent:compute1")}
    before = site.state()
    for method in ("attachment_get", "attachment_delete"):
        assert _refused(site, token, method,
                        attachment_id=alpha["attachment"]) == \
            "AttachmentNotFound_Remote"
    assert _refused(site, token, "attachment_create",
                    volume_id=alpha["volume"],
                    connector=_connector("compute2")) == \
        "VolumeNotFound_Remote"
    assert site.state() == before
    made = _door(site, token, "attachment_create", volume_id=alpha["volume"],
                 connector=_connector("compute1"))
    assert made["attachment"]["volume_id"] == alpha["volume"]
    _door(site, token, "attachment_delete",
          attachment_id=made["attachment"]["id"])
    assert site.state() == before


def test_an_agents_token_reads_no_project_data_over_rest(site, alpha):
    agent = site.client("agent:compute1")
    assert agent.get("/volumes").status_code == 403
    assert agent.get("/volumes/%s" % alpha["volume"]).status_code == 404


# -- the agent as its host runs it ---------------------------------------------------
def _agent_conf(site, host, password=None):
    user = site.agents[host]
    return site.dep.config("agent-" + host, host, extra=(
        "[agent_auth]\nauth_type = password\nauth_url = %s\n"
        "username = %s\npassword = %s\nuser_domain_name = Default\n"
        "project_name = service\nproject_domain_name = Default\n"
        % (site.keystone.auth_url, user.name, password or user.password)))


def _agent(conf, *args):
    return subprocess.run(
        [sys.executable, "-m", "services.agent", "--config-file", conf,
         *args], cwd=harness.REPO, capture_output=True, text=True,
        timeout=120)


def test_agent_attaches_and_detaches_across_projects_for_its_host(site,
                                                                 alpha):
    conf = _agent_conf(site, "compute1")
    out = _agent(conf, "attach", alpha["volume"], "--instance",
                 str(uuid.uuid4()))
    assert out.returncode == 0, out.stderr[-3000:]
    made = json.loads(out.stdout)
    assert made["volume_id"] == alpha["volume"]
    other = _agent(_agent_conf(site, "compute2"), "detach", made["id"])
    assert other.returncode == 0 and "not this host's" in other.stdout
    assert made["id"] in {a[0] for a in site.state()["attachments"]}
    done = _agent(conf, "detach", made["id"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert made["id"] not in {a[0] for a in site.state()["attachments"]}


def test_agent_with_a_wrong_password_is_refused(site, alpha):
    before = site.state()
    out = _agent(_agent_conf(site, "compute1", password="wrong"), "attach",
                 alpha["volume"])
    assert out.returncode != 0
    assert "401" in out.stderr or "Unauthorized" in out.stderr
    assert site.state() == before
