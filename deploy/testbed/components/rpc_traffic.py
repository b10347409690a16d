"""oslo.messaging casts and calls, counted, across a broker failure.

Run as a child process (``python -m deploy.testbed.components.rpc_traffic
CONFIG SECONDS``) because oslo.messaging 18.3 reads its option groups from
the global ``cfg.CONF`` only (common/rpc.py): an RPC server (``ha``
topic, threading executor, as Ashlar's services run) and a client in one
process, on the transport ``CONFIG`` names.  It casts and calls (the
cast first, then a call that waits for its answer) in a loop, printing
``ready`` after the first ``BEFORE`` rounds: the parent then kills a
broker node and writes a line to its stdin, after which the loop goes on
for ``SECONDS``.  Last it prints one JSON line: what was sent, what the
server got, which sends failed and the longest send.
"""

import collections
import json
import sys
import threading
import time
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg

#: Seconds the server may take to see every cast after the loop ends.
DRAIN_TIMEOUT = 60.0
CALL_TIMEOUT = 60
#: Rounds sent before ``ready`` (before the parent's kill).
BEFORE = 20
#: Seconds the loop may run in all (the parent may never write).
MAX_SECONDS = 300.0


class Endpoint:
    """Counts what reaches the server."""

    target = messaging.Target(version="1.0")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.casts: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()

    def ping(self, ctxt: dict) -> bool:
        """The first call, not counted: the server is listening."""
        return True

    def cast_me(self, ctxt: dict, n: int) -> None:
        with self.lock:
            self.casts[n] += 1

    def call_me(self, ctxt: dict, n: int) -> int:
        with self.lock:
            self.calls[n] += 1
        return n


def _timed(send, *args: Any, **kwargs: Any) -> tuple[float, str | None]:
    """Seconds a send took, and its error (None when it went through)."""
    started = time.monotonic()
    try:
        send(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - counted, not hidden
        return time.monotonic() - started, repr(exc)
    return time.monotonic() - started, None


def run(seconds: float) -> dict:
    transport = messaging.get_rpc_transport(cfg.CONF)
    endpoint = Endpoint()
    server = messaging.get_rpc_server(
        transport, messaging.Target(topic="ha", server="ha-server"),
        [endpoint], executor="threading")
    server.start()
    client = messaging.get_rpc_client(
        transport, messaging.Target(topic="ha"), timeout=CALL_TIMEOUT)
    client.call({}, "ping")
    sent, errors, longest = 0, {}, (0.0, "", -1)
    deadline = [time.monotonic() + MAX_SECONDS]

    def after_the_kill() -> None:
        sys.stdin.readline()
        deadline[0] = min(deadline[0], time.monotonic() + seconds)
    threading.Thread(target=after_the_kill, daemon=True).start()
    while time.monotonic() < deadline[0]:
        for kind, send in (("cast", client.cast), ("call", client.call)):
            took, error = _timed(send, {}, "%s_me" % kind, n=sent)
            if error:
                errors["%s %d" % (kind, sent)] = error
            longest = max(longest, (took, kind, sent))
        sent += 1
        if sent == BEFORE:
            print("ready", flush=True)
    drain = time.monotonic() + DRAIN_TIMEOUT
    while len(endpoint.casts) < sent and time.monotonic() < drain:
        time.sleep(0.1)
    server.stop()
    server.wait()
    transport.cleanup()
    return {"sent": sent, "errors": errors,
            "casts": dict(endpoint.casts), "calls": dict(endpoint.calls),
            "longest": {"seconds": longest[0], "kind": longest[1],
                        "n": longest[2]}}


def main(argv: list[str]) -> None:
    config, seconds = argv
    cfg.CONF(["--config-file", config], project="ashlar-ha-test")
    print(json.dumps(run(float(seconds))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
