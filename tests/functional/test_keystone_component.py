"""A real Keystone (deploy.testbed.components.keystone) in front of Ashlar.

One Keystone, bootstrapped with the usual personas, and one Ashlar
(api, scheduler, volume on PostgreSQL) whose api runs behind
keystonemiddleware and is found through Keystone's catalog.  The clients
are the real ones: python-openstackclient and openstacksdk, given only
Keystone's URL and a user's credentials.
"""

import openstack
import pytest
import requests

from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component

osc = keystone_component.openstack_cli

@pytest.fixture(scope="module")
def ashlar(tmp_path_factory, keystone, personas, vhost):
    """api (keystone mode) + scheduler + one volume node, in the catalog."""
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("ashlar"), vhost, db_url)
    dep.db_sync()
    keystone.register_service("http://127.0.0.1:%d/v3/%%(project_id)s"
                              % dep.port)
    try:
        dep.start("scheduler", "services.scheduler", "ks-sched")
        dep.start("volume", "services.volume", "ks-node")
        dep.start("api", "services.api", "ks-api", extra=(
            "[api]\nauth_strategy = keystone\n"
            + keystone.authtoken_section(personas.service)))
        admin = client(dep, personas, "alpha",
                       keystone.project_token(personas["alpha-admin"]))
        harness.wait_for(admin.pools, timeout=60,
                         what="the volume node's pool, through keystone auth")
        yield dep
    finally:
        dep.stop_all()
        drop()


def client(dep, personas, project: str, token: str) -> harness.Client:
    """A raw client on ``project``'s endpoint with a Keystone token."""
    return harness.Client("http://127.0.0.1:%d/v3/%s" % (
        dep.port, personas.projects[project]), token=token)


def test_service_user_validates_tokens_a_member_cannot(keystone, personas):
    """What keystonemiddleware's user needs: Keystone's validate_token
    lets the ``service`` role validate another user's token."""
    token = keystone.project_token(personas["alpha-member"])
    as_service = keystone.validate(
        token, keystone.project_token(personas.service))
    assert as_service.status_code == 200, as_service.text
    assert as_service.json()["token"]["project"]["name"] == "alpha"
    as_member = keystone.validate(
        token, keystone.project_token(personas["beta-member"]))
    assert as_member.status_code == 403, as_member.text


def test_persona_tokens_have_their_scope(keystone, personas):
    unscoped = keystone.validate(keystone.unscoped_token(personas["norole"]))
    assert "project" not in unscoped.json()["token"]
    assert "roles" not in unscoped.json()["token"]
    system = keystone.validate(
        keystone.system_token(personas["system-reader"])).json()["token"]
    assert system["system"] == {"all": True}
    assert {r["name"] for r in system["roles"]} == {"reader"}
    reader = keystone.validate(keystone.project_token(
        personas["beta-reader"])).json()["token"]
    assert reader["project"]["id"] == personas.projects["beta"]
    assert {r["name"] for r in reader["roles"]} == {"reader"}


def test_request_without_token_is_401(ashlar, keystone):
    resp = requests.get("http://127.0.0.1:%d/v3/volumes" % ashlar.port,
                        timeout=30)
    assert resp.status_code == 401, resp.text
    assert resp.headers["WWW-Authenticate"] == (
        'Keystone uri="%s"' % keystone.auth_url)


def test_tokens_are_validated_by_keystone(ashlar, keystone, personas):
    """A garbage token and a revoked real one are refused; a fresh one
    works, and Keystone saw it validated."""
    member = personas["alpha-member"]
    assert client(ashlar, personas, "alpha", "garbage").get(
        "/volumes").status_code == 401
    revoked = keystone.project_token(member)
    keystone.revoke(revoked)
    assert client(ashlar, personas, "alpha", revoked).get(
        "/volumes").status_code == 401

    def validations() -> int:
        return keystone.log("access.log").count('"GET /v3/auth/tokens')
    before = validations()
    fresh = client(ashlar, personas, "alpha", keystone.project_token(member))
    assert fresh.get("/volumes").status_code == 200
    harness.wait_for(lambda: validations() > before,
                     what="Keystone to log the token's validation")


def test_openstack_cli_member_creates_and_lists(ashlar, keystone, personas):
    member = personas["alpha-member"]
    created = osc(keystone, member, "alpha", "volume", "create",
                  "--size", "1", "ks-osc-vol")
    assert created["name"] == "ks-osc-vol"
    reader = client(ashlar, personas, "alpha",
                    keystone.project_token(member))
    reader.wait_status(created["id"], "available", timeout=60)
    listed = osc(keystone, member, "alpha", "volume", "list")
    assert {v["ID"]: v["Status"] for v in listed}[created["id"]] == "available"
    other = osc(keystone, personas["beta-member"], "beta", "volume", "list")
    assert created["id"] not in {v["ID"] for v in other}


def test_openstacksdk_member_creates_and_lists(ashlar, keystone, personas):
    member = personas["alpha-member"]
    conn = openstack.connect(
        auth_url=keystone.auth_url, username=member.name,
        password=member.password, user_domain_name="Default",
        project_name="alpha", project_domain_name="Default",
        region_name="RegionOne", load_yaml_config=False, load_envvars=False)
    try:
        assert conn.block_storage.get_endpoint().rstrip("/") == (
            "http://127.0.0.1:%d/v3/%s" % (ashlar.port,
                                           personas.projects["alpha"]))
        volume = conn.block_storage.create_volume(size=1, name="ks-sdk-vol")
        harness.wait_for(lambda: conn.block_storage.get_volume(
            volume.id).status == "available", timeout=60,
            what="the sdk's volume to be available")
        assert volume.id in {v.id for v in conn.block_storage.volumes()}
        conn.block_storage.delete_volume(volume)
        harness.wait_for(lambda: volume.id not in {
            v.id for v in conn.block_storage.volumes()}, timeout=60,
            what="the sdk's volume to be gone")
    finally:
        conn.close()
