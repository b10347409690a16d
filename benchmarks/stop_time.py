#!/usr/bin/env python3
"""How long ``ashlar`` (the embedded default) takes to end after SIGTERM.

Starts ``ashlar`` in a fresh folder ``--runs`` times; each time, once it
answers, it either sits idle or has ``--in-flight`` volume creates sent
just before the signal, and the time from SIGTERM to the process's exit is
measured (the exit status must be 0).  Prints one JSON line per load:
p50/p95/max in milliseconds::

    python -m benchmarks.stop_time [--runs 5] [--in-flight 16]
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

from benchmarks.common import summarize
from deploy.testbed import harness


def _start(folder: pathlib.Path) -> tuple[subprocess.Popen, harness.Client]:
    """``ashlar`` answering in ``folder``, as a user starts it."""
    port = harness.free_port()
    conf = folder / "ashlar.conf"
    conf.write_text("[DEFAULT]\nquota_volumes = -1\n"
                    "[api]\nbind_port = %d\n" % port)
    with open(folder / "ashlar.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c",
             "from services.embedded import main; main()",
             "--config-file", str(conf)],
            cwd=folder, stdout=log, stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONPATH=harness.REPO),
            start_new_session=True)
    client = harness.Client("http://127.0.0.1:%d/v3" % port)
    harness.wait_for(lambda: client.get("/volumes").status_code == 200,
                     timeout=60, what="ashlar to answer")
    return proc, client


def one_stop(in_flight: int) -> float:
    """Seconds from SIGTERM to exit, with ``in_flight`` creates sent just
    before it (each gets its answer or a refused connection)."""
    with tempfile.TemporaryDirectory(prefix="ashlar-stop-") as name:
        proc, client = _start(pathlib.Path(name))
        try:
            with concurrent.futures.ThreadPoolExecutor(
                    max(1, in_flight)) as pool:
                sent = [pool.submit(_create, client)
                        for _ in range(in_flight)]
                signalled = time.monotonic()
                os.kill(proc.pid, signal.SIGTERM)
                code = proc.wait(timeout=60)
                took = time.monotonic() - signalled
                concurrent.futures.wait(sent)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if code != 0:
            raise SystemExit("ashlar exited %d; see its log" % code)
        return took


def _create(client: harness.Client) -> int:
    try:
        return client.post("/volumes", {"volume": {"size": 1}}).status_code
    except OSError:
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--in-flight", type=int, default=16)
    args = parser.parse_args()
    for load in (0, args.in_flight):
        times = [one_stop(load) for _ in range(args.runs)]
        print(json.dumps(dict(summarize(times), in_flight=load)), flush=True)


if __name__ == "__main__":
    main()
