"""Tests for common.service.Service.stop: the order of a graceful stop."""

import threading
from unittest import mock

from oslo_config import cfg

from common import conf as ashlar_conf
from common import service


class Manager(service.Manager):
    def __init__(self, calls):
        self.calls = calls

    def before_stop(self):
        self.calls.append("before_stop")


def test_stop_marks_the_row_down_after_the_last_heartbeat_then_says_goodbye():
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    calls = []
    svc = service.Service(conf, "h@b", "ashlar-volume", "ashlar-volume",
                          Manager(calls))
    svc.service_id = 7
    writing = threading.Event()

    def heartbeat():
        writing.wait(5)
        calls.append("heartbeat")
    svc._heartbeats = threading.Thread(target=heartbeat)
    svc._heartbeats.start()
    threading.Timer(0.2, writing.set).start()
    with mock.patch.object(service.services_db, "service_stopped",
                           side_effect=lambda ctxt, sid: calls.append(
                               ("stopped", sid))):
        svc.stop()
    assert calls == ["heartbeat", ("stopped", 7), "before_stop"]
