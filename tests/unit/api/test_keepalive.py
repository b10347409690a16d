"""services.api.keepalive: when a thread takes its connection's next request
itself (the worker in a real gunicorn: tests/functional/test_api_keepalive.py).
"""

import io
import socket
import types
from typing import Any

import pytest

from services.api import keepalive


def _worker(nr_conns: int, threads: int) -> keepalive.KeepAliveWorker:
    worker = object.__new__(keepalive.KeepAliveWorker)
    worker.nr_conns = nr_conns
    worker.cfg = types.SimpleNamespace(threads=threads)
    return worker


def _conn(sock: socket.socket, read_ahead: bytes = b"") -> Any:
    buf = io.BytesIO()
    buf.write(read_ahead)
    return types.SimpleNamespace(
        sock=sock, is_http2=False,
        parser=types.SimpleNamespace(unreader=types.SimpleNamespace(buf=buf)))


@pytest.mark.skipif(not keepalive.LINGERS, reason="gunicorn outside the "
                    "tested range: the api runs gunicorn's gthread")
@pytest.mark.parametrize("nr_conns,sent,read_ahead,expected", [
    (4, b"POST / HTTP/1.1\r\n", b"", True),  # the next request came
    (4, b"", b"", False),                     # nothing within LINGER_MS
    (5, b"POST / HTTP/1.1\r\n", b"", False),  # more connections than threads
    (4, b"\r\n", b"POST / HTTP/1.1", False),  # read ahead: gunicorn's queue
])
def test_when_a_thread_takes_the_next_request_itself(nr_conns, sent,
                                                     read_ahead, expected):
    ours, theirs = socket.socketpair()
    with ours, theirs:
        if sent:
            theirs.sendall(sent)
        assert _worker(nr_conns, threads=4)._next_request_soon(
            _conn(ours, read_ahead)) is expected



def test_the_api_runs_gunicorns_gthread_outside_the_tested_range(monkeypatch):
    """On a gunicorn this worker was not tested with, the api's workers are
    gunicorn's own; on a tested one, this worker."""
    monkeypatch.setattr(keepalive, "LINGERS", False)
    assert keepalive.worker_class() == "gthread"
    monkeypatch.setattr(keepalive, "LINGERS", True)
    assert keepalive.worker_class() == "services.api.keepalive.KeepAliveWorker"


def test_the_master_logs_which_worker_the_api_runs(monkeypatch):
    """gunicorn's ``on_starting`` hook, through the master's own logger."""
    from common import tested_versions
    monkeypatch.setattr(tested_versions, "_ANNOUNCED", set())
    monkeypatch.setattr(keepalive, "LINGERS", False)
    lines = []
    server = types.SimpleNamespace(log=types.SimpleNamespace(
        info=lambda message, values: lines.append(message % values)))
    keepalive.announce(server)
    assert len(lines) == 1 and "gunicorn" in lines[0]
    assert lines[0].endswith("outside the tested range >=27.0,<28: api "
                             "workers are gunicorn's gthread")
