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


def test_a_stop_signal_during_start_is_kept_for_the_graceful_stop():
    """SIGTERM between ``catch_stop_signals`` and the wait (a service still
    starting) neither kills the process nor is lost: the wait returns at
    once, and the process goes on to stop its services itself."""
    import subprocess
    import sys
    script = (
        "import os, signal\n"
        "from common import service\n"
        "service.catch_stop_signals()\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "print('alive after the signal', flush=True)\n"
        "service._wait_for_stop_signal()\n"
        "print('stopping', flush=True)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["alive after the signal",
                                           "stopping"]
