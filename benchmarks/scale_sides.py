"""The scale rig's figures side by side: Ashlar's runs next to Cinder's.

Reads the JSON lines that :mod:`benchmarks.scale_rig` (Ashlar) and
:mod:`benchmarks.scale_cinder` (Cinder 29) print, pairs Ashlar's run *i*
with Cinder's run *i* (run them alternately, on the same database and
driver), and prints one row per figure at scale: Cinder's min-max,
Ashlar's min-max, and the min-max of the pairs' ratios Cinder / Ashlar
(issue 43's goal: at least 10).  Latencies are p50 (the boot storm's
p99 too); the reads also give the api's CPU per request::

    python -m benchmarks.scale_sides --ashlar A1 A2 A3 --cinder C1 C2 C3
        [--phase loaded|loaded_no_reports|empty]

``--phase loaded`` (the default) takes Ashlar's figures with the simulated
backends' reports flowing, the stricter side: Cinder's loaded services send
none.  ``loaded_no_reports`` takes them after the senders stopped (the
rows' share alone; the reads of that phase are the rig's quiet reads,
measured as Cinder's are); ``empty``, the scenarios on the empty database.
"""

import argparse
import json
from collections.abc import Iterator

from benchmarks import scale_rig
from benchmarks import side_by_side


def _scenario(record: dict) -> Iterator[tuple[str, float | None]]:
    """The figure the rig compares between phases (``headline``), in ms."""
    name, value = scale_rig.headline(record)
    yield name + " ms", value


def _figure(record: dict) -> Iterator[tuple[str, float | None]]:
    kind = record["figure"]
    if kind == "read":
        yield "%s p50 ms" % record["op"], record["p50_ms"]
        yield "%s api CPU ms" % record["op"], record["api_cpu_ms_per_op"]
    elif kind == "paging":
        yield ("paging %s by %d s" % (
            "all projects" if record["all_tenants"] else "one project",
            record["limit"]), record["seconds"])
    elif kind == "boot_storm":
        yield "boot storm all attached s", record["all_attached_s"]
        yield "boot storm p99 ms", record["attach_p99_ms"]
    elif kind == "multiattach_storm":
        yield "%d hosts on one volume: all attached ms" % record["hosts"], \
            record["all_attached_ms"]


def _wanted(record: dict, phase: str, side: str) -> bool:
    """Whether a record is of the phase compared: Cinder's loaded reads
    carry no phase, nor do Ashlar's with reports flowing."""
    found = record.get("phase")
    if "scenario" in record or record.get("figure") in (
            "boot_storm", "multiattach_storm"):
        staged = "loaded" if side == "cinder" and phase != "empty" else phase
        return found == staged
    if phase == "empty":
        return False
    if record.get("figure") == "read":
        read_in = None if side == "cinder" or phase == "loaded" else phase
        return found == read_in
    return record.get("figure") == "paging"


def figures(path: str, phase: str, side: str) -> dict[str, float | None]:
    """``{figure: value}`` of one run's output (other lines skipped; None:
    never reached, as all attached when some never were)."""
    found: dict[str, float | None] = {}
    with open(path) as lines:
        for line in lines:
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if not _wanted(record, phase, side):
                continue
            source = _scenario if "scenario" in record else _figure
            for name, value in source(record):
                found.setdefault(name, value)
    return found


def _number(value: float) -> str:
    return "%.0f" % value if value >= 100 else "%.3g" % value


def _span(values: list[float | None]) -> str:
    """min–max (``side_by_side.span``), and how many runs have no figure
    ("never")."""
    missing = values.count(None)
    if not missing:
        return side_by_side.span(values, fmt=_number)
    known = side_by_side.span(values, fmt=_number)
    return "%snever in %d of %d" % (
        "" if known == "n/a" else known + ", ", missing, len(values))


def table(ashlar: list[dict[str, float | None]],
          cinder: list[dict[str, float | None]]) -> str:
    """The markdown table of the figures every run of both sides has."""
    names = [name for name in cinder[0]
             if all(name in run for run in ashlar + cinder)]
    lines = ["| figure | Cinder | Ashlar | Cinder / Ashlar |",
             "| --- | --- | --- | --- |"]
    for name in names:
        ratios: list[float | None] = []
        for a, c in zip(ashlar, cinder, strict=True):
            mine, theirs = a[name], c[name]
            if mine and theirs is not None:
                ratios.append(theirs / mine)
        lines.append("| %s | %s | %s | %s |" % (
            name, _span([run[name] for run in cinder]),
            _span([run[name] for run in ashlar]),
            "%s×" % _span(ratios) if ratios else "-"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ashlar", nargs="+", required=True,
                        help="scale_rig outputs, in the order they ran")
    parser.add_argument("--cinder", nargs="+", required=True,
                        help="scale_cinder outputs, paired in order")
    parser.add_argument("--phase", default="loaded",
                        choices=("loaded", "loaded_no_reports", "empty"))
    args = parser.parse_args(argv)
    if len(args.ashlar) != len(args.cinder):
        parser.error("as many Ashlar runs as Cinder runs, paired in order")
    print(table([figures(p, args.phase, "ashlar") for p in args.ashlar],
                [figures(p, args.phase, "cinder") for p in args.cinder]))


if __name__ == "__main__":
    main()
