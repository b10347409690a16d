"""Malformed bodies to every route that takes one: always a 4xx, never a 5xx.

The routes come from the route table itself, so a new route that takes a
body fails ``test_every_body_route_is_covered`` until it is listed in
``BODIES`` with the schema table it validates against.  For each route the
test sends broken envelopes (no JSON, wrong content type, wrong shapes) and,
for every field of the newest schema, a value of the wrong type, and checks
that the answer is a Cinder fault whose message names the field.
"""

import inspect
import json
import uuid
from unittest import mock

import pytest
import requests

from deploy.testbed import harness
from services.api import microversion
from services.api import routes
from services.api import validation
from services.api.schemas import attachments as attachment_schemas
from services.api.schemas import backups as backup_schemas
from services.api.schemas import clusters as cluster_schemas
from services.api.schemas import encryption as encryption_schemas
from services.api.schemas import groups as group_schemas
from services.api.schemas import manage as manage_schemas
from services.api.schemas import metadata as metadata_schemas
from services.api.schemas import qos as qos_schemas
from services.api.schemas import quotas as quota_schemas
from services.api.schemas import services as service_schemas
from services.api.schemas import snapshots as snapshot_schemas
from services.api.schemas import transfers as transfer_schemas
from services.api.schemas import types as type_schemas
from services.api.schemas import volumes as volume_schemas
from tests.compat.conftest import MAX_LIMIT, PROJECT

MAX = microversion.MAX_VERSION
SPEC_KEY = "k1"


def _volume_actions() -> dict:
    """The volume actions the API serves, with their schema tables."""
    try:
        from services.api.resources import volume_actions
    except ImportError:
        return volume_schemas.ACTIONS
    served = volume_actions.Action(*[mock.MagicMock()] * len(
        inspect.signature(volume_actions.Action).parameters))
    return {name: table for name, table in volume_actions.ACTIONS.items()
            if name in getattr(served, "_handlers", volume_actions.ACTIONS)}


#: (method, route) -> (envelope keys -> schema table); ``None`` as the key
#: is a body without an envelope (``PUT /os-services/{action}``).
BODIES = {
    ("POST", "/v3/volumes"): {"volume": volume_schemas.CREATE},
    ("PUT", "/v3/volumes/{volume_id}"): {"volume": volume_schemas.UPDATE},
    ("POST", "/v3/volumes/{volume_id}/action"): _volume_actions(),
    ("POST", "/v3/attachments"): {"attachment": attachment_schemas.CREATE},
    ("PUT", "/v3/attachments/{attachment_id}"): {
        "attachment": attachment_schemas.UPDATE},
    ("POST", "/v3/attachments/{attachment_id}/action"):
        attachment_schemas.ACTIONS,
    ("POST", "/v3/types"): {"volume_type": type_schemas.CREATE},
    ("PUT", "/v3/types/{type_id}"): {"volume_type": type_schemas.UPDATE},
    ("POST", "/v3/types/{type_id}/action"): type_schemas.ACTIONS,
    ("POST", "/v3/types/{type_id}/extra_specs"): {
        "extra_specs": type_schemas.EXTRA_SPECS_CREATE},
    ("PUT", "/v3/types/{type_id}/extra_specs/{key}"): {
        SPEC_KEY: type_schemas.EXTRA_SPEC_UPDATE},
    ("PUT", "/v3/os-services/{action}"): {
        None: service_schemas.ACTIONS["disable-log-reason"]},
    ("PUT", "/v3/ashlar-fencing/{action}"): {
        None: attachment_schemas.HOST_FENCE},
    ("PUT", "/v3/os-quota-sets/{project_id}"): {
        "quota_set": quota_schemas.UPDATE},
    ("PUT", "/v3/os-quota-class-sets/{class_name}"): {
        "quota_class_set": quota_schemas.CLASS_UPDATE},
    ("POST", "/v3/snapshots"): {"snapshot": snapshot_schemas.CREATE},
    ("PUT", "/v3/snapshots/{snapshot_id}"): {
        "snapshot": snapshot_schemas.UPDATE},
    ("POST", "/v3/snapshots/{snapshot_id}/metadata"): {
        "metadata": metadata_schemas.METADATA},
    ("PUT", "/v3/snapshots/{snapshot_id}/metadata"): {
        "metadata": metadata_schemas.METADATA},
    ("PUT", "/v3/snapshots/{snapshot_id}/metadata/{key}"): {
        "meta": metadata_schemas.METADATA_ITEM},
    ("POST", "/v3/volumes/{volume_id}/metadata"): {
        "metadata": metadata_schemas.METADATA},
    ("PUT", "/v3/volumes/{volume_id}/metadata"): {
        "metadata": metadata_schemas.METADATA},
    ("PUT", "/v3/volumes/{volume_id}/metadata/{key}"): {
        "meta": metadata_schemas.METADATA_ITEM},
    ("POST", "/v3/snapshots/{snapshot_id}/action"): snapshot_schemas.ACTIONS,
    ("POST", "/v3/types/{type_id}/encryption"): {
        "encryption": encryption_schemas.CREATE},
    ("PUT", "/v3/types/{type_id}/encryption/{encryption_id}"): {
        "encryption": encryption_schemas.UPDATE},
    ("POST", "/v3/qos-specs"): {"qos_specs": qos_schemas.CREATE},
    ("PUT", "/v3/qos-specs/{qos_id}"): {"qos_specs": qos_schemas.SET},
    ("PUT", "/v3/qos-specs/{qos_id}/delete_keys"): {None: qos_schemas.UNSET},
    ("POST", "/v3/os-volume-transfer"): {"transfer": transfer_schemas.CREATE},
    ("POST", "/v3/volume-transfers"): {
        "transfer": transfer_schemas.CREATE_WITH_SNAPSHOTS},
    ("POST", "/v3/os-volume-transfer/{transfer_id}/accept"): {
        "accept": transfer_schemas.ACCEPT},
    ("POST", "/v3/volume-transfers/{transfer_id}/accept"): {
        "accept": transfer_schemas.ACCEPT},
    ("POST", "/v3/group_types"): {"group_type": group_schemas.TYPE_CREATE},
    ("PUT", "/v3/group_types/{group_type_id}"): {
        "group_type": group_schemas.TYPE_UPDATE},
    ("POST", "/v3/group_types/{group_type_id}/group_specs"): {
        "group_specs": group_schemas.SPECS_CREATE},
    ("PUT", "/v3/group_types/{group_type_id}/group_specs/{key}"): {
        SPEC_KEY: group_schemas.SPEC_UPDATE},
    ("POST", "/v3/groups"): {"group": group_schemas.CREATE},
    ("PUT", "/v3/groups/{group_id}"): {"group": group_schemas.UPDATE},
    ("POST", "/v3/groups/action"): group_schemas.FROM_SOURCE,
    ("POST", "/v3/groups/{group_id}/action"): group_schemas.ACTIONS,
    ("POST", "/v3/group_snapshots"): {
        "group_snapshot": group_schemas.SNAPSHOT_CREATE},
    ("POST", "/v3/group_snapshots/{group_snapshot_id}/action"):
        group_schemas.SNAPSHOT_ACTIONS,
    ("POST", "/v3/backups"): {"backup": backup_schemas.CREATE},
    ("POST", "/v3/backups/{backup_id}/restore"): {
        "restore": backup_schemas.RESTORE},
    ("POST", "/v3/os-volume-manage"): {"volume": manage_schemas.MANAGE_VOLUME},
    ("POST", "/v3/manageable_volumes"): {
        "volume": manage_schemas.MANAGE_VOLUME},
    ("POST", "/v3/os-snapshot-manage"): {
        "snapshot": manage_schemas.MANAGE_SNAPSHOT},
    ("POST", "/v3/manageable_snapshots"): {
        "snapshot": manage_schemas.MANAGE_SNAPSHOT},
    ("PUT", "/v3/backups/{backup_id}"): {"backup": backup_schemas.UPDATE},
    ("POST", "/v3/backups/{backup_id}/action"): backup_schemas.ACTIONS,
    ("POST", "/v3/backups/import_record"): {
        "backup-record": backup_schemas.IMPORT_RECORD},
    # ``{name}`` is ``disable`` in ``ids``: the stricter of the two bodies.
    ("PUT", "/v3/clusters/{name}"): {None: cluster_schemas.DISABLE},
    ("POST", "/v3/workers/cleanup"): {None: cluster_schemas.CLEANUP},
}
#: Routes whose body may be empty or an empty object (every filter
#: optional), as Cinder's.
EMPTY_OBJECT_TAKEN = {("POST", "/v3/workers/cleanup")}
_SERVICE_ACTIONS = sorted(service_schemas.ACTIONS)


def _body_routes() -> list[tuple[str, str]]:
    conf = mock.MagicMock()
    conf.api.max_limit = MAX_LIMIT
    found = []
    for path, resource in routes.route_table(mock.MagicMock(), conf):
        for method in ("POST", "PUT", "PATCH"):
            if hasattr(resource, "on_" + method.lower()):
                found.append((method, path))
    return found


ROUTES = _body_routes()


def test_every_body_route_is_covered():
    assert set(ROUTES) <= set(BODIES), (
        "add these routes to BODIES: %s" % sorted(set(ROUTES) - set(BODIES)))


# -- what to send --------------------------------------------------------------
#: Bodies wrong as a whole: (name, raw bytes, content type, status).
RAW = [
    ("no content type", b'{"a": 1}', None, 415),
    ("text/plain", b'{"a": 1}', "text/plain", 415),
    ("form", b"a=1", "application/x-www-form-urlencoded", 415),
    ("not json", b"{bad", "application/json", 400),
    ("truncated", b'{"volume": {"size": 1', "application/json", 400),
    ("not utf-8", b'{"\xff": 1}', "application/json", 400),
    ("empty", b"", "application/json", 400),
    ("nested too deep", b"[" * 50000 + b"]" * 50000, "application/json",
     400),
    ("too large", b'{"a": "%s"}' % (b"x" * 120000), "application/json", 413),
    ("array", b"[]", "application/json; charset=utf-8", 400),
    ("null", b"null", "application/json", 400),
    ("string", b'"x"', "application/json", 400),
    ("number", b"1", "application/json", 400),
    ("empty object", b"{}", "application/json", 400),
    ("unknown key", b'{"bogus": {"a": 1}}', "application/json", 400),
]
#: Values that are wrong for most fields; the first one a field's schema
#: rejects is sent.
#: Objects come last, so an object-typed field fails on itself rather than
#: on one of its members (the message names the last path element).
CANDIDATES = [[1, 2], 1.5, -7, True, "wrong-string", None, {"nested": [1]}]


def _rejected(schema: dict, value) -> bool:
    try:
        validation.validate(schema, value)
    except Exception:  # noqa: BLE001 - any rejection will do
        return True
    return False


def _wrong_value(schema: dict):
    """A value ``schema`` rejects, or a sentinel when it takes anything."""
    return next((c for c in CANDIDATES if _rejected(schema, c)), _ANYTHING)


_ANYTHING = object()


def _inner(table, key, version):
    """The schema of the envelope's value (or of the whole body).

    :returns: None when the route takes no body at ``version``.
    """
    try:
        schema = validation.schema_for(table, version)
    except LookupError:
        return None
    if key is None:
        return schema
    if key in (schema.get("properties") or {}):
        return schema["properties"][key]
    return next(iter(schema.get("patternProperties", {}).values()), {})


def _field_cases(key, table, version):
    """(case name, body, field) with one field of the wrong type.

    ``field`` is what the error message must name; None when the schema
    at ``version`` does not reject the case on that field (the route is
    missing at that version, the object ignores unknown keys, or a check
    of the whole object comes first, as for os-reset_status).
    """
    inner = _inner(table, key, version)
    named = inner is not None
    inner = inner if named else _inner(table, key, MAX)
    if key is not None:
        wrong = _wrong_value(inner)
        if wrong is not _ANYTHING:
            yield "%s: wrong type" % key, {key: wrong}, key if named else None
        if not inner or "object" not in str(inner.get("type", "object")):
            return
    named = named and "format" not in inner
    for field, schema in (inner.get("properties") or {}).items():
        wrong = _wrong_value(schema)
        if wrong is _ANYTHING:
            continue
        value = {field: wrong}
        yield ("%s.%s: wrong type" % (key, field),
               value if key is None else {key: value},
               field if named else None)
    if key is not None:
        strict = inner.get("additionalProperties") is False
        yield ("%s: unknown field" % key, {key: {"bogus field!": "x"}},
               "bogus field!" if named and strict else None)


def _cases():
    for version in (microversion.MIN_VERSION, MAX):
        for method, path in ROUTES:
            if (method, path) not in BODIES:
                continue
            for name, raw, ctype, status in RAW:
                if name in ("empty", "empty object") and \
                        (method, path) in EMPTY_OBJECT_TAKEN:
                    continue
                yield pytest.param(
                    str(version), method, path, raw, ctype, status, None,
                    id="%s %s %s [%s]" % (version, method, path, name))
            for key, table in BODIES[(method, path)].items():
                for name, body, field in _field_cases(key, table, version):
                    yield pytest.param(
                        str(version), method, path,
                        json.dumps(body).encode(), "application/json", 400,
                        field,
                        id="%s %s %s [%s]" % (version, method, path, name))


# -- the objects the paths name ----------------------------------------------------
@pytest.fixture(scope="module")
def ids(ashlar):
    client = ashlar.http(token="admin:" + PROJECT)
    resp = client.post("/types", {"volume_type": {
        "name": "bodies-%s" % uuid.uuid4().hex[:8],
        "extra_specs": {SPEC_KEY: "v1"}}})
    assert resp.status_code == 200, resp.text
    type_id = resp.json()["volume_type"]["id"]
    volume = client.create_volume(name="bodies-vol")
    client.wait_status(volume["id"], "available", timeout=60)
    found = {"volume_id": volume["id"], "type_id": type_id, "key": SPEC_KEY,
             "attachment_id": str(uuid.uuid4()), "project_id": PROJECT,
             "class_name": "default", "transfer_id": str(uuid.uuid4()),
             "qos_id": str(uuid.uuid4()), "encryption_id": str(uuid.uuid4()),
             "group_type_id": str(uuid.uuid4()), "group_id": str(uuid.uuid4()),
             "group_snapshot_id": str(uuid.uuid4()),
             "backup_id": str(uuid.uuid4()), "name": "disable"}
    resp = client.post("/snapshots", {"snapshot": {"volume_id": volume["id"]}})
    assert resp.status_code == 202, resp.text
    found["snapshot_id"] = resp.json()["snapshot"]["id"]
    attached = False
    if ("POST", "/v3/attachments") in ROUTES:
        resp = client.post("/attachments", {"attachment": {
            "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4())}})
        assert resp.status_code == 200, resp.text
        found["attachment_id"] = resp.json()["attachment"]["id"]
        attached = True
    yield found
    if attached:
        client.delete("/attachments/%s" % found["attachment_id"])
    snapshot = "/snapshots/%s" % found["snapshot_id"]
    harness.wait_for(lambda: client.get(snapshot).json()["snapshot"][
        "status"] == "available", timeout=60, what="the snapshot")
    client.delete(snapshot)
    harness.wait_for(lambda: client.get(snapshot).status_code == 404,
                     timeout=60, what="the snapshot's deletion")
    client.wait_status(volume["id"], "available", timeout=60)
    client.delete("/volumes/%s" % volume["id"])
    client.wait_status(volume["id"], None, timeout=60)
    client.delete("/types/%s" % type_id)


@pytest.mark.parametrize(("version", "method", "path", "raw", "ctype",
                          "status", "field"), list(_cases()))
def test_malformed_body(ashlar, ids, version, method, path, raw, ctype,
                        status, field):
    headers = {"X-Auth-Token": "admin:" + PROJECT,
               "OpenStack-API-Version": "volume " + version}
    if ctype is not None:
        headers["Content-Type"] = ctype
    urls = [path.format(action=action, **ids) for action in _SERVICE_ACTIONS] \
        if "{action}" in path else [path.format(**ids)]
    for url in urls:
        resp = requests.request(method, ashlar.root + url, data=raw,
                                headers=headers, timeout=30)
        assert 400 <= resp.status_code < 500, (url, resp.status_code,
                                               resp.text)
        body = resp.json()
        (fault_key,) = body
        assert body[fault_key]["code"] == resp.status_code
        if resp.status_code == 404:
            # The method does not exist at this version (attachments).
            continue
        assert resp.status_code == status, (url, resp.text)
        if field is not None:
            assert field in body[fault_key]["message"], (url, resp.text)


def test_top_level_extra_key_at_every_version(ashlar):
    for version in ("3.0", "3.52", "3.53", str(MAX)):
        resp = ashlar.http(version=version).post(
            "/volumes", {"volume": {"size": 1}, "bogus_top": 1})
        assert resp.status_code == 400
        assert resp.json()["badRequest"]["message"] == (
            "Additional properties are not allowed ('bogus_top' was "
            "unexpected)")


@pytest.mark.parametrize(("version", "status"), [("3.52", 202),
                                                 ("3.53", 400)])
def test_unknown_volume_key_is_strict_from_3_53(ashlar, version, status):
    client = ashlar.http(version=version)
    resp = client.post("/volumes", {"volume": {"size": 1, "bootable": True}})
    assert resp.status_code == status, resp.text
    if status == 202:
        volume_id = resp.json()["volume"]["id"]
        client.wait_status(volume_id, "available", timeout=60)
        client.delete("/volumes/%s" % volume_id)
    else:
        assert "'bootable' was unexpected" in resp.json()["badRequest"][
            "message"]


def test_size_errors_name_the_field(ashlar):
    client = ashlar.http()
    for size, text in ((0, "0 is less than the minimum of 1"),
                       ("abc", "size"), (1.5, "size")):
        resp = client.post("/volumes", {"volume": {"size": size}})
        message = resp.json()["badRequest"]["message"]
        assert resp.status_code == 400
        assert "Invalid input for field/attribute size." in message
        assert text in message


def test_missing_envelope_names_it(ashlar):
    resp = ashlar.http().post("/types", {"name": "x"})
    assert resp.json() == {"badRequest": {
        "code": 400, "message": "'volume_type' is a required property"}}


def test_requests_answer_after_the_battery(ashlar):
    """The server is still healthy (no worker died on a bad body)."""
    assert requests.get(ashlar.root + "/", timeout=30).status_code == 300
