"""Where an attach cycle's CPU goes, and how long its volume lock queue is.

Runs S3 (``attach_cycle.py``: one multiattach volume, cycles of create with
a connector, os-complete, show, delete) against an endpoint served by
``ma_cluster.py serve --db postgresql``, and prints JSON: cycles/s, the CPU
milliseconds per cycle of each process kind on this machine (``/proc``
accounting of api, volume, scheduler, postgres, rabbitmq and the bench
client), and what PostgreSQL's backends of the deployment were doing,
sampled every 5 ms (``pg_stat_activity``: on average how many waited on a
lock, how many held a transaction open waiting for their client; the
sampler's own queries add about half a millisecond per cycle to
postgresql's CPU)::

    python -m benchmarks.cycle_cost --endpoint URL [--cycles 400]
        [--concurrency 8]
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import psycopg
KINDS = (("services.api", "api"), ("services.volume", "volume"),
         ("services.scheduler", "scheduler"), ("postgres", "postgresql"),
         ("beam", "rabbitmq"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(kinds: tuple = KINDS) -> dict[str, tuple[str, float]]:
    """CPU seconds so far of every live process of ``kinds`` ((marker in
    its command line, kind) pairs), by pid: (kind, seconds)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = pathlib.Path("/proc", pid, "cmdline").read_bytes()
            stat = pathlib.Path("/proc", pid, "stat").read_text()
        except OSError:
            continue
        kind = next((name for marker, name in kinds
                     if marker.encode() in cmd), None)
        if kind:
            fields = stat.rsplit(")", 1)[1].split()
            found[pid] = (kind, (int(fields[11]) + int(fields[12])) / TICK)
    return found


def cpu_by_kind(kinds: tuple = KINDS) -> dict[str, float]:
    """CPU seconds so far of the live processes of ``kinds``, summed by
    kind."""
    found: dict[str, float] = {}
    for kind, seconds in cpu_seconds(kinds).values():
        found[kind] = found.get(kind, 0.0) + seconds
    return found


def sample_backends(stop: threading.Event, counts: collections.Counter) -> None:
    """Count (state, wait) of the deployment's backends every 5 ms."""
    conn = psycopg.connect(host="127.0.0.1", user="postgres",
                           dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cursor:
        while not stop.is_set():
            cursor.execute(
                "SELECT state, coalesce(wait_event_type, '-') FROM "
                "pg_stat_activity WHERE datname LIKE 'ashlar_test%' "
                "AND state <> 'idle'")
            counts["samples"] += 1
            for state, wait in cursor.fetchall():
                counts["%s/%s" % (state, wait)] += 1
            time.sleep(0.005)
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--cycles", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    counts: collections.Counter = collections.Counter()
    stop = threading.Event()
    sampler = threading.Thread(target=sample_backends, args=(stop, counts))
    before = cpu_seconds()
    sampler.start()
    out = subprocess.run([sys.executable, "-m", "benchmarks.attach_cycle",
                          "--endpoint", args.endpoint,
                          "--cycles", str(args.cycles),
                          "--concurrency", str(args.concurrency)],
                         check=True, capture_output=True, text=True).stdout
    stop.set()
    sampler.join()
    spent: collections.Counter = collections.Counter()
    for pid, (kind, seconds) in cpu_seconds().items():
        spent[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    # The bench client ran and exited between the two readings: its CPU is
    # what this process's children used.
    usage = os.times()
    spent["bench"] = usage.children_user + usage.children_system
    level = json.loads(out.splitlines()[-1])
    if level["ok"] != args.cycles or not level["final_state_ok"]:
        sys.exit("S3 did not end clean: %s" % level)
    samples = counts.pop("samples") or 1
    print(json.dumps({
        "concurrency": args.concurrency, "cycles": args.cycles,
        "cycles_per_s": level["cycles_per_s"],
        "create_rejections": level["refused"],
        "cpu_ms_per_cycle": {kind: round(1000 * seconds / args.cycles, 1)
                             for kind, seconds in sorted(spent.items())},
        "postgresql_backends_on_average": {
            key: round(value / samples, 2)
            for key, value in counts.most_common()}}, indent=1))


if __name__ == "__main__":
    main()
