"""Real answers match services/api/openapi.yaml.

Every documented GET whose 200 has a schema is called (path ids filled in
with real objects) at 3.0 and at the maximum, and its body validated, so a
field added to a view without the document fails here.  A few writes and
faults are checked the same way.
"""

import datetime
import uuid

import jsonschema
import pytest
import requests
import sqlalchemy as sa
from oslo_utils import timeutils

from common import messages
from common.db import models
from deploy.testbed import harness
from services.api import microversion
from services.api import openapi
from tests.compat.conftest import NO_SUCH_ID, PROJECT, VOLUME_HOST

MAX = str(microversion.MAX_VERSION)
DOC = openapi.load()


def _check(body, schema):
    """Validate body against a schema or a ``#/components/...`` ref."""
    if isinstance(schema, str):
        schema = {"$ref": schema}
    schema = dict(schema, components=DOC["components"])
    jsonschema.Draft202012Validator(schema).validate(body)


def _ok_schema(operation):
    for status in ("200", "300"):
        response = operation.get("responses", {}).get(status)
        if response is None:
            continue
        if "$ref" in response:
            response = DOC["components"]["responses"][
                response["$ref"].rsplit("/", 1)[-1]]
        schema = response.get("content", {}).get("application/json", {}
                                                 ).get("schema")
        if schema is not None:
            return schema
    return None


GETS = [(path, _ok_schema(item["get"])) for path, item in DOC["paths"].items()
        if "get" in item and _ok_schema(item["get"]) is not None]


def _cluster(ashlar) -> str:
    """A cluster without members, written into the deployment's database
    as a member's start writes its row (this deployment's volume service
    is alone)."""
    name = "openapi-cluster@file"
    engine = sa.create_engine(ashlar.deployment.db_url)
    try:
        with engine.begin() as conn:
            conn.execute(models.Cluster.__table__.delete().where(
                models.Cluster.name == name))
            conn.execute(models.Cluster.__table__.insert().values(
                name=name, binary="ashlar-volume", disabled=False,
                created_at=timeutils.utcnow()))
    finally:
        engine.dispose()
    return name


def _message_about(ashlar, volume_id):
    """A user message about the volume, written into the deployment's
    database as a failing service writes one (nothing here fails)."""
    now = timeutils.utcnow()
    event = messages.CREATE_FAILED
    row = {"id": str(uuid.uuid4()), "project_id": PROJECT,
           "request_id": "req-%s" % uuid.uuid4(),
           "resource_type": event.resource_type, "resource_uuid": volume_id,
           "event_id": event.event_id, "action_id": event.action_id,
           "detail_id": event.detail_id, "message_level": "ERROR",
           "created_at": now,
           "expires_at": now + datetime.timedelta(hours=1)}
    engine = sa.create_engine(ashlar.deployment.db_url)
    try:
        with engine.begin() as conn:
            conn.execute(models.Message.__table__.insert().values(row))
    finally:
        engine.dispose()
    return row["id"]


def _backup_of(client, volume_id: str) -> str:
    """A backup of the volume, once available (the volume is again)."""
    resp = client.post("/backups", {"backup": {"volume_id": volume_id}})
    assert resp.status_code == 202, resp.text
    backup_id = resp.json()["backup"]["id"]
    harness.wait_for(lambda: client.get("/backups/%s" % backup_id).json()[
        "backup"]["status"] == "available", timeout=120, what="the backup")
    client.wait_status(volume_id, "available", timeout=60)
    return backup_id


@pytest.fixture(scope="module")
def objects(ashlar):
    client = ashlar.http(token="admin:" + PROJECT)
    # A private type, shared with the project: every type path answers.
    resp = client.post("/types", {"volume_type": {
        "name": "openapi-%s" % uuid.uuid4().hex[:8],
        "os-volume-type-access:is_public": False,
        "extra_specs": {"multiattach": "<is> True"}}})
    type_id = resp.json()["volume_type"]["id"]
    assert client.post("/types/%s/action" % type_id, {"addProjectAccess": {
        "project": PROJECT}}).status_code == 202
    # metadata under the key the type paths use, so every key path answers
    volume = client.create_volume(name="openapi-vol", volume_type=type_id,
                                  metadata={"multiattach": "v"})
    client.wait_status(volume["id"], "available", timeout=60)
    found = {"volume_id": volume["id"], "type_id": type_id,
             "key": "multiattach", "host": VOLUME_HOST + "@file",
             "host_name": VOLUME_HOST + "@file",
             "attachment_id": None, "project_id": PROJECT,
             "class_name": "default", "name": _cluster(ashlar)}
    found["backup_id"] = _backup_of(client, volume["id"])
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": str(uuid.uuid4()),
        "connector": {"host": "c1", "ip": "10.0.0.3", "initiator": "iqn.x:c1",
                      "platform": "x86_64", "os_type": "linux2",
                      "multipath": False, "mountpoint": "/dev/vdb"}}})
    assert resp.status_code == 200, resp.text
    found["attachment_id"] = resp.json()["attachment"]["id"]
    client.post("/attachments/%s/action" % found["attachment_id"],
                {"os-complete": None})
    resp = client.post("/snapshots", {"snapshot": {
        "volume_id": volume["id"], "force": True,
        "metadata": {found["key"]: "v"}}})
    assert resp.status_code == 202, resp.text
    found["snapshot_id"] = resp.json()["snapshot"]["id"]
    found["message_id"] = _message_about(ashlar, volume["id"])
    harness.wait_for(lambda: client.get("/snapshots/%s" % found[
        "snapshot_id"]).json()["snapshot"]["status"] == "available",
        timeout=60, what="the snapshot")
    offered = client.create_volume(name="openapi-offered")
    client.wait_status(offered["id"], "available", timeout=60)
    resp = client.post("/os-volume-transfer", {"transfer": {
        "volume_id": offered["id"], "name": "openapi"}})
    assert resp.status_code == 202, resp.text
    found["transfer_id"] = resp.json()["transfer"]["id"]
    resp = client.post("/qos-specs", {"qos_specs": {
        "name": "openapi-%s" % uuid.uuid4().hex[:8], "consumer": "both",
        "read_iops_sec": "100"}})
    assert resp.status_code == 200, resp.text
    found["qos_id"] = resp.json()["qos_specs"]["id"]
    client.get("/qos-specs/%s/associate?vol_type_id=%s" % (found["qos_id"],
                                                           type_id))
    # An encrypted type for the encryption paths (a multiattach one cannot
    # be), and a key of its encryption for the one-key path.
    resp = client.post("/types", {"volume_type": {
        "name": "openapi-enc-%s" % uuid.uuid4().hex[:8]}})
    found["encrypted_type_id"] = resp.json()["volume_type"]["id"]
    resp = client.post("/types/%s/encryption" % found["encrypted_type_id"], {
        "encryption": {"provider": "luks", "control_location": "front-end",
                       "key_size": 256, "cipher": "aes-xts-plain64"}})
    assert resp.status_code == 200, resp.text
    found["encryption_id"] = "cipher"
    found.update(_group_objects(client, found["key"]))
    yield found
    _remove_group_objects(client, found)
    client.delete("/types/%s" % found["encrypted_type_id"])
    client.delete("/qos-specs/%s?force=True" % found["qos_id"])
    client.delete("/os-volume-transfer/%s" % found["transfer_id"])
    client.wait_status(offered["id"], "available", timeout=60)
    client.delete("/volumes/%s" % offered["id"])
    client.delete("/snapshots/%s" % found["snapshot_id"])
    client.delete("/backups/%s" % found["backup_id"])
    harness.wait_for(lambda: client.get("/snapshots/%s" % found[
        "snapshot_id"]).status_code == 404, timeout=60, what="its deletion")
    if found["attachment_id"]:
        client.delete("/attachments/%s" % found["attachment_id"])
    client.wait_status(volume["id"], "available", timeout=60)
    client.delete("/volumes/%s" % volume["id"])
    client.wait_status(volume["id"], None, timeout=60)
    client.delete("/types/%s" % type_id)


def _group_objects(client, key: str) -> dict:
    """A group type (with a spec under ``key``), a group of one volume, and
    a group snapshot of it, for the group paths."""
    resp = client.post("/group_types", {"group_type": {
        "name": "openapi-%s" % uuid.uuid4().hex[:8],
        "group_specs": {key: "v"}}})
    assert resp.status_code == 202, resp.text
    found = {"group_type_id": resp.json()["group_type"]["id"]}
    resp = client.post("/groups", {"group": {
        "group_type": found["group_type_id"],
        "volume_types": ["__DEFAULT__"]}})
    assert resp.status_code == 202, resp.text
    found["group_id"] = resp.json()["group"]["id"]
    member = client.create_volume(name="openapi-member",
                                  group_id=found["group_id"])
    client.wait_status(member["id"], "available", timeout=60)
    resp = client.post("/group_snapshots", {"group_snapshot": {
        "group_id": found["group_id"]}})
    assert resp.status_code == 202, resp.text
    found["group_snapshot_id"] = resp.json()["group_snapshot"]["id"]
    path = "/group_snapshots/%s" % found["group_snapshot_id"]
    harness.wait_for(lambda: client.get(path).json()["group_snapshot"][
        "status"] == "available", timeout=60, what="the group snapshot")
    return found


def _remove_group_objects(client, found: dict) -> None:
    path = "/group_snapshots/%s" % found["group_snapshot_id"]
    client.delete(path)
    harness.wait_for(lambda: client.get(path).status_code == 404,
                     timeout=60, what="the group snapshot's deletion")
    path = "/groups/%s" % found["group_id"]
    client.post(path + "/action", {"delete": {"delete-volumes": True}})
    harness.wait_for(lambda: client.get(path).status_code == 404,
                     timeout=60, what="the group's deletion")
    client.delete("/group_types/%s" % found["group_type_id"])


@pytest.mark.parametrize("version", ["3.0", MAX])
@pytest.mark.parametrize(("path", "schema"), GETS,
                         ids=[path for path, _ in GETS])
def test_get_matches_the_document(ashlar, objects, version, path, schema):
    if "/encryption" in path:
        objects = dict(objects, type_id=objects["encrypted_type_id"])
    url = ashlar.root + path.format(**objects)
    # NOTE: the cluster lists refuse any unknown filter, "detail" too.
    params = {} if "/clusters" in path else {"detail": "true"}
    if "manage" in path:
        params["host"] = VOLUME_HOST + "@file"  # required
    resp = requests.get(url, timeout=30, params=params, headers={
        "X-Auth-Token": "admin:" + PROJECT,
        "OpenStack-API-Version": "volume " + version})
    if resp.status_code == 404 and version == "3.0":
        return  # the method starts at a later microversion
    assert resp.status_code in (200, 300), resp.text
    _check(resp.json(), schema)


def test_served_document_is_the_file(ashlar):
    resp = requests.get(ashlar.root + "/openapi.yaml", timeout=30)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "application/yaml"
    assert resp.text == openapi.read_text()


def test_volume_create_answer(ashlar):
    client = ashlar.http()
    resp = client.post("/volumes", {"volume": {"size": 1}})
    assert resp.status_code == 202
    _check(resp.json(), "#/components/schemas/VolumeEnvelope")
    volume_id = resp.json()["volume"]["id"]
    client.wait_status(volume_id, "available", timeout=60)
    client.delete("/volumes/%s" % volume_id)


def test_attachment_delete_answer(ashlar, objects):
    client = ashlar.http()
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": objects["volume_id"],
        "instance_uuid": str(uuid.uuid4())}})
    assert resp.status_code == 200, resp.text
    _check(resp.json(), "#/components/schemas/AttachmentEnvelope")
    resp = client.delete("/attachments/%s" % resp.json()["attachment"]["id"])
    assert resp.status_code == 200
    _check(resp.json(), "#/components/schemas/AttachmentSummaryList")


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/volumes/%s" % NO_SUCH_ID, None),
    ("POST", "/volumes", {"volume": {"size": 0}}),
    ("POST", "/types", {"volume_type": {"name": "__DEFAULT__"}}),
    ("GET", "/nowhere", None),
])
def test_faults_match_the_document(ashlar, method, path, body):
    resp = ashlar.http().request(method, path, json=body)
    assert resp.status_code >= 400
    _check(resp.json(), "#/components/schemas/Fault")
