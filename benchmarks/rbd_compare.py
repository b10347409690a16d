#!/usr/bin/env python3
"""The RBD issue's figures from rbd_side_by_side.sh's JSON lines.

Goal table: Cinder's RBD driver next to Ashlar's rbd backend (min-max over
the bench.py runs, and the ratio of the medians), then the snapshot
latencies (snapshot_latency.py) and the data path (data_path.py) with the
agent's MiB/s as a share of librbd's::

    python -m benchmarks.rbd_compare --cinder OUT/cinder-rbd.jsonl \\
        --ashlar OUT/ashlar-rbd.jsonl --snapshots OUT/snapshot-latency.jsonl \\
        --data-path OUT/data-path.jsonl
"""

import argparse
import json
import statistics

#: (label, scenario, concurrency or None, field in the level/scenario,
#:  scale, goal)
GOALS = [
    ("S3 attach cycles/s, c=8", "S3", 8, "cycles_per_s", 1, ">= 25x Cinder"),
    ("S3 attach cycles/s, c=1", "S3", 1, "cycles_per_s", 1, ""),
    ("S4 first-try successes of 16", "S4", None, "first_try_successes", 1,
     "16/16"),
    ("S2 create->available p50 ms, c=1", "S2", 1, "p50", 1000, "< 100 ms"),
    ("S2 volumes/s, c=8", "S2", 8, "volumes_per_s", 1, ""),
]


def runs_of(path: str) -> list[dict]:
    """bench.py's JSON lines as runs: each run begins at its ``meta`` line
    and maps a scenario's id (``S3``) to its record."""
    runs: list[dict] = []
    for record in read_lines(path):
        if record.get("scenario") == "meta":
            runs.append({})
        elif runs and record.get("id"):
            runs[-1][record["id"]] = record
    return runs


def level(run: dict, scenario: str, conc: int) -> dict:
    """A scenario's figures at one concurrency (empty if not run)."""
    return next((found for found in run.get(scenario, {}).get("levels", [])
                 if found["concurrency"] == conc), {})


def values(runs: list[dict], scenario: str, conc: int | None,
           field: str) -> list[float]:
    found = []
    for run in runs:
        block = level(run, scenario, conc) if conc else run.get(scenario, {})
        if field == "p50":
            block = block.get("create_to_available_s", {})
        if block.get(field) is not None:
            found.append(block[field])
    return found


def span(vals: list[float], scale: float) -> str:
    if not vals:
        return "n/a"
    return "%.4g–%.4g" % (min(vals) * scale, max(vals) * scale)


def goal_table(cinder: list[dict], ashlar: list[dict]) -> None:
    print("| figure (min–max of %d/%d runs) | Cinder RBD | Ashlar RBD | "
          "Ashlar/Cinder (medians) | goal |" % (len(cinder), len(ashlar)))
    print("|---|---|---|---|---|")
    for label, scenario, conc, field, scale, goal in GOALS:
        c = values(cinder, scenario, conc, field)
        a = values(ashlar, scenario, conc, field)
        ratio = (statistics.median(a) / statistics.median(c)
                 if a and c and statistics.median(c) else None)
        print("| %s | %s | %s | %s | %s |" % (
            label, span(c, scale), span(a, scale),
            "%.2fx" % ratio if ratio is not None else "n/a", goal))


def read_lines(path: str) -> list[dict]:
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def snapshot_table(path: str) -> None:
    print("\n| side | backend | operation | n | p50 ms | p95 ms | max ms "
          "| ops/s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in read_lines(path):
        s = row["create_to_available"]
        print("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
            row.get("side", "ashlar"), row["backend"], row["operation"],
            s["n"], s["p50_ms"],
            s["p95_ms"], s["max_ms"], row["ops_per_s"]))


def data_path_table(path: str) -> None:
    rows = read_lines(path)
    rates = {(r["path"], r["direction"]): r["mib_per_s"] for r in rows
             if "mib_per_s" in r}
    print("\n| path | direction | MiB/s median [min–max] | per 4 MiB block "
          "p50/p95/max ms | blocks/s | agent/librbd |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r["direction"] == "open":
            s = r["latency"]
            print("| %s | open | – | %s / %s / %s (open) | – | – |" % (
                r["path"], s["p50_ms"], s["p95_ms"], s["max_ms"]))
            continue
        s = r["per_block"]
        share = r["mib_per_s"] / rates[("librbd", r["direction"])]
        print("| %s | %s | %s [%s–%s] | %s / %s / %s | %s | %s |" % (
            r["path"], r["direction"], r["mib_per_s"],
            *r["mib_per_s_min_max"], s["p50_ms"], s["p95_ms"], s["max_ms"],
            r["block_ops_per_s"],
            "%.0f%%" % (100 * share) if r["path"] == "agent" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cinder", required=True)
    parser.add_argument("--ashlar", required=True)
    parser.add_argument("--snapshots")
    parser.add_argument("--data-path")
    args = parser.parse_args()
    goal_table(runs_of(args.cinder), runs_of(args.ashlar))
    if args.snapshots:
        snapshot_table(args.snapshots)
    if args.data_path:
        data_path_table(args.data_path)


if __name__ == "__main__":
    main()
