"""services.agent.connector: detach disconnects first and finishes after a
crash, attach refuses answers that are not its request's and asks again
for a complete that timed out, and the api client refuses answers that do
not echo the request's id."""

import contextlib

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from common import conf as ashlar_conf
from common import exception
from services.agent import connector
from services.api import rpcapi

INFO = {"driver_volume_type": "local", "data": {"device_path": "/dev/x"}}


class Brick:
    def __init__(self, log):
        self.log = log

    def connect_volume(self, info):
        self.log.append(("connect", info["data"]["device_path"]))
        return {"path": info["data"]["device_path"]}

    def disconnect_volume(self, info, device_info):
        self.log.append(("disconnect", info["data"]["device_path"]))


class Api:
    """The door, in memory: one attachment ``a1`` of volume ``v1``."""

    def __init__(self, log, shared=(), answer=None):
        self.log, self.shared, self.answer = log, list(shared), answer
        self.rows = {"a1": {"id": "a1", "volume_id": "v1",
                            "connection_info": INFO}}
        self.fail_delete = False
        #: How many os-complete calls time out before one is answered.
        self.complete_timeouts = 0

    def attachment_get(self, attachment_id):
        if attachment_id not in self.rows:
            raise exception.AttachmentNotFound(attachment_id=attachment_id)
        return dict(self.rows[attachment_id],
                    shared_connections_by_attachment=self.shared)

    def attachment_delete(self, attachment_id):
        self.log.append(("delete", attachment_id))
        if self.fail_delete:
            raise exception.ServiceUnavailable(reason="crash")
        self.rows.pop(attachment_id)
        return {"attachments": [], "shared_connections_by_attachment": []}

    def attachment_create(self, volume_id, **kwargs):
        self.log.append(("create", volume_id))
        return self.answer or {"id": "a2", "volume_id": volume_id,
                               "connection_info": INFO}

    def attachment_update(self, attachment_id, connector):
        self.log.append(("update", attachment_id, connector.get("mode")))
        return self.answer or dict(self.rows[attachment_id])

    def attachment_complete(self, attachment_id):
        self.log.append(("complete", attachment_id))
        if self.complete_timeouts:
            self.complete_timeouts -= 1
            raise messaging.MessagingTimeout("no answer")


@pytest.fixture
def host(tmp_path, monkeypatch):
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("lock_path", str(tmp_path), "agent")
    log = []
    monkeypatch.setattr(connector.HostConnector, "_brick",
                        lambda self, info: Brick(log))
    monkeypatch.setattr(connector.HostConnector, "properties",
                        lambda self: {"host": "c1"})

    def make(**api):
        return connector.HostConnector(conf, Api(log, **api)), log
    return make


def test_detach_disconnects_before_it_deletes(host):
    agent, log = host()
    result = agent.detach("a1")
    assert log == [("disconnect", "/dev/x"), ("delete", "a1")]
    assert result == {"attachment_id": "a1", "disconnected": True,
                      "still_sharing": []}


def test_detach_keeps_a_device_another_attachment_shares(host):
    agent, log = host(shared=["a9"])
    assert agent.detach("a1")["still_sharing"] == ["a9"]
    assert log == [("delete", "a1")]


def test_detach_after_a_crash_between_its_steps_finishes(host):
    agent, log = host()
    agent.api.fail_delete = True
    with pytest.raises(exception.ServiceUnavailable):
        agent.detach("a1")
    agent.api.fail_delete = False
    assert agent.detach("a1")["disconnected"] is True
    assert log == [("disconnect", "/dev/x"), ("delete", "a1"),
                   ("disconnect", "/dev/x"), ("delete", "a1")]
    again = agent.detach("a1")
    assert again["disconnected"] is None and "not_found" in again
    assert log[-1] == ("delete", "a1")


def test_attach_refuses_an_answer_for_another_volume(host):
    agent, log = host(answer={"id": "a2", "volume_id": "other",
                              "connection_info": INFO})
    with pytest.raises(rpcapi.ForeignReply):
        agent.attach("v1", None)
    assert log == [("create", "v1")]


def test_api_client_refuses_an_answer_without_the_requests_id():
    class Client:
        def __init__(self, answer):
            self.answer = answer

        def prepare(self, **kwargs):
            return self

        def call(self, ctxt, method, **kwargs):
            return self.answer(ctxt)
    api = rpcapi.ApiAPI.__new__(rpcapi.ApiAPI)
    api.client = Client(lambda ctxt: {"request_id": "req-other",
                                      "attachment": {}})
    with pytest.raises(rpcapi.ForeignReply):
        api.attachment_get("a1")
    api.client = Client(lambda ctxt: {"request_id": ctxt.request_id,
                                      "attachment": {"id": "a1"}})
    assert api.attachment_get("a1") == {"id": "a1"}


RBD_INFO = {"driver_volume_type": "rbd", "name": "volumes/volume-v1",
            "hosts": ["127.0.0.1"], "ports": ["6789"],
            "auth_username": "cinder", "access_mode": "rw"}


ISCSI_INFO = {"driver_volume_type": "iscsi", "target_portal": "127.0.0.1:3260",
              "target_iqn": "iqn.2010-10.org.openstack:volume-v1",
              "target_lun": 1, "access_mode": "rw"}
NFS_INFO = {"driver_volume_type": "nfs", "export": "127.0.0.1:/export",
            "name": "volume-v1.raw", "format": "raw", "access_mode": "rw"}
USERSPACE = [
    (RBD_INFO, {"type": "librbd", "name": "volumes/volume-v1"}),
    (NFS_INFO, {"type": "libnfs", "export": "127.0.0.1:/export",
                "name": "volume-v1.raw"}),
    (ISCSI_INFO, {"type": "libiscsi", "target_portal": "127.0.0.1:3260",
                  "target_iqn": "iqn.2010-10.org.openstack:volume-v1"}),
]


@pytest.mark.parametrize("info, device", USERSPACE)
def test_userspace_attach_opens_the_volume_and_never_maps_a_device(
        host, monkeypatch, info, device):
    opened = []

    @contextlib.contextmanager
    def open_volume(conf, attachment):
        opened.append(attachment["id"])
        yield None

    monkeypatch.setattr(connector.volume_io, "open_volume", open_volume)
    agent, log = host(answer={"id": "a2", "volume_id": "v1",
                              "connection_info": info})
    result = agent.attach("v1", None)
    assert opened == ["a2"]
    assert result["device"] == device
    assert log == [("create", "v1"), ("complete", "a2")]


@pytest.mark.parametrize("info", [RBD_INFO, ISCSI_INFO])
def test_userspace_detach_has_no_device_to_disconnect(host, info):
    agent, log = host()
    agent.api.rows["a1"]["connection_info"] = info
    assert agent.detach("a1")["disconnected"] is True
    assert log == [("delete", "a1")]


def test_properties_carry_an_initiator_without_open_iscsi(tmp_path,
                                                         monkeypatch):
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("host", "c1")
    conf.set_override("iscsi_initiator", "iqn.x:c1", "agent")
    monkeypatch.setattr(connector.iscsi_io, "INITIATOR_FILE",
                        str(tmp_path / "none"))
    monkeypatch.setattr(connector.brick_connector,
                        "get_connector_properties",
                        lambda *args, **kwargs: {"host": kwargs["host"]})
    agent = connector.HostConnector(conf, Api([]))
    assert agent.properties() == {"host": "c1", "initiator": "iqn.x:c1"}


def test_attach_asks_again_when_complete_timed_out(host):
    agent, log = host()
    agent.api.complete_timeouts = 1
    assert agent.attach("v1", None)["id"] == "a2"
    assert log == [("create", "v1"), ("connect", "/dev/x"),
                   ("complete", "a2"), ("complete", "a2")]


def test_attach_leaves_a_row_whose_complete_keeps_timing_out_to_its_lease(
        host):
    agent, log = host()
    agent.api.complete_timeouts = 2
    with pytest.raises(messaging.MessagingTimeout):
        agent.attach("v1", None)
    assert ("delete", "a2") not in log


def test_attach_connects_the_projects_attachment_instead_of_creating(
        host):
    """``--attachment``: the project's row gets this host's connector (its
    ``mode`` only for a reservation made without one), then is connected
    and completed; nothing is created."""
    agent, log = host()
    result = agent.attach("v1", None, "ro", attachment_id="a1")
    assert result["id"] == "a1" and result["device"] == {"path": "/dev/x"}
    assert log == [("update", "a1", "ro"), ("connect", "/dev/x"),
                   ("complete", "a1")]


def test_attach_refuses_another_attachment_for_the_projects(host):
    agent, log = host(answer={"id": "a2", "volume_id": "v1",
                              "connection_info": INFO})
    with pytest.raises(rpcapi.ForeignReply):
        agent.attach("v1", None, attachment_id="a1")
    assert log == [("update", "a1", None)]


def test_attach_leaves_the_projects_attachment_when_connecting_fails(
        host, monkeypatch):
    """The agent deletes a row it made whose connect failed, never the
    project's (its lease removes it unless completed)."""
    agent, log = host()

    def fail(self, attachment):
        raise OSError("no path to the target")
    monkeypatch.setattr(connector.HostConnector, "_connect", fail)
    with pytest.raises(OSError):
        agent.attach("v1", None, attachment_id="a1")
    assert log == [("update", "a1", None)]
    agent.api.rows["a2"] = {"id": "a2", "volume_id": "v1"}
    with pytest.raises(OSError):
        agent.attach("v1", None)
    assert log[1:] == [("create", "v1"), ("delete", "a2")]


class _FencedHost:
    """A host whose open volume fails at close (a fenced host's flush)."""

    def __init__(self):
        self.detached = []

    def attach(self, volume_id, instance_uuid, mode, attachment_id=None):
        return {"id": attachment_id or "att-1", "volume_id": volume_id}

    @contextlib.contextmanager
    def open(self, attachment_id):
        class Volume:
            clients = ["127.0.0.1:0/1"]
        yield Volume()
        raise OSError(108, "Cannot send after transport endpoint shutdown")

    def detach(self, attachment_id):
        self.detached.append(attachment_id)
        return {"detached": attachment_id}


def test_hold_detaches_even_when_closing_the_volume_fails():
    """A fenced host's detach must always complete: the failed flush is
    reported, and the attachment is deleted anyway."""
    from services.agent import hold

    host = _FencedHost()
    said = []
    hold.Holder(host).serve("vol-1", None, "rw", ["detach"], said.append)
    assert host.detached == ["att-1"]
    assert said[-1]["detached"] == "att-1"
    assert "Cannot send after transport endpoint shutdown" in \
        said[-1]["close_failed"]


def test_hold_holds_the_projects_attachment():
    from services.agent import hold

    host = _FencedHost()
    said = []
    hold.Holder(host).serve("vol-1", None, None, ["detach"], said.append,
                            attachment_id="att-p")
    assert said[0]["attachment"]["id"] == "att-p"
    assert host.detached == ["att-p"]
