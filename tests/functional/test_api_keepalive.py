"""The api's gunicorn worker (``services.api.keepalive``) in a real gunicorn,
driven over kept-alive HTTP/1.1 connections."""

import http.client
import socket
import subprocess
import sys
import time

import pytest

from deploy.testbed import harness
from services.api import keepalive


def _lingered() -> bool:
    """Whether the request is served by the thread that answered the
    connection's previous one, while it lingered (``handle``'s loop has
    bound ``keep`` by then)."""
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is keepalive.KeepAliveWorker.handle.__code__:
            return "keep" in frame.f_locals
        frame = frame.f_back
    return False


def probe_app(environ, start_response):
    """Answers ``b"<1 if lingered else 0> <the request's body>"``."""
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    reply = b"%d %s" % (_lingered(), body)
    start_response("200 OK", [("Content-Length", str(len(reply)))])
    return [reply]


def _serve(threads: int):
    port = harness.free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", "1",
         "--threads", str(threads), "--keep-alive", "30",
         "--worker-class", "services.api.keepalive.KeepAliveWorker",
         "--bind", "127.0.0.1:%d" % port,
         "tests.functional.test_api_keepalive:probe_app"],
        cwd=harness.REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def listening() -> bool:
        if proc.poll() is not None:
            pytest.fail("gunicorn did not start: %s"
                        % proc.stderr.read().decode())
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    try:
        harness.wait_for(listening, what="gunicorn on port %d" % port)
    except AssertionError:
        proc.kill()
        raise
    return proc, port


@pytest.fixture
def server(request):
    proc, port = _serve(getattr(request, "param", 4))
    yield port
    proc.terminate()
    proc.wait(timeout=30)


def _lingered_for(conn: http.client.HTTPConnection, body: bytes) -> bool:
    """Send one request; whether a lingering thread served it."""
    conn.request("POST", "/", body=body)
    resp = conn.getresponse()
    assert resp.status == 200
    lingered, _, echoed = resp.read().partition(b" ")
    assert echoed == body
    return lingered == b"1"


def test_back_to_back_requests_are_served_by_the_lingering_thread(server):
    conn = http.client.HTTPConnection("127.0.0.1", server)
    served = [_lingered_for(conn, b"request %d" % i) for i in range(6)]
    assert served == [False] + [True] * 5


def test_a_request_after_the_linger_comes_through_the_poller(server):
    conn = http.client.HTTPConnection("127.0.0.1", server)
    _lingered_for(conn, b"first")
    time.sleep(5 * keepalive.LINGER_MS / 1000.0)
    assert not _lingered_for(conn, b"after a pause")
    assert _lingered_for(conn, b"and at once")


def test_a_client_closing_while_its_thread_lingers_frees_it(server):
    for i in range(6):  # more than the 4 threads
        conn = http.client.HTTPConnection("127.0.0.1", server)
        _lingered_for(conn, b"connection %d" % i)
        conn.close()
    last = http.client.HTTPConnection("127.0.0.1", server)
    assert not _lingered_for(last, b"last")


@pytest.mark.parametrize("server", [1], indirect=True)
def test_more_connections_than_threads_are_all_served(server):
    first = http.client.HTTPConnection("127.0.0.1", server)
    second = http.client.HTTPConnection("127.0.0.1", server)
    _lingered_for(first, b"first")
    served = []
    for i in range(4):
        served.append(_lingered_for(second, b"second %d" % i))
        served.append(_lingered_for(first, b"first %d" % i))
    assert served == [False] * 8


def test_pipelined_requests_are_both_answered(server):
    with socket.create_connection(("127.0.0.1", server)) as sock:
        one = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\none"
        two = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\ntwo"
        sock.sendall(one + two)
        received = b""
        deadline = time.monotonic() + 10
        while not received.endswith(b" two"):
            assert time.monotonic() < deadline, received
            received += sock.recv(65536)
    assert received.count(b"HTTP/1.1 200 OK") == 2
    assert received.index(b" one") < received.index(b" two")
