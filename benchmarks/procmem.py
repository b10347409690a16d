#!/usr/bin/env python3
"""Peak memory (VmHWM) and PSS of processes whose command line matches.

    python -m benchmarks.procmem ashlar-api ashlar-scheduler ashlar-volume

A command line also matches another deployment's processes (a test run on
the same machine); ``group_usage`` counts only given process groups (each
service started in its own session: its pid is its group's id).
"""

import json
import os
import sys


def _status(pid: str) -> dict:
    fields = {}
    with open("/proc/%s/status" % pid) as handle:
        for line in handle:
            key, _sep, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _pss_kib(pid: str) -> int:
    try:
        with open("/proc/%s/smaps_rollup" % pid) as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_groups() -> dict[int, list[int]]:
    """Process group id -> pids of its live processes."""
    groups: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        groups.setdefault(int(fields[2]), []).append(int(pid))
    return groups


def group_usage(services: dict[str, list[int]]) -> dict:
    """Pss and VmHWM (MiB) of every process in the given process groups,
    per service name (``{"api": [pgid], ...}``) and in total."""
    members = process_groups()
    report: dict = {}
    for name, pgids in services.items():
        procs = []
        for pid in sorted(p for g in pgids for p in members.get(g, [])):
            try:
                hwm = int(_status(str(pid))["VmHWM"].split()[0])
            except (OSError, KeyError):
                continue
            procs.append({"pid": pid, "vmhwm_mib": round(hwm / 1024, 1),
                          "pss_mib": round(_pss_kib(str(pid)) / 1024, 1)})
        report[name] = {"pss_mib": round(sum(p["pss_mib"] for p in procs), 1),
                        "processes": procs}
    report["total_pss_mib"] = round(sum(
        v["pss_mib"] for v in report.values()), 1)
    return report


def main() -> None:
    patterns = sys.argv[1:]
    report = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmd = handle.read().replace(b"\0", b" ").decode(errors="replace")
            status = _status(pid)
        except OSError:
            continue
        for pattern in patterns:
            if pattern in cmd and "procmem" not in cmd:
                report.setdefault(pattern, []).append({
                    "pid": int(pid),
                    "vmhwm_mib": round(int(status["VmHWM"].split()[0]) / 1024, 1),
                    "pss_mib": round(_pss_kib(pid) / 1024, 1)})
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
