"""An in-process api for unit tests: the falcon app over the real
operations, a real (SQLite) database and the fake driver, the volume
service's RPC answered in process."""

import json
import time
import uuid
from unittest import mock

from falcon import testing
from oslo_config import cfg

from common import capabilities
from common import conf as ashlar_conf
from common import context
from common import policy
from common import rpc
from drivers import fake as fake_driver
from services.api import app as api_app
from services.api import capability_cache
from services.api import rpc_door
from services.volume import attach
from services.volume import manage

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

HOST = "node1@b1"
MV = "volume 3.60"


def _wire(value):
    """What crossing the bus leaves of a value (JSON)."""
    return json.loads(json.dumps(value))


class FakeVolumeRPC:
    """The volume service's client, answered in process by an Attacher;
    ``cap``: the version it may send (every one by default)."""

    FENCE_VERSION = "1.4"
    CASCADE_VERSION = "1.5"
    MIGRATION_VERSION = "1.6"
    BACKUP_VERSION = "1.8"
    MANAGE_VERSION = "1.9"
    SNAPSHOT_BACKUP_VERSION = "1.10"

    def __init__(self, attacher):
        self.attacher = attacher
        self.casts = []
        self.cap = None

    def require(self, version, method):
        if self.cap is not None and tuple(map(int, version.split("."))) > \
                tuple(map(int, self.cap.split("."))):
            raise rpc.ServiceTooOld(method=method, version=version)

    def attachment_connect(self, ctxt, host, attachment_id, snap):
        return _wire(self.attacher.connect(ctxt, _wire(snap)))

    def attachment_disconnect(self, ctxt, host, attachment_id, snap):
        self.attacher.disconnect(ctxt, _wire(snap))

    def attachment_fence(self, ctxt, host, attachment_id, snap):
        return _wire(self.attacher.fence(ctxt, _wire(snap)))

    def attachment_unfence(self, ctxt, host, volume_id, clients):
        self.attacher.unfence(ctxt, volume_id, clients)

    def manage_existing_get_size(self, ctxt, host, ref, snapshot=False):
        driver = self.attacher.driver
        return (driver.manage_existing_snapshot_get_size if snapshot
                else driver.manage_existing_get_size)(_wire(ref))

    def get_manageable_volumes(self, ctxt, host):
        return _wire(manage.manageable(self.attacher, ctxt, False))

    def get_manageable_snapshots(self, ctxt, host):
        return _wire(manage.manageable(self.attacher, ctxt, True))

    def __getattr__(self, name):
        """A cast, kept as ``(name, args)`` (its keyword arguments, if any,
        as a last dict)."""
        return lambda *args, **kwargs: self.casts.append(
            (name, args + ((kwargs,) if kwargs else ())))


class Api:
    def __init__(self, client, driver, rpc, ops=None):
        self.client, self.driver, self.rpc = client, driver, rpc
        self.ops = ops

    def call(self, method, path, body=None, version=MV, token="admin:p1",
             roles=None, service=None):
        headers = {"OpenStack-API-Version": version, "X-Auth-Token": token}
        if roles is not None:
            headers["X-Roles"] = roles
        if service:
            headers["X-Service-Roles"] = service
        return self.client.simulate_request(method, "/v3" + path,
                                            headers=headers, json=body)

    def volume(self, multiattach=False, project="p1", vtype=None, **kwargs):
        return fixtures.make_volume_on(
            self.driver, project=project, multiattach=multiattach,
            host=HOST + "#b1", vtype=vtype, **kwargs).id

    def create(self, volume_id, connector=None, instance=None, mode=None,
               **kwargs):
        body = {"volume_uuid": volume_id,
                "instance_uuid": instance or str(uuid.uuid4())}
        if connector is not None:
            body["connector"] = connector
        if mode:
            body["mode"] = mode
        return self.call("POST", "/attachments", {"attachment": body},
                         **kwargs)

    def show_volume(self, volume_id, **kwargs):
        return self.call("GET", "/volumes/" + volume_id, **kwargs).json[
            "volume"]

    def action(self, volume_id, body, **kwargs):
        return self.call("POST", "/volumes/%s/action" % volume_id, body,
                         **kwargs)


def connector(host="h1", **extra):
    return dict({"host": host, "ip": "10.0.0.1", "platform": "x86_64",
                 "initiator": "iqn.x:" + host, "os_type": "linux",
                 "multipath": False}, **extra)


def door(api):
    """The RPC door's endpoint over the same operations."""
    return rpc_door.ApiEndpoint(api.ops.attachments, api.ops.fencing)


def agent(host):
    """The verified context of ``host``'s compute agent."""
    return context.RequestContext(user_id="ashlar-agent-" + host,
                                  project_id="service", roles=["service"],
                                  agent_host=host, global_request_id="r")


def make_api():
    """Yield an ``Api`` on a clean database (a fixture's body)."""
    fixtures.setup()
    fixtures.clean()
    conf = fixtures.make_conf()
    dconf = cfg.ConfigOpts()
    fake_driver.register_opts(dconf, "b1")
    dconf([], default_config_files=[])
    driver = fake_driver.FakeDriver(dconf["b1"], "b1", "node1")
    rpc = FakeVolumeRPC(attach.Attacher(conf, driver, HOST))
    ops = api_app.make_operations(conf=conf, scheduler_rpc=mock.Mock(),
                                  volume_rpc=rpc, backup_rpc=mock.Mock(),
                                  early_check=None)
    client = testing.TestClient(api_app.create_app(conf, ops))
    yield Api(client, driver, rpc, ops)
    fixtures.clean()
    policy.reset()


def warm_cache(api, reports):
    """Give the volume operations a warm capability cache that heard
    ``reports`` (``{host@backend: report}``), each backend running."""
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    cache = capability_cache.CapabilityCache(
        conf, mock.Mock(), store=capabilities.CapabilityStore(60.0),
        running_backends=lambda: set(reports))
    for host, report in reports.items():
        cache.update_service_capabilities(None, host, report, time.time())
    cache.warmed.set()
    api.ops.volumes.cache = cache
    api.ops.volumes.early_check = cache.check_type


def message(resp):
    return next(iter(resp.json.values()))["message"]
