"""The attach cycle (S3) on several checkouts of Ashlar, all running, in
alternating rounds: is a change faster?

This machine's speed drifts by a third within minutes, so runs of one
checkout after the other compare phases of the machine, not code.  Each
checkout is served by its own ``benchmarks.ma_cluster serve`` (a fresh
vhost and database each); every round runs S3 (this checkout's
``attach_cycle.py``) once against each, in turn.  Prints every round and,
per checkout, the median::

    git worktree add /tmp/before <rev>
    python -m benchmarks.compare_checkouts /tmp/before . [--rounds 6]
        [--concurrency 8] [--cycles 400] [--db postgresql]
"""

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import attach_cycle


def serve(checkout: str, db: str, log: pathlib.Path) -> tuple:
    """Start ``checkout``'s deployment; return (process, endpoint)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.ma_cluster", "serve", "--db", db],
        cwd=checkout, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        text = log.read_text()
        found = re.search(r"at (http\S+)", text)
        if found and "State and logs" in text:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("%s did not start:\n%s" % (checkout, log.read_text()))


def s3(endpoint: str, concurrency: int, cycles: int) -> float:
    """One S3 run (``attach_cycle``); its cycles/s (it must end clean, no
    refusal)."""
    level = attach_cycle.run(endpoint, cycles, concurrency)
    if (level["ok"] != cycles or not level["final_state_ok"]
            or level["refused"]):
        raise SystemExit("S3 did not end clean: %s" % level)
    return level["cycles_per_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=400)
    parser.add_argument("--db", choices=["postgresql", "mysql"],
                        default="postgresql")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="compare-checkouts-"))
    names = [os.path.abspath(c) for c in args.checkouts]
    running = []
    try:
        for i, checkout in enumerate(names):
            running.append(serve(checkout, args.db, work / ("serve%d" % i)))
        rates: dict[str, list[float]] = {name: [] for name in names}
        for round_no in range(1, args.rounds + 1):
            for name, (_proc, endpoint) in zip(names, running, strict=True):
                rates[name].append(s3(endpoint, args.concurrency,
                                      args.cycles))
            print("round %d: %s" % (round_no, "  ".join(
                "%s %.1f" % (name, rates[name][-1]) for name in names)),
                flush=True)
        for name in names:
            print("%s: S3 c=%d median %.1f cycles/s (%.1f to %.1f)" % (
                name, args.concurrency, statistics.median(rates[name]),
                min(rates[name]), max(rates[name])))
    finally:
        for proc, _endpoint in running:
            proc.terminate()
        for proc, _endpoint in running:
            proc.wait()


if __name__ == "__main__":
    main()
