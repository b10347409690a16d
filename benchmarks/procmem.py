#!/usr/bin/env python3
"""Peak memory (VmHWM) and PSS of processes whose command line matches.

    python benchmarks/procmem.py ashlar-api ashlar-scheduler ashlar-volume
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
