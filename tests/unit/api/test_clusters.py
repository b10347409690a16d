"""REST tests for /clusters (3.7), the service list's ``cluster`` (3.7)
and /workers/cleanup (3.24): views, filters, policy, and which services a
cleanup names and where it is cast."""

import datetime

import falcon
import pytest
import sqlalchemy as sa
from falcon import testing

from common.db import models
from common.db.api import clusters as clusters_db
from common.db.api import engine as db_engine
from common.db.api import services as services_db
from services.api import errors
from services.api import middleware
from services.api import routes
from services.api.operations import backends as backend_ops
from services.api.operations import clusters as cluster_ops
from services.api.resources import backends
from services.api.resources import clusters
from tests.unit.db import fixtures

PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
ADMIN = {"X-Auth-Token": "admin:%s" % PROJECT}
MEMBER = {"X-Auth-Token": "u:%s" % PROJECT, "X-Roles": "member"}
VOLUME = "ashlar-volume"


class VolumeRPC:
    def __init__(self):
        self.cleanups = []

    def do_cleanup(self, ctxt, server):
        self.cleanups.append(server)


def _long_ago(host):
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.update(models.Service).where(
            models.Service.host == host).values(
            heartbeat_at=datetime.datetime(2020, 1, 1)))


@pytest.fixture
def rpc():
    """Cluster c1@fake of node1 (up) and node2 (down); n3@lvm alone and
    down; n4@lvm alone and up."""
    fixtures.setup()
    fixtures.clean()
    ctxt = fixtures.admin()
    for host, cluster in (("node1@fake", "c1@fake"),
                          ("node2@fake", "c1@fake"),
                          ("n3@lvm", None), ("n4@lvm", None)):
        services_db.service_register(ctxt, host, VOLUME, VOLUME, "nova",
                                     cluster_name=cluster)
    _long_ago("node2@fake")
    _long_ago("n3@lvm")
    yield VolumeRPC()
    fixtures.clean()


@pytest.fixture
def client(rpc):
    conf = fixtures.make_conf()
    ops = cluster_ops.ClusterOperations(conf, rpc)
    app = falcon.App(middleware=[middleware.RequestId(),
                                 middleware.ProjectInUrl(routes.COLLECTIONS),
                                 middleware.Microversion(),
                                 middleware.Identity(conf)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    errors.register(app)
    for path, resource in (
            ("/v3/clusters", clusters.Collection(ops)),
            ("/v3/clusters/detail", clusters.Collection(ops, detail=True)),
            ("/v3/clusters/{name}", clusters.Item(ops)),
            ("/v3/workers/cleanup", clusters.Cleanup(ops)),
            ("/v3/os-services", backends.Services(
                backend_ops.BackendOperations(conf, None)))):
        app.add_route(path, resource)
    return testing.TestClient(app)


def get(client, path, version="3.7", headers=ADMIN, **params):
    return client.simulate_get(
        "/v3/%s%s" % (PROJECT, path), params=params,
        headers=dict(headers, **{"OpenStack-API-Version":
                                 "volume %s" % version}))


def put(client, action, body, version="3.7", headers=ADMIN):
    return client.simulate_put(
        "/v3/%s/clusters/%s" % (PROJECT, action), json=body,
        headers=dict(headers, **{"OpenStack-API-Version":
                                 "volume %s" % version}))


def cleanup(client, body, version="3.24", headers=ADMIN):
    return client.simulate_post(
        "/v3/%s/workers/cleanup" % PROJECT, json=body,
        headers=dict(headers, **{"OpenStack-API-Version":
                                 "volume %s" % version}))


def test_the_list_is_cinders_summary(client):
    resp = get(client, "/clusters")
    assert resp.status_code == 200, resp.text
    assert resp.json == {"clusters": [{
        "name": "c1@fake", "binary": "cinder-volume", "state": "up",
        "status": "enabled"}]}


def test_clusters_are_not_there_before_3_7(client):
    assert get(client, "/clusters", "3.6").status_code == 404
    assert get(client, "/clusters/c1@fake", "3.6").status_code == 404
    assert put(client, "disable", {"name": "c1@fake"},
               "3.6").status_code == 404


def test_the_detail_counts_members_down(client):
    body = get(client, "/clusters/detail").json["clusters"][0]
    assert set(body) == {"name", "binary", "state", "status", "num_hosts",
                         "num_down_hosts", "last_heartbeat", "created_at",
                         "updated_at", "disabled_reason"}
    assert (body["num_hosts"], body["num_down_hosts"]) == (2, 1)
    assert body["disabled_reason"] is None
    assert body["updated_at"] == ""
    stamp = datetime.datetime.strptime(body["last_heartbeat"],
                                       "%Y-%m-%dT%H:%M:%S.%f")
    assert abs(stamp - datetime.datetime.utcnow()) < datetime.timedelta(
        minutes=5)


def test_replication_fields_from_3_26(client):
    summary = get(client, "/clusters", "3.26").json["clusters"][0]
    assert summary["replication_status"] == "disabled"
    detail = get(client, "/clusters/detail", "3.26").json["clusters"][0]
    assert (detail["replication_status"], detail["frozen"],
            detail["active_backend_id"]) == ("disabled", False, None)


def test_a_cluster_is_down_when_every_member_is(client):
    _long_ago("node1@fake")
    body = get(client, "/clusters/detail").json["clusters"][0]
    assert (body["state"], body["num_down_hosts"]) == ("down", 2)


@pytest.mark.parametrize("params, found", [
    ({"is_up": "true"}, ["c1@fake"]),
    ({"is_up": "false"}, []),
    ({"disabled": "false"}, ["c1@fake"]),
    ({"disabled": "true"}, []),
    ({"num_hosts": "2"}, ["c1@fake"]),
    ({"num_down_hosts": "0"}, []),
    ({"name": "c1"}, ["c1@fake"]),
    ({"name": "c1@other"}, []),
    ({"binary": "cinder-volume"}, ["c1@fake"]),
    ({"binary": "cinder-scheduler"}, []),
])
def test_list_filters(client, params, found):
    resp = get(client, "/clusters", **params)
    assert resp.status_code == 200, resp.text
    assert [c["name"] for c in resp.json["clusters"]] == found


@pytest.mark.parametrize("version, params", [
    ("3.7", {"host": "x"}),
    ("3.7", {"frozen": "false"}),
    ("3.7", {"is_up": "maybe"}),
    ("3.7", {"num_hosts": "two"}),
    ("3.26", {"frozen": "maybe"}),
])
def test_bad_filters_are_a_400(client, version, params):
    resp = get(client, "/clusters", version, **params)
    assert resp.status_code == 400, resp.text


def test_unknown_filters_are_named(client):
    resp = get(client, "/clusters", host="x")
    assert resp.json["badRequest"]["message"] == (
        "Invalid input received: Invalid filter keys: host")


def test_replication_filters_from_3_26(client):
    assert [c["name"] for c in get(
        client, "/clusters", "3.26", frozen="false",
        replication_status="disabled").json["clusters"]] == ["c1@fake"]


def test_show(client):
    resp = get(client, "/clusters/c1@fake")
    assert resp.status_code == 200, resp.text
    assert resp.json["cluster"]["num_hosts"] == 2
    assert get(client, "/clusters/c1").json["cluster"]["name"] == "c1@fake"


def test_show_of_no_such_cluster_is_cinders_404(client):
    resp = get(client, "/clusters/nope")
    assert resp.status_code == 404
    assert resp.json["itemNotFound"]["message"] == (
        "Cluster {'binary': 'cinder-volume', 'name': 'nope'} could not be "
        "found.")
    assert get(client, "/clusters/c1@fake",
               binary="cinder-scheduler").status_code == 404


def test_disable_and_enable(client):
    ctxt = fixtures.admin()
    assert "c1@fake" in services_db.running_backends(ctxt, 60)
    resp = put(client, "disable", {"name": "c1@fake",
                                   "disabled_reason": " maintenance "})
    assert resp.status_code == 200, resp.text
    assert resp.json == {"cluster": {
        "name": "c1@fake", "binary": "cinder-volume", "state": "up",
        "status": "disabled", "disabled_reason": "maintenance"}}
    # the one rule the scheduler, the api and the placement's swap read
    assert "c1@fake" not in services_db.running_backends(ctxt, 60)
    assert get(client, "/clusters/detail", disabled="true").json[
        "clusters"][0]["disabled_reason"] == "maintenance"
    resp = put(client, "enable", {"name": "c1@fake",
                                  "binary": "cinder-volume"})
    assert resp.json["cluster"]["status"] == "enabled"
    assert resp.json["cluster"]["disabled_reason"] is None
    assert "c1@fake" in services_db.running_backends(ctxt, 60)


@pytest.mark.parametrize("action, body, status", [
    ("disable", {}, 400),
    ("disable", {"name": ""}, 400),
    ("disable", {"name": "c1@fake", "host": "x"}, 400),
    ("enable", {"name": "c1@fake", "disabled_reason": "x"}, 400),
    ("disable", {"name": "c1@fake", "disabled_reason": "x" * 256}, 400),
    ("disable", {"name": "nope"}, 404),
    ("freeze", {"name": "c1@fake"}, 404),
])
def test_bad_updates(client, action, body, status):
    assert put(client, action, body).status_code == status


def test_clusters_are_admin_only(client):
    assert get(client, "/clusters", headers=MEMBER).status_code == 403
    assert get(client, "/clusters/detail", headers=MEMBER).status_code == 403
    assert get(client, "/clusters/c1@fake",
               headers=MEMBER).status_code == 403
    assert put(client, "disable", {"name": "c1@fake"},
               headers=MEMBER).status_code == 403
    assert cleanup(client, {}, headers=MEMBER).status_code == 403


def test_the_service_list_names_each_services_cluster(client):
    shown = {s["host"]: s for s in get(client, "/os-services").json[
        "services"]}
    assert shown["node1@fake"]["cluster"] == "c1@fake"
    assert shown["n3@lvm"]["cluster"] is None
    assert "cluster" not in get(client, "/os-services", "3.6").json[
        "services"][0]


def _hosts(services):
    return sorted(s["host"] for s in services)


def test_cleanup_is_there_from_3_24(client):
    assert cleanup(client, {}, "3.23").status_code == 404


def test_cleanup_names_the_services_down(client, rpc):
    resp = cleanup(client, {})
    assert resp.status_code == 202, resp.text
    # node2 is down, its cluster up: any live member resumes its work
    assert resp.json["cleaning"] == [{
        "id": resp.json["cleaning"][0]["id"], "host": "node2@fake",
        "binary": "cinder-volume", "cluster_name": "c1@fake"}]
    # n3 is alone and down: nobody can
    assert _hosts(resp.json["unavailable"]) == ["n3@lvm"]
    assert rpc.cleanups == ["c1@fake"]


def test_cleanup_of_services_up_casts_to_each_once(client, rpc):
    resp = cleanup(client, {"is_up": "true"})
    assert _hosts(resp.json["cleaning"]) == ["n4@lvm", "node1@fake"]
    assert sorted(rpc.cleanups) == ["c1@fake", "n4@lvm"]


@pytest.mark.parametrize("body, cleaning, unavailable", [
    ({"cluster_name": "c1"}, ["node2@fake"], []),
    ({"host": "n3"}, [], ["n3@lvm"]),
    ({"disabled": False}, ["node2@fake"], ["n3@lvm"]),
    ({"disabled": True}, [], []),
    ({"binary": "cinder-scheduler"}, [], []),
])
def test_cleanup_filters(client, body, cleaning, unavailable):
    resp = cleanup(client, body)
    assert resp.status_code == 202, resp.text
    assert _hosts(resp.json["cleaning"]) == cleaning
    assert _hosts(resp.json["unavailable"]) == unavailable


def test_cleanup_of_a_disabled_cluster(client):
    clusters_db.cluster_set_disabled(fixtures.admin(), "c1@fake", VOLUME,
                                     True, None)
    assert _hosts(cleanup(client, {"disabled": True}).json[
        "cleaning"]) == ["node2@fake"]


def test_cleanup_by_resource_finds_its_backend(client, rpc):
    volume = fixtures.make_volume(host="c1@fake#fake", status="creating")
    resp = cleanup(client, {"resource_id": volume.id,
                            "resource_type": "volume"})
    assert _hosts(resp.json["cleaning"]) == ["node2@fake"]
    assert resp.json["unavailable"] == []
    snapshot = fixtures.make_snapshot(fixtures.make_volume(
        host="n3@lvm#lvm"))
    resp = cleanup(client, {"resource_id": snapshot.id,
                            "resource_type": ""})
    assert (resp.json["cleaning"], _hosts(resp.json["unavailable"])) == (
        [], ["n3@lvm"])


@pytest.mark.parametrize("body", [
    {"resource_type": "backup"},
    {"resource_id": "7e2c6f5e-1df1-4f0a-9a53-0e4f4d1c2b11"},
    {"binary": "ashlar-volume"},
    {"is_up": "maybe"},
    {"service_id": "x"},
    {"nope": 1},
])
def test_bad_cleanups_are_a_400(client, body):
    assert cleanup(client, body).status_code == 400
