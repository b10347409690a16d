"""The wire as Cinder 29 serves it, over HTTP (where Ashlar differs on
purpose: docs/differences-from-cinder.md).

Discovery, microversion answers, request ids, URL forms, noauth roles, fault
envelopes, status codes, pagination and filters, checked with plain
``requests`` against the real processes.
"""

import re
import uuid

import pytest
import requests

from services.api import microversion
from tests.compat.conftest import MAX_LIMIT, NO_SUCH_ID, PROJECT, VOLUME_HOST

MAX = str(microversion.MAX_VERSION)
REQ_ID = re.compile(r"^req-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
GENERIC_400 = ("The server could not comply with the request since it is "
               "either malformed or otherwise incorrect.")
#: Cinder's generic 400, and what is at fault, which Ashlar adds.
BAD_MV_HEADER = (GENERIC_400 + " The OpenStack-API-Version header must name "
                 "a 'volume' version: 'volume <MajorNum.MinorNum>' or "
                 "'volume latest'.")
GENERIC_404 = "The resource could not be found."


def fault(resp: requests.Response, key: str, code: int) -> str:
    """Assert Cinder's envelope; return the message."""
    assert resp.status_code == code, resp.text
    assert resp.headers["Content-Type"].startswith("application/json")
    body = resp.json()
    assert list(body) == [key], body
    assert body[key]["code"] == code
    return body[key]["message"]


def request_id(resp: requests.Response) -> str:
    rid = resp.headers["x-openstack-request-id"]
    assert REQ_ID.match(rid), rid
    return rid


# -- version discovery -------------------------------------------------------
@pytest.mark.parametrize(("path", "status"), [("/", 300), ("/v3", 200),
                                              ("/v3/", 200)])
def test_versions_without_a_token(ashlar, path, status):
    resp = requests.get(ashlar.root + path, timeout=30)
    assert resp.status_code == status
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["OpenStack-API-Version"] == "volume 3.0"
    assert resp.headers["Vary"] == "OpenStack-API-Version"
    assert resp.headers["x-compute-request-id"] == request_id(resp)
    (version,) = resp.json()["versions"]
    assert version == {
        "id": "v3.0", "status": "CURRENT", "version": MAX,
        "min_version": "3.0", "updated": version["updated"],
        "links": [{"rel": "describedby", "type": "text/html",
                   "href": "https://docs.openstack.org/"},
                  {"rel": "self", "href": ashlar.root + "/v3/"}],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.volume+json;version=3"}]}
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", version["updated"])


def test_versions_head(ashlar):
    resp = requests.head(ashlar.root + "/", timeout=30)
    assert resp.status_code == 300
    assert resp.content == b""


def test_versions_self_link_follows_host_header(ashlar):
    resp = requests.get(ashlar.root + "/", headers={"Host": "cinder.example"},
                        timeout=30)
    assert resp.json()["versions"][0]["links"][1]["href"] == \
        "http://cinder.example/v3/"


# -- microversions -----------------------------------------------------------
@pytest.mark.parametrize(("header", "served"), [
    (None, "3.0"),
    ("volume 3.27", "3.27"),
    ("volume latest", MAX),
    ("volume   3.5", "3.5"),
    ("compute 2.1, volume 3.50", "3.50"),
    ("volume 3.50, volume 3.60", "3.50"),
    ("volume-ish 3.54", "3.54"),
])
def test_microversion_served(ashlar, header, served):
    headers = {"X-Auth-Token": "admin:" + PROJECT}
    if header is not None:
        headers["OpenStack-API-Version"] = header
    resp = requests.get(ashlar.endpoint + "/types", headers=headers,
                        timeout=30)
    assert resp.status_code == 200
    assert resp.headers["OpenStack-API-Version"] == "volume " + served
    assert resp.headers["Vary"] == "OpenStack-API-Version"


def test_legacy_header_is_ignored(ashlar):
    resp = requests.get(ashlar.endpoint + "/types", timeout=30, headers={
        "X-OpenStack-Volume-API-Version": "3.27"})
    assert resp.headers["OpenStack-API-Version"] == "volume 3.0"


@pytest.mark.parametrize(("header", "status", "key", "message", "echo"), [
    ("volume 3.99", 406, "computeFault",
     "Version 3.99 is not supported by the API. Minimum is 3.0 and maximum "
     "is %s." % MAX, "volume 3.99"),
    ("volume 2.9", 406, "computeFault",
     "Version 2.9 is not supported by the API. Minimum is 3.0 and maximum "
     "is %s." % MAX, "volume 2.9"),
    ("volume 2.0", 406, "computeFault",
     "Version 2.0 is not supported by the API. Minimum is 3.0 and maximum "
     "is %s." % MAX, None),
    ("volume 3.x", 400, "badRequest", "API Version String 3.x is of invalid "
     "format. Must be of format MajorNum.MinorNum.", None),
    ("volume 3.01", 400, "badRequest", "API Version String 3.01 is of "
     "invalid format. Must be of format MajorNum.MinorNum.", None),
    ("volume LATEST", 400, "badRequest", "API Version String LATEST is of "
     "invalid format. Must be of format MajorNum.MinorNum.", None),
    ("compute 2.1", 400, "badRequest", BAD_MV_HEADER, None),
    ("VOLUME 3.54", 400, "badRequest", BAD_MV_HEADER, None),
    ("block-storage 3.54", 400, "badRequest", BAD_MV_HEADER, None),
    ("", 400, "badRequest", BAD_MV_HEADER, None),
    # NOTE: Cinder answers a wrong token count with a 500.
    ("volume", 400, "badRequest", BAD_MV_HEADER, None),
    ("volume 3.54 extra", 400, "badRequest", BAD_MV_HEADER, None),
])
@pytest.mark.parametrize("path", ["/", "/v3/volumes"])
def test_microversion_rejected(ashlar, path, header, status, key, message,
                               echo):
    resp = requests.get(ashlar.root + path, timeout=30, headers={
        "OpenStack-API-Version": header,
        "X-Auth-Token": "admin:" + PROJECT})
    assert fault(resp, key, status) == message
    assert resp.headers.get("OpenStack-API-Version") == echo
    assert ("Vary" in resp.headers) == (echo is not None)
    request_id(resp)


@pytest.mark.parametrize(("method", "path", "version", "body"), [
    ("GET", "/attachments", "3.26", None),
    ("GET", "/attachments/detail", "3.26", None),
    ("POST", "/attachments", "3.26", {"attachment": {
        "volume_uuid": str(uuid.uuid4())}}),
    ("POST", "/attachments/%s/action" % NO_SUCH_ID, "3.43",
     {"os-complete": None}),
    ("GET", "/volumes/summary", "3.11", None),
])
def test_method_above_the_version_is_a_404(ashlar, method, path, version,
                                           body):
    resp = ashlar.http(version=version).request(method, path, json=body)
    assert fault(resp, "itemNotFound", 404) == GENERIC_404
    assert resp.headers["OpenStack-API-Version"] == "volume " + version


def _volume(ashlar, project=PROJECT, **fields):
    client = ashlar.http(token="admin:" + project)
    volume = client.create_volume(**fields)
    client.wait_status(volume["id"], "available", timeout=60)
    return volume


@pytest.fixture(scope="module")
def volume(ashlar):
    volume = _volume(ashlar, name="wire-vol", metadata={"k": "v"})
    yield volume
    client = ashlar.http()
    client.delete("/volumes/%s" % volume["id"])


@pytest.mark.parametrize(("field", "first"), [
    ("group_id", "3.13"), ("provider_id", "3.21"),
    ("shared_targets", "3.48"), ("service_uuid", "3.48"),
    ("cluster_name", "3.61"), ("volume_type_id", "3.63"),
    ("consumes_quota", "3.65")])
def test_volume_fields_appear_at_their_version(ashlar, volume, field, first):
    major, minor = first.split(".")
    before = "%s.%d" % (major, int(minor) - 1)
    path = "/volumes/%s" % volume["id"]
    assert field not in ashlar.http(version=before).get(path).json()["volume"]
    assert field in ashlar.http(version=first).get(path).json()["volume"]


def test_volume_detail_view(ashlar, volume):
    shown = ashlar.http().get("/volumes/%s" % volume["id"]).json()["volume"]
    assert shown["bootable"] == "false"
    assert shown["encrypted"] is False
    assert shown["multiattach"] is False
    assert shown["metadata"] == {"k": "v"}
    assert shown["attachments"] == []
    assert shown["shared_targets"] is True
    assert shown["os-vol-host-attr:host"].startswith(VOLUME_HOST + "@")
    assert shown["os-vol-tenant-attr:tenant_id"] == PROJECT
    assert shown["volume_type"] == "__DEFAULT__"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$",
                    shown["created_at"])
    assert [link["rel"] for link in shown["links"]] == ["self", "bookmark"]
    assert shown["links"][0]["href"] == "%s/volumes/%s" % (ashlar.endpoint,
                                                           volume["id"])
    assert shown["links"][1]["href"] == "%s/volumes/%s" % (ashlar.root,
                                                           volume["id"])


# -- request ids ---------------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "headers"), [
    ("GET", "/v3/volumes", {}),
    ("GET", "/v3/nonexistent", {}),
    ("GET", "/v3/volumes", {"OpenStack-API-Version": "volume 9.9"}),
    ("POST", "/v3/volumes", {"Content-Type": "text/plain"}),
    ("DELETE", "/v3/volumes/%s" % NO_SUCH_ID, {}),
])
def test_every_response_has_a_request_id(ashlar, method, path, headers):
    mine = "req-%s" % uuid.uuid4()
    resp = requests.request(method, ashlar.root + path, data="x", timeout=30,
                            headers={"X-OpenStack-Request-ID": mine,
                                     **headers})
    rid = request_id(resp)
    assert rid != mine
    assert resp.headers["x-compute-request-id"] == rid


# -- URL forms -----------------------------------------------------------------
def test_project_in_url(ashlar, volume):
    resp = requests.get("%s/%s/volumes/%s" % (ashlar.endpoint, PROJECT,
                                              volume["id"]), timeout=30,
                        headers={"X-Auth-Token": "admin:" + PROJECT})
    assert resp.status_code == 200
    links = resp.json()["volume"]["links"]
    assert links[0]["href"] == "%s/%s/volumes/%s" % (ashlar.endpoint, PROJECT,
                                                     volume["id"])
    assert links[1]["href"] == "%s/%s/volumes/%s" % (ashlar.root, PROJECT,
                                                     volume["id"])


def test_project_in_url_must_be_the_callers(ashlar):
    resp = requests.get("%s/%s/volumes" % (ashlar.endpoint, PROJECT),
                        headers={"X-Auth-Token": "notused"}, timeout=30)
    assert fault(resp, "badRequest", 400) == "Malformed request url"


@pytest.mark.parametrize("path", [
    "/v3/%s" % PROJECT, "/v3/%s/" % PROJECT, "/v3/nonexistent",
    "/v3/%s/nonexistent" % PROJECT, "/v2/", "/v3.json", "/v3/volumes.xml"])
def test_unrouted_paths_are_404(ashlar, path):
    resp = requests.get(ashlar.root + path, timeout=30,
                        headers={"X-Auth-Token": "admin:" + PROJECT})
    assert fault(resp, "itemNotFound", 404) == GENERIC_404


@pytest.mark.parametrize(("method", "path"), [
    ("PATCH", "/volumes"), ("DELETE", "/volumes"), ("POST", "/volumes/detail"),
    ("DELETE", "/types"), ("GET", "/os-services/enable")])
def test_unsupported_methods_are_404_not_405(ashlar, method, path):
    resp = ashlar.http().request(method, path, json={})
    assert fault(resp, "itemNotFound", 404) == GENERIC_404


def test_json_suffix(ashlar, volume):
    resp = ashlar.http().get("/volumes/detail.json")
    assert volume["id"] in [v["id"] for v in resp.json()["volumes"]]


# -- noauth ----------------------------------------------------------------------
def test_no_token_is_admin_of_project_admin(ashlar):
    resp = requests.get(ashlar.endpoint + "/os-services", timeout=30)
    assert resp.status_code == 200


def test_token_without_colon_is_user_and_project(ashlar):
    client = ashlar.http(token="solo")
    volume = client.create_volume(name="solo-vol")
    shown = client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert shown["user_id"] == "solo"
    assert shown["os-vol-tenant-attr:tenant_id"] == "solo"
    client.wait_status(volume["id"], "available", timeout=60)
    assert client.delete("/volumes/%s" % volume["id"]).status_code == 202


def test_x_roles_makes_a_member(ashlar, volume):
    member = ashlar.http(token="bob:other-project", **{"X-Roles": "member"})
    message = fault(member.get("/os-services"), "forbidden", 403)
    assert message == ("Policy doesn't allow volume_extension:services:index "
                       "to be performed.")
    fault(member.get("/scheduler-stats/get_pools"), "forbidden", 403)
    assert member.get("/volumes").json() == {"volumes": []}
    fault(member.get("/volumes/%s" % volume["id"]), "itemNotFound", 404)
    listed = member.get("/volumes", params={"all_tenants": "1"}).json()
    assert listed == {"volumes": []}
    shown = member.get("/types").json()["volume_types"]
    assert "qos_specs_id" not in shown[0]


def test_x_roles_admin_is_admin(ashlar, volume):
    admin = ashlar.http(token="root:elsewhere", **{"X-Roles": "admin,member"})
    assert admin.get("/volumes/%s" % volume["id"]).status_code == 200
    listed = admin.get("/volumes", params={"all_tenants": "true"}).json()
    assert volume["id"] in [v["id"] for v in listed["volumes"]]


# -- bodies and faults -------------------------------------------------------------
def test_body_without_json_content_type_is_415(ashlar):
    resp = requests.post(ashlar.endpoint + "/volumes", timeout=30,
                         data='{"volume": {"size": 1}}',
                         headers={"X-Auth-Token": "admin:" + PROJECT})
    assert fault(resp, "badMediaType", 415) == "Unsupported Content-Type"


def test_too_large_body_is_413(ashlar):
    resp = ashlar.http().post("/types", {"volume_type": {
        "name": "big", "description": "x" * 200000}})
    assert fault(resp, "overLimit", 413) == "Request is too large."
    assert resp.json()["overLimit"]["retryAfter"] == "0"
    assert resp.headers["Retry-After"] == "0"


def test_not_found_messages(ashlar):
    missing = str(uuid.uuid4())
    client = ashlar.http()
    assert fault(client.get("/volumes/%s" % missing), "itemNotFound", 404) \
        == "Volume %s could not be found." % missing
    assert fault(client.get("/types/%s" % missing), "itemNotFound", 404) \
        == "Volume type %s could not be found." % missing
    assert fault(client.get("/types/__DEFAULT__"), "itemNotFound", 404) \
        == "Volume type __DEFAULT__ could not be found."
    resp = client.post("/volumes", {"volume": {"size": 1,
                                               "volume_type": "nope"}})
    assert fault(resp, "itemNotFound", 404) == \
        "Volume type with name nope could not be found."


def test_type_status_codes_and_conflict(ashlar):
    client = ashlar.http()
    resp = client.post("/types", {"volume_type": {"name": "wire-type"}})
    assert resp.status_code == 200
    type_id = resp.json()["volume_type"]["id"]
    resp = client.post("/types", {"volume_type": {"name": "wire-type"}})
    assert fault(resp, "conflictingRequest", 409) == \
        "Volume Type wire-type already exists."
    resp = client.post("/types/%s/extra_specs" % type_id,
                       {"extra_specs": {"a": "1"}})
    assert (resp.status_code, resp.json()) == (200, {"extra_specs": {"a": "1"}})
    assert client.delete("/types/%s/extra_specs/a" % type_id).status_code \
        == 202
    assert client.delete("/types/%s" % type_id).status_code == 202


def test_volume_create_and_delete_are_202(ashlar):
    client = ashlar.http()
    resp = client.post("/volumes", {"volume": {"size": "1"}})
    assert resp.status_code == 202
    volume = resp.json()["volume"]
    assert volume["size"] == 1
    assert "os-vol-host-attr:host" not in volume
    client.wait_status(volume["id"], "available", timeout=60)
    resp = client.delete("/volumes/%s" % volume["id"])
    assert (resp.status_code, resp.content) == (202, b"")


def test_volume_create_without_size_or_source_names_the_field(ashlar):
    client = ashlar.http()
    resp = client.post("/volumes", {"volume": {"name": "no-size"}})
    assert fault(resp, "badRequest", 400) == (
        GENERIC_400 + " Invalid input for field/attribute size: it is "
        "required unless snapshot_id or source_volid is given.")
    names = [v["name"] for v in client.get("/volumes").json()["volumes"]]
    assert "no-size" not in names


def test_volume_create_in_an_unknown_zone_is_refused(ashlar):
    client = ashlar.http()
    resp = client.post("/volumes", {"volume": {
        "size": 1, "name": "no-zone", "availability_zone": "nowhere"}})
    assert fault(resp, "badRequest", 400) == \
        "Availability zone 'nowhere' is invalid."
    names = [v["name"] for v in client.get("/volumes").json()["volumes"]]
    assert "no-zone" not in names


def test_multiattach_flag_in_body_is_refused(ashlar):
    resp = ashlar.http().post("/volumes", {"volume": {"size": 1,
                                                      "multiattach": True}})
    assert fault(resp, "badRequest", 400).startswith(
        "Invalid input received: multiattach parameter has been removed.")


def test_vendor_json_accept_is_echoed(ashlar):
    resp = ashlar.http(**{"Accept": "application/vnd.openstack.volume+json"}
                       ).get("/types")
    assert resp.headers["Content-Type"] == \
        "application/vnd.openstack.volume+json"


# -- pagination, sorting and filters ---------------------------------------------
PAGER = "f00dfeedf00dfeedf00dfeedf00dfeed"


@pytest.fixture(scope="module")
def paged(ashlar):
    """Five volumes in a project of their own, named p0..p4."""
    made = [_volume(ashlar, project=PAGER, name="p%d" % i) for i in range(5)]
    yield [v["id"] for v in made]
    client = ashlar.http(token="admin:" + PAGER)
    for volume_id in [v["id"] for v in made]:
        client.delete("/volumes/%s" % volume_id)


def _follow(client, url, **params):
    seen, pages = [], 0
    body = client.session.get(url, params=params, timeout=30).json()
    while True:
        pages += 1
        seen += [v["name"] for v in body["volumes"]]
        links = body.get("volumes_links")
        if not links:
            return seen, pages
        assert [link["rel"] for link in links] == ["next"]
        body = client.session.get(links[0]["href"], timeout=30).json()


def test_next_links_walk_every_volume_once(ashlar, paged):
    client = ashlar.http(token="admin:" + PAGER)
    names, pages = _follow(client, client.endpoint + "/volumes",
                           limit=2, sort="name:asc")
    assert (names, pages) == (["p0", "p1", "p2", "p3", "p4"], 3)
    names, pages = _follow(client, client.endpoint + "/volumes/detail",
                           sort="name:desc")
    assert names == ["p4", "p3", "p2", "p1", "p0"]
    assert pages == 2  # default page size MAX_LIMIT = 3


def test_next_link_keeps_query_and_project_form(ashlar, paged):
    client = ashlar.http(token="admin:" + PAGER)
    url = "%s/%s/volumes/detail" % (ashlar.endpoint, PAGER)
    body = client.session.get(url, params={"limit": 2, "sort": "name:asc"},
                              timeout=30).json()
    (link,) = body["volumes_links"]
    assert link["href"].startswith(url + "?")
    assert "sort=name%3Aasc" in link["href"]
    assert "limit=2" in link["href"]
    assert "marker=%s" % paged[1] in link["href"]


def test_limit_is_capped_at_max_limit(ashlar, paged):
    client = ashlar.http(token="admin:" + PAGER)
    body = client.get("/volumes", params={"limit": 1000}).json()
    assert len(body["volumes"]) == MAX_LIMIT
    assert "volumes_links" in body


def test_a_full_last_page_links_to_an_empty_one(ashlar, paged):
    """As Cinder: a full page has a next link even when it is the last;
    a page that is not full has none."""
    client = ashlar.http(token="admin:" + PAGER)
    body = client.get("/volumes", params={
        "limit": 3, "sort": "name:asc", "marker": paged[1]}).json()
    assert [v["name"] for v in body["volumes"]] == ["p2", "p3", "p4"]
    (link,) = body["volumes_links"]
    assert client.session.get(link["href"], timeout=30).json() == {
        "volumes": []}
    body = client.get("/volumes", params={
        "limit": 3, "sort": "name:asc", "marker": paged[2]}).json()
    assert [v["name"] for v in body["volumes"]] == ["p3", "p4"]
    assert "volumes_links" not in body
    assert client.get("/volumes", params={"limit": 0}).json() == {
        "volumes": []}


def test_with_count(ashlar, paged):
    body = ashlar.http(token="admin:" + PAGER, version="3.45").get(
        "/volumes", params={"limit": 1, "with_count": "true"}).json()
    assert body["count"] == 5
    assert len(body["volumes"]) == 1
    body = ashlar.http(token="admin:" + PAGER, version="3.44").get(
        "/volumes", params={"with_count": "true"}).json()
    assert "count" not in body


@pytest.mark.parametrize(("params", "message"), [
    ({"limit": "-1"}, "limit param must be positive"),
    ({"limit": "abc"}, "limit param must be an integer"),
    ({"offset": "-1"}, None),
    ({"sort": "bogus"}, "Invalid input received: Invalid sort key"),
    ({"sort": "name:sideways"}, "Invalid input received: Unknown sort "
     "direction, must be 'desc' or 'asc'."),
    ({"sort": "name", "sort_key": "size"}, "The 'sort_key' and 'sort_dir' "
     "parameters are deprecated and cannot be used with the 'sort' "
     "parameter."),
    ({"all_tenants": "maybe"}, "Value 'maybe' for 'all_tenants' is not a "
     "boolean."),
])
def test_bad_list_parameters(ashlar, params, message):
    resp = ashlar.http().get("/volumes", params=params)
    text = fault(resp, "badRequest", 400)
    if message is not None:
        assert text == message


def test_unknown_marker_is_404(ashlar):
    missing = str(uuid.uuid4())
    resp = ashlar.http().get("/volumes", params={"marker": missing})
    assert fault(resp, "itemNotFound", 404) == \
        "Volume %s could not be found." % missing


def test_filters(ashlar, paged):
    client = ashlar.http(token="admin:" + PAGER)
    names = [v["name"] for v in client.get(
        "/volumes", params={"name": "p2"}).json()["volumes"]]
    assert names == ["p2"]
    assert client.get("/volumes", params={"status": "error"}).json() == {
        "volumes": []}
    assert client.get("/volumes", params={"consumes_quota": "false"}).json() \
        == {"volumes": []}
    assert len(client.get("/volumes", params={
        "consumes_quota": "true"}).json()["volumes"]) == MAX_LIMIT
    assert client.get("/volumes", params={"group_id": str(uuid.uuid4())}
                      ).json() == {"volumes": []}
    # NOTE: Cinder turns unknown keys into column filters (an empty list)
    # for admins; Ashlar ignores them.
    assert len(client.get("/volumes", params={
        "unknown_key": "x"}).json()["volumes"]) == MAX_LIMIT


def test_types_is_public_filter(ashlar):
    client = ashlar.http()
    for value in ("None", "none", "true", "false"):
        assert client.get("/types", params={"is_public": value}
                          ).status_code == 200
    message = fault(client.get("/types", params={"is_public": "maybe"}),
                    "badRequest", 400)
    assert message == "Invalid is_public filter [maybe]"


# -- limits, zones, summary ------------------------------------------------------
def test_limits(ashlar, paged):
    body = ashlar.http(token="admin:" + PAGER, version=None).get(
        "/limits").json()
    absolute = body["limits"]["absolute"]
    assert body["limits"]["rate"] == []
    assert absolute["totalVolumesUsed"] == 5
    assert absolute["totalGigabytesUsed"] == 5
    assert absolute["maxTotalVolumes"] == -1
    other = ashlar.http(version="3.39").get(
        "/limits", params={"project_id": PAGER}).json()
    assert other["limits"]["absolute"]["totalVolumesUsed"] == 5


def test_volume_summary(ashlar, paged):
    body = ashlar.http(token="admin:" + PAGER, version="3.36").get(
        "/volumes/summary").json()
    assert body == {"volume-summary": {"total_count": 5, "total_size": 5,
                                       "metadata": {}}}
    body = ashlar.http(token="admin:" + PAGER, version="3.12").get(
        "/volumes/summary").json()
    assert body == {"volume-summary": {"total_count": 5, "total_size": 5}}


def test_availability_zones(ashlar):
    body = ashlar.http().get("/os-availability-zone").json()
    assert body == {"availabilityZoneInfo": [
        {"zoneName": "nova", "zoneState": {"available": True}}]}
