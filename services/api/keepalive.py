"""The api's gunicorn worker: ``gthread``, keeping a kept-alive connection
on its thread while its client is about to send the next request.

NOTE(ashlar): gunicorn's threaded worker hands every kept-alive connection
back to the worker's main thread after each response: the main thread
polls it and, once the next request arrives, submits it to the thread pool
again.  A client that sends requests back to back (an attach cycle: create,
complete, show, delete) pays two thread hand-offs, a pipe write and read
and two ``epoll_ctl`` per request: about 5% of the api's CPU in an attach
cycle (``benchmarks/cycle_cost.py``: 7.5 against 7.1 ms a cycle).  Here the
thread that answered waits up to ``LINGER_MS`` for the connection's next
request and serves it itself; only then does the connection go back to the
poller.  It lingers only while the worker has no more connections than
threads, so that every connection has a thread to linger on; a connection
accepted meanwhile may wait for one for at most ``LINGER_MS``.

Built on gunicorn 27's ``ThreadWorker`` and its internals (``TESTED``):
its ``handle`` answers whether to keep the connection (23 answered a
tuple), and its ``finish_request`` queues a next request already read
ahead (24 left it unanswered, with ``gthread`` as with this worker).  On
any other gunicorn release the api runs gunicorn's own ``gthread``
worker (``worker_class``), which serves the same requests, at its own
cost per request.
"""

import select
from typing import Any

from gunicorn.workers import gthread

from common import tested_versions

#: How long a thread waits for the next request on the connection it just
#: answered (milliseconds).  In attach cycles at concurrency 8, which keep
#: this machine's CPUs busy, the next request came within 2 ms 73% of the
#: time, within 5 ms 87%, within 20 ms 99.7%.
LINGER_MS = 20

#: The gunicorn releases whose ``ThreadWorker`` internals this worker was
#: tested with.
TESTED = tested_versions.ReleaseRange("gunicorn", "27.0", "28")
#: Whether the api's workers are ``KeepAliveWorker`` (the installed
#: gunicorn is in ``TESTED``), else gunicorn's ``gthread``.
LINGERS = TESTED.holds()


def worker_class() -> str:
    """The api's gunicorn ``worker_class``."""
    return "services.api.keepalive.KeepAliveWorker" if LINGERS else "gthread"


def announce(server: Any) -> None:
    """gunicorn's ``on_starting`` hook: log which worker the api runs,
    through the master's logger (the master sets up no other)."""
    tested_versions.announce(
        TESTED, LINGERS, "api workers serve a connection's next request on "
        "the thread that answered (KeepAliveWorker)",
        "api workers are gunicorn's gthread", log=server.log.info)


class KeepAliveWorker(gthread.ThreadWorker):
    """``gthread`` that serves a connection's next request on the same
    thread when it comes within ``LINGER_MS``."""

    def handle(self, conn: gthread.TConn) -> object:
        keep = super().handle(conn)
        while keep is True and self.alive and self._next_request_soon(conn):
            keep = super().handle(conn)
        return keep

    def _next_request_soon(self, conn: gthread.TConn) -> bool:
        """Whether ``conn``'s next request arrived within ``LINGER_MS``.

        False also when gunicorn's own path must take the connection: bytes
        of the next request already read ahead (``finish_request`` queues
        them), HTTP/2, or more connections than threads.
        """
        if (self.nr_conns > self.cfg.threads
                or conn.is_http2
                or conn.parser.unreader.buf.getbuffer().nbytes):
            return False
        poller = select.poll()
        poller.register(conn.sock, select.POLLIN)
        return bool(poller.poll(LINGER_MS))
