"""REST tests for get_pools, capabilities/{host}, os-services and
os-hosts."""

import datetime
import time

import falcon
import pytest
from falcon import testing

from common import capabilities
from common.db.api import services as services_db
from services.api import errors
from services.api import middleware
from services.api import routes
from services.api.operations import backends as backend_ops
from services.api.resources import backends
from tests.unit.db import fixtures

PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"


class Scheduler:
    def __init__(self):
        self.store = capabilities.CapabilityStore(10)

    def get_pools(self, ctxt):
        return self.store.export()


def report(name, multiattach, state="up"):
    return {"volume_backend_name": name, "vendor_name": "Ashlar",
            "driver_version": "1.0.0", "storage_protocol": "local",
            "pools": [{"pool_name": name, "multiattach": multiattach,
                       "thin_provisioning_support": True,
                       "total_capacity_gb": 10.5, "free_capacity_gb": 5,
                       "backend_state": state}]}


@pytest.fixture
def scheduler():
    fixtures.setup()
    fixtures.clean()
    sched = Scheduler()
    for host, name, ma in (("n1@ma", "ma", True), ("n2@plain", "plain", False),
                           ("n3@gone", "gone", True)):
        services_db.service_register(fixtures.admin(), host, "ashlar-volume",
                                     "ashlar-volume", "nova")
        sched.store.update(host, report(name, ma), time.time())
    # n3 is disabled: the scheduler does not consider it, so not listed.
    services_db.service_set_disabled(fixtures.admin(), "n3@gone",
                                     "ashlar-volume", True, "off")
    yield sched
    fixtures.clean()


@pytest.fixture
def client(scheduler):
    """The app's middleware and error handling around these resources only."""
    conf = fixtures.make_conf()
    ops = backend_ops.BackendOperations(conf, scheduler)
    app = falcon.App(middleware=[middleware.RequestId(),
                                 middleware.ProjectInUrl(routes.COLLECTIONS),
                                 middleware.Microversion(),
                                 middleware.Identity(conf)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    errors.register(app)
    for path, resource in (
            ("/v3/os-services", backends.Services(ops)),
            ("/v3/os-services/{action}", backends.ServiceAction(ops)),
            ("/v3/os-hosts", backends.Hosts(ops)),
            ("/v3/os-hosts/{host_name}", backends.Host(ops)),
            ("/v3/scheduler-stats/get_pools", backends.Pools(ops)),
            ("/v3/capabilities/{host}", backends.Capabilities(ops))):
        app.add_route(path, resource)
    return testing.TestClient(app)


def get(client, path, version="3.60", **params):
    return client.simulate_get(
        "/v3/%s%s" % (PROJECT, path), params=params,
        headers={"X-Auth-Token": "admin:%s" % PROJECT,
                 "OpenStack-API-Version": "volume %s" % version})


def names(resp):
    assert resp.status_code == 200, resp.text
    return [p["name"] for p in resp.json["pools"]]


def test_get_pools_lists_running_enabled_backends(client):
    resp = get(client, "/scheduler-stats/get_pools")
    assert names(resp) == ["n1@ma#ma", "n2@plain#plain"]
    assert resp.json["pools"][0] == {"name": "n1@ma#ma"}


def test_get_pools_detail(client):
    resp = get(client, "/scheduler-stats/get_pools", detail="True")
    caps = resp.json["pools"][0]["capabilities"]
    assert caps["multiattach"] is True
    assert caps["vendor_name"] == "Ashlar"
    assert caps["backend_state"] == "up"
    # Cinder's naive-UTC ISO 8601, as Tempest's schema wants it.
    stamp = datetime.datetime.strptime(caps["timestamp"],
                                       "%Y-%m-%dT%H:%M:%S.%f")
    assert abs(stamp - datetime.datetime.utcnow()) < datetime.timedelta(
        minutes=5)


def test_get_pools_detail_is_a_strict_bool(client):
    resp = get(client, "/scheduler-stats/get_pools", detail="maybe")
    assert resp.status_code == 400


def test_get_pools_filters_by_version(client):
    path = "/scheduler-stats/get_pools"
    assert names(get(client, path, "3.27", name="n1@ma#ma")) == [
        "n1@ma#ma", "n2@plain#plain"]
    assert names(get(client, path, "3.28", name="n1@ma#ma")) == ["n1@ma#ma"]
    assert names(get(client, path, "3.28", multiattach="false")) == [
        "n2@plain#plain"]
    assert names(get(client, path, "3.28",
                     total_capacity_gb="10.5")) == ["n1@ma#ma",
                                                    "n2@plain#plain"]
    resp = get(client, path, "3.33", multiattach="true")
    assert resp.status_code == 400
    assert "Invalid filters multiattach" in resp.text


def test_get_pools_volume_type_filter(client):
    vtype = fixtures.make_type("ma-type", {"multiattach": "<is> True"})
    path = "/scheduler-stats/get_pools"
    assert names(get(client, path, "3.35", volume_type="ma-type")) == [
        "n1@ma#ma"]
    assert names(get(client, path, "3.35", volume_type=vtype.id)) == [
        "n1@ma#ma"]
    assert names(get(client, path, "3.34", volume_type="ma-type")) == [
        "n1@ma#ma", "n2@plain#plain"]
    assert get(client, path, "3.35", volume_type="nope").status_code == 404


def test_get_pools_hides_stale_reports(client, scheduler):
    scheduler.store._backends["n1@ma"].received_at -= 60
    assert names(get(client, "/scheduler-stats/get_pools")) == [
        "n2@plain#plain"]


def test_get_pools_is_admin_only(client):
    resp = client.simulate_get(
        "/v3/%s/scheduler-stats/get_pools" % PROJECT,
        headers={"X-Auth-Token": "u:%s" % PROJECT, "X-Roles": "member"})
    assert resp.status_code == 403


def test_capabilities_of_a_backend(client):
    resp = get(client, "/capabilities/n1@ma")
    assert resp.status_code == 200
    body = resp.json
    assert body["namespace"] == "OS::Storage::Capabilities::n1@ma"
    assert body["volume_backend_name"] == "ma"
    assert body["pool_name"] == "ma"
    assert body["storage_protocol"] == "local"
    assert body["properties"]["multiattach"] == {
        "title": "Multiattach", "type": "boolean",
        "description": "Volumes may be attached to several hosts at once."}
    assert "total_capacity_gb" not in body["properties"]
    assert get(client, "/capabilities/n2").json["volume_backend_name"] == \
        "plain"
    assert get(client, "/capabilities/nowhere").status_code == 404


def test_services_show_backend_state_from_3_49(client, scheduler):
    scheduler.store.update("n2@plain", report("plain", False, "down"),
                           time.time())
    services_db.service_register(fixtures.admin(), "sched", "ashlar-scheduler",
                                 "ashlar-scheduler", "nova")
    resp = get(client, "/os-services", "3.49")
    states = {(s["binary"], s["host"]): s.get("backend_state", "-")
              for s in resp.json["services"]}
    assert states == {("cinder-volume", "n1@ma"): "up",
                      ("cinder-volume", "n2@plain"): "down",
                      ("cinder-volume", "n3@gone"): None,
                      ("cinder-scheduler", "sched"): "-"}
    old = get(client, "/os-services", "3.48").json["services"]
    assert all("backend_state" not in s for s in old)


@pytest.mark.parametrize("body", [{"binary": "ashlar-volume"},
                                  {"service": "ashlar-volume"}])
def test_service_action_without_host_is_400(client, body):
    resp = client.simulate_put(
        "/v3/%s/os-services/disable" % PROJECT, json=body,
        headers={"X-Auth-Token": "admin:%s" % PROJECT})
    assert resp.status_code == 400
    assert "Missing required element 'host'" in resp.text


def test_service_action_takes_the_deprecated_service_name(client):
    resp = client.simulate_put(
        "/v3/%s/os-services/disable" % PROJECT,
        json={"host": "n1@ma", "service": "ashlar-volume"},
        headers={"X-Auth-Token": "admin:%s" % PROJECT})
    assert resp.status_code == 200, resp.text
    assert resp.json["status"] == "disabled"


def test_hosts_lists_enabled_services_with_cinders_names(client):
    services_db.service_register(fixtures.admin(), "sched", "ashlar-scheduler",
                                 "ashlar-scheduler", "az2")
    resp = get(client, "/os-hosts")
    assert resp.status_code == 200, resp.text
    hosts = {h["host_name"]: h for h in resp.json["hosts"]}
    assert sorted(hosts) == ["n1@ma", "n2@plain", "sched"]  # n3 disabled
    assert {k: v for k, v in hosts["n1@ma"].items()
            if k != "last-update"} == {
        "host_name": "n1@ma", "service": "cinder-volume", "zone": "nova",
        "service-status": "available", "service-state": "enabled"}
    assert hosts["sched"]["service"] == "cinder-scheduler"
    assert hosts["sched"]["last-update"]
    zoned = get(client, "/os-hosts", zone="az2").json["hosts"]
    assert [h["host_name"] for h in zoned] == ["sched"]


def test_host_shows_volume_usage_in_total_and_per_project(client):
    for project, size, host in (("p1", 2, "n1@ma#ma"), ("p1", 3, "n1@ma"),
                                ("p2", 5, "n1@ma#ma"), ("p1", 7, "n2@plain"),
                                ("p1", 9, "n1@mama#x")):
        volume = fixtures.make_volume(project=project, size=size, host=host)
        if size == 2:
            fixtures.make_snapshot(volume)
    resp = get(client, "/os-hosts/n1@ma")
    assert resp.status_code == 200, resp.text
    assert [h["resource"] for h in resp.json["host"]] == [
        {"host": "n1@ma", "project": project, "volume_count": volumes,
         "total_volume_gb": gb, "snapshot_count": snaps,
         "total_snapshot_gb": snap_gb}
        for project, volumes, gb, snaps, snap_gb in (
            ("(total)", "3", "10", "1", "2"), ("p1", "2", "5", "1", "2"),
            ("p2", "1", "5", "0", "0"))]


def test_host_of_no_enabled_volume_service_is_404_and_admin_only(client):
    for name in ("n3@gone", "nowhere", "n1"):
        resp = get(client, "/os-hosts/" + name)
        assert resp.status_code == 404, name
    member = client.simulate_get(
        "/v3/%s/os-hosts" % PROJECT,
        headers={"X-Auth-Token": "m:%s" % PROJECT, "X-Roles": "member"})
    assert member.status_code == 403


@pytest.mark.parametrize("name", ["cinder-volume", "ashlar-volume"])
def test_services_answer_cinders_binary_names_and_take_either(client, name):
    listed = get(client, "/os-services", binary=name).json["services"]
    assert [(s["binary"], s["host"]) for s in listed] == [
        ("cinder-volume", h) for h in ("n1@ma", "n2@plain", "n3@gone")]
    assert get(client, "/os-services", binary="cinder-scheduler"
               ).json["services"] == []
    resp = client.simulate_put(
        "/v3/%s/os-services/disable" % PROJECT,
        json={"host": "n1@ma", "binary": name},
        headers={"X-Auth-Token": "admin:%s" % PROJECT})
    assert resp.status_code == 200, resp.text
    assert (resp.json["binary"], resp.json["status"]) == ("cinder-volume",
                                                          "disabled")


def test_a_repeated_query_parameter_counts_with_its_last_value(client):
    assert names(get(client, "/scheduler-stats/get_pools", "3.28",
                     name=["n2@plain#plain", "n1@ma#ma"])) == ["n1@ma#ma"]
    listed = get(client, "/os-services",
                 binary=["cinder-volume", "cinder-scheduler"])
    assert listed.status_code == 200, listed.text
    assert listed.json["services"] == []
    hosts = get(client, "/os-hosts", zone=["elsewhere", "nova"])
    assert hosts.status_code == 200, hosts.text
    assert len(hosts.json["hosts"]) == 2


@pytest.mark.parametrize("action", ["freeze", "thaw"])
def test_freeze_and_thaw_are_400_for_any_host(client, action):
    for host, words in (("invalid_host", "No service found with "
                         "host=invalid_host"),
                        ("n1@ma", "which Ashlar does not offer")):
        resp = client.simulate_put(
            "/v3/%s/os-services/%s" % (PROJECT, action), json={"host": host},
            headers={"X-Auth-Token": "admin:%s" % PROJECT})
        assert resp.status_code == 400, resp.text
        assert words in resp.json["badRequest"]["message"]
    member = client.simulate_put(
        "/v3/%s/os-services/%s" % (PROJECT, action), json={"host": "n1@ma"},
        headers={"X-Auth-Token": "m:%s" % PROJECT, "X-Roles": "member"})
    assert member.status_code == 403


def test_an_unknown_service_is_a_404_in_cinders_names(client):
    resp = client.simulate_put(
        "/v3/%s/os-services/disable" % PROJECT,
        json={"host": "nowhere", "binary": "cinder-volume"},
        headers={"X-Auth-Token": "admin:%s" % PROJECT})
    assert resp.status_code == 404
    assert "Could not find binary cinder-volume on host nowhere." in \
        resp.text
