"""The attach cycle (S3) on several checkouts of Ashlar, all running, in
alternating rounds: is a change faster, and does it cost more CPU?

This machine's speed drifts by a third within minutes, so runs of one
checkout after the other compare phases of the machine, not code.  Each
checkout is served by its own ``benchmarks.ma_cluster serve`` (a fresh
vhost and database each); every round runs S3 (this checkout's
``attach_cycle.py``) once against each, in turn, and counts the CPU of
that deployment's own processes (api, scheduler, volume: their command
lines name its state folder) per cycle, which a loaded machine moves far
less than it moves cycles/s.  Prints every round and, per checkout, the
medians::

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

from benchmarks import attach_cycle, cycle_cost


def serve(checkout: str, db: str, log: pathlib.Path) -> tuple:
    """Start ``checkout``'s deployment; return (process, endpoint, its
    state folder)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.ma_cluster", "serve", "--db", db],
        cwd=checkout, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        text = log.read_text()
        found = re.search(r"at (http\S+)", text)
        state = re.search(r"State and logs: (\S+)", text)
        if found and state:
            return proc, found.group(1), state.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("%s did not start:\n%s" % (checkout, log.read_text()))


def cpu(state: str) -> float:
    """CPU seconds so far of the deployment whose state folder is
    ``state``."""
    return sum(seconds for _kind, seconds in
               cycle_cost.cpu_seconds(((state, "ashlar"),)).values())


def s3(endpoint: str, state: str, concurrency: int,
       cycles: int) -> tuple[float, float]:
    """One S3 run (``attach_cycle``): its cycles/s (it must end clean, no
    refusal) and the deployment's CPU milliseconds per cycle."""
    before = cpu(state)
    level = attach_cycle.run(endpoint, cycles, concurrency)
    used = cpu(state) - before
    if (level["ok"] != cycles or not level["final_state_ok"]
            or level["refused"]):
        raise SystemExit("S3 did not end clean: %s" % level)
    return level["cycles_per_s"], used * 1000 / cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=400)
    parser.add_argument("--db", choices=["postgresql", "mysql", "mysqldb"],
                        default="postgresql")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="compare-checkouts-"))
    names = [os.path.abspath(c) for c in args.checkouts]
    running = []
    try:
        for i, checkout in enumerate(names):
            running.append(serve(checkout, args.db, work / ("serve%d" % i)))
        rates: dict[str, list[float]] = {name: [] for name in names}
        costs: dict[str, list[float]] = {name: [] for name in names}
        for round_no in range(1, args.rounds + 1):
            # ABBA: who goes first alternates, so drift favours no one.
            pairs = list(zip(names, running, strict=True))
            for name, (_proc, endpoint, state) in (
                    pairs if round_no % 2 else pairs[::-1]):
                rate, cost = s3(endpoint, state, args.concurrency,
                                args.cycles)
                rates[name].append(rate)
                costs[name].append(cost)
            print("round %d: %s" % (round_no, "  ".join(
                "%s %.1f/s %.1f ms CPU" % (name, rates[name][-1],
                                           costs[name][-1])
                for name in names)), flush=True)
        for name in names:
            print("%s: S3 c=%d median %.1f cycles/s (%.1f to %.1f), "
                  "%.1f ms CPU per cycle (%.1f to %.1f)" % (
                      name, args.concurrency, statistics.median(rates[name]),
                      min(rates[name]), max(rates[name]),
                      statistics.median(costs[name]), min(costs[name]),
                      max(costs[name])))
    finally:
        for proc, _endpoint, _state in running:
            proc.terminate()
        for proc, _endpoint, _state in running:
            proc.wait()


if __name__ == "__main__":
    main()
