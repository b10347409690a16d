"""Cinder 29 (the anchor) and Ashlar side by side, as a user would measure.

Every round starts the anchor fresh (``stop.sh``, ``cinder-manage db purge
0`` and ``run.sh``, as ``bench_anchor.sh`` does), runs the anchor's
``bench.py`` against it and stops it (``stop.sh``); then starts Ashlar fresh
from its console scripts (``ma_cluster.Cluster``: ``ashlar-api`` with 2
workers, ``ashlar-scheduler`` and, as the anchor's one ``cinder-volume``,
one ``ashlar-volume`` with both backends, ``node1@ma`` and ``node1@plain``;
``--volumes two``: each on a node of its own, ``node2@plain``; on a new
RabbitMQ vhost and a new database), runs the same ``bench.py`` with the same
flags and stops it. bench.py runs in parts (S1 | S2 at c=1 | S2 at c=8 | S3
at c=1 | S3 at c=8 | S4,S5,S6) so that the Pss of every process of each
deployment is read right after S3, and the CPU of each S2 and S3 level is
counted per process kind. Then it prints the table of issue 21 (per metric:
Cinder min-max, Ashlar min-max and the min-max of the per-round ratios:
Cinder / Ashlar for a latency, Ashlar / Cinder for a rate and for Pss) and
one JSON line of every figure; the raw JSON lines, logs and process figures
stay in the output folder. Pss counts each deployment's own processes (every
member of the process groups of its api, scheduler and volume services), not
the shared database and broker::

    python -m benchmarks.side_by_side --anchor ANCHOR_DIR \\
        --anchor-home ANCHOR_HOME [--rounds 3] [--db mysql|mysqldb|postgresql]
        [--cinder-db mysql|mysqldb|postgresql] [--auth keystone]
        [--volumes one|two] [--cpu] [--out DIR]

``ANCHOR_DIR`` is the anchor's folder (``bench.py``, ``run.sh``,
``stop.sh``, ``procstats.sh``, ``s6_extra_backend.sh``, ``etc/``), which is
not part of this repository; ``ANCHOR_HOME`` holds its venv and state
(``--anchor-home`` defaults to the ``ANCHOR_HOME`` variable), set up once
as ``benchmarks/README.md`` says.

The anchor runs on MariaDB through PyMySQL, as its ``cinder.conf`` says, or
with ``--cinder-db mysqldb`` through mysqlclient (plain ``mysql://``, the
dialect's default driver, installed into its venv first); ``--db mysqldb``
puts Ashlar on the same MariaDB through mysqlclient (``pip install
'ashlar[mysql]'``).  One driver on both sides is the equal-terms
comparison: ``--db mysql`` (and the default ``--cinder-db``), or ``--db
mysqldb --cinder-db mysqldb``; on PostgreSQL, ``--db postgresql
--cinder-db postgresql`` (both through psycopg 3; the anchor on a fresh
database ``cinder`` of the machine's PostgreSQL, synced by its
``cinder-manage`` and dropped at the end). ``--auth
keystone`` puts both apis behind one real Keystone (``keystone_sides.py``):
the same figures with authentication on. ``--cpu`` also prints the CPU
milliseconds per S2 volume (its create, its polls and its delete) and per S3
attach cycle of the api, scheduler, volume, database, broker and client
processes (and of the rest of the machine, which other work shares): each
kind's processes are the deployment's own process groups, the database and
broker servers (whole servers, shared with anything else using them) and the
bench client. SIGINT/SIGTERM stop the round: bench.py gets a SIGINT (its
cleanup deletes what it created), then both deployments are stopped.
"""

import argparse
import collections
import contextlib
import json
import os
import pathlib
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from typing import IO

import sqlalchemy as sa

from benchmarks import keystone_sides
from benchmarks import ma_cluster
from benchmarks import procmem
from deploy.testbed.components import mysqlclient

REPO = pathlib.Path(ma_cluster.REPO)
LEVELS = (1, 8)
BENCH_TIMEOUT = 3600.0
TICK = os.sysconf("SC_CLK_TCK")
#: Process names (``/proc/PID/comm``) of the database and broker servers.
DATABASE = {"mysql": ("mariadbd", "mysqld"), "mysqldb": ("mariadbd", "mysqld"),
            "postgresql": ("postgres",)}
BROKER = ("beam.smp",)
KINDS = ("api", "scheduler", "volume", "database", "broker", "client")
#: The anchor's database URL through each MariaDB driver (its cinder.conf
#: names the first).
CINDER_URLS = {
    "mysql": "mysql+pymysql://cinder:cinder@127.0.0.1/cinder?charset=utf8mb4",
    "mysqldb": "mysql://cinder:cinder@127.0.0.1/cinder?charset=utf8mb4",
    "postgresql": "postgresql://postgres@127.0.0.1/cinder"}
#: Where the anchor's PostgreSQL database is made and dropped.
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1/postgres"
#: The scenarios whose CPU is counted per process kind, and per what.
METERED = {"S2": "volume (create, polls, delete)", "S3": "attach cycle"}

#: key, label, unit, how the ratio is taken: "faster" (Cinder / Ashlar for
#: a latency), "more" (Ashlar / Cinder for a rate), "share" (Ashlar /
#: Cinder, lower is better).
METRICS = (
    ("s1_p50_ms", "S1 unsatisfiable create, time to failure p50", "ms",
     "faster"),
    ("s2_c1_p50_ms", "S2 create→available p50, c=1", "ms", "faster"),
    ("s2_c8_per_s", "S2 volumes/s, c=8", "", "more"),
    ("s3_c1_p50_ms", "S3 attach cycle p50, c=1", "ms", "faster"),
    ("s3_c8_per_s", "S3 cycles/s, c=8", "", "more"),
    ("s6_p50_s", "S6 new backend visible p50", "s", "faster"),
    ("pss_mib", "Pss of all processes after S3", "MiB", "share"),
)


class Interrupted(Exception):
    """SIGTERM or SIGINT: stop the round and clean up."""


def _interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM meanwhile (cleanup is not cut short; the
    children run in their own sessions, so a Ctrl-C does not reach them)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN)
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# -- process accounting -----------------------------------------------------
def cpu_snapshot() -> dict[int, tuple[int, str, float]]:
    """pid -> (process group, name, CPU seconds so far) of every process."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as handle:
                stat = handle.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        found[int(pid)] = (int(fields[2]), name,
                           (int(fields[11]) + int(fields[12])) / TICK)
    return found


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent busy since boot (``/proc/stat``)."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / TICK


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class CpuMeter:
    """CPU seconds per process kind between ``start`` and ``stop``."""

    def __init__(self, groups: dict[str, list[int]],
                 database: tuple[str, ...]) -> None:
        self.kind_of_group = {g: kind for kind, pgids in groups.items()
                              for g in pgids}
        self.database = database

    def kind(self, pgid: int, name: str) -> str | None:
        if pgid in self.kind_of_group:
            return self.kind_of_group[pgid]
        if name in self.database:
            return "database"
        return "broker" if name in BROKER else None

    def start(self) -> None:
        self.before = cpu_snapshot()
        self.machine = machine_busy_seconds()
        self.client = children_cpu()

    def stop(self) -> dict[str, float]:
        spent: collections.Counter = collections.Counter()
        for pid, (pgid, name, seconds) in cpu_snapshot().items():
            kind = self.kind(pgid, name)
            if kind:
                spent[kind] += seconds - self.before.get(
                    pid, (pgid, name, 0.0))[2]
        # The bench client ran and was reaped between the two readings.
        spent["client"] = children_cpu() - self.client
        spent["rest_of_machine"] = (machine_busy_seconds() - self.machine
                                    - sum(spent.values()))
        return {kind: round(seconds, 3) for kind, seconds in spent.items()}


# -- the two deployments ----------------------------------------------------
class Anchor:
    """Cinder 29 through the anchor's own run.sh / stop.sh."""

    name = "cinder"

    def __init__(self, args: argparse.Namespace, out: pathlib.Path,
                 round_no: int,
                 auth: keystone_sides.Auth | None = None) -> None:
        self.auth = auth
        self.token, self.auth_flags = keystone_sides.side_credentials(auth)
        self.dir = args.anchor
        self.env = dict(os.environ, ANCHOR_HOME=str(args.anchor_home))
        self.state = pathlib.Path(self.env.get(
            "STATE", args.anchor_home / "state"))
        self.venv = pathlib.Path(self.env.get(
            "VENV", args.anchor_home / "venv"))
        self.conf = self.env.get("CONF", str(self.dir / "etc" / "cinder.conf"))
        self.endpoint = "http://127.0.0.1:%s/v3/%s" % (
            self.env.get("PORT", "8776"),
            auth.project if auth else ma_cluster.PROJECT)
        self.out = out
        self.tag = "%s.%d" % (self.name, round_no)
        self.database = DATABASE["mysql"]

    def _script(self, name: str, *args: str, check: bool = True,
                timeout: float = 300) -> None:
        with open(self.out / ("%s.%s.txt" % (self.tag, name)), "ab") as log:
            proc = subprocess.run([str(self.dir / name), *args],
                                  env=self.env, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=timeout,
                                  start_new_session=True)
        if check and proc.returncode:
            raise RuntimeError("%s exited %d; see %s" % (
                name, proc.returncode, log.name))

    def start(self) -> float:
        """bench_anchor.sh's preparation, then run.sh (waits until ready);
        return run.sh's seconds until the services and pools were up."""
        self._script("stop.sh", check=False)
        subprocess.run([str(self.venv / "bin" / "cinder-manage"),
                        "--config-file", self.conf, "db", "purge", "0"],
                       env=self.env, capture_output=True, timeout=300,
                       start_new_session=True)
        for log in (self.state / "logs").glob("cinder-*"):
            log.write_bytes(b"")
        if self.auth:
            return keystone_sides.start_anchor(
                self.dir, self.venv, self.state, self.conf, self.env,
                self.auth, self.token)
        self._script("run.sh")
        ready = (self.state / "run" / "ready_times").read_text()
        return float(ready.rsplit("services_and_pools_ready_s=", 1)[1])

    def groups(self) -> dict[str, list[int]]:
        run = self.state / "run"
        return {svc: [int((run / ("%s.pid" % svc)).read_text())]
                for svc in ("api", "scheduler", "volume")}

    def after_s3(self) -> None:
        """The anchor's own process figures too (procstats.sh)."""
        with open(self.out / ("%s.procstats.json" % self.tag), "wb") as out:
            subprocess.run([str(self.dir / "procstats.sh")], env=self.env,
                           stdout=out, check=True, timeout=120,
                           start_new_session=True)

    def s6_flags(self) -> list[str]:
        hook = shlex.quote(str(self.dir / "s6_extra_backend.sh"))
        return ["--s6-start-cmd", hook + " start", "--s6-stop-cmd",
                hook + " stop", "--s6-pool-match", "@extra#",
                "--s6-backend-name", "anchor_extra"]

    def stop(self) -> None:
        self._script("stop.sh", check=False)
        logs = self.out / ("%s.logs" % self.tag)
        logs.mkdir(exist_ok=True)
        for log in (self.state / "logs").glob("cinder-*"):
            shutil.copy(log, logs)


class Ashlar:
    """Ashlar from its console scripts, shaped like the anchor."""

    name = "ashlar"

    def __init__(self, args: argparse.Namespace, out: pathlib.Path,
                 round_no: int,
                 auth: keystone_sides.Auth | None = None) -> None:
        self.auth = auth
        self.token, self.auth_flags = keystone_sides.side_credentials(auth)
        self.args = args
        self.folder = out / ("ashlar.%d.state" % round_no)
        self.folder.mkdir()
        self.env = dict(os.environ)
        self.cluster: ma_cluster.Cluster | None = None
        self.database = DATABASE[args.db]
        self.endpoint = ""

    def start(self) -> float:
        """Fresh vhost and database, db sync, the services; return the
        seconds from db sync until both pools were listed."""
        auth = {} if self.auth is None else {
            "api_extra": "[api]\nauth_strategy = keystone\n"
                         + self.auth.authtoken(),
            "token": self.token, "project": self.auth.project}
        self.cluster = ma_cluster.Cluster(
            self.args.db, self.args.workers, folder=str(self.folder),
            scripts=True, volumes=self.args.volumes, **auth)
        ready = self.cluster.start()
        self.cluster.extra_config()
        self.endpoint = self.cluster.dep.endpoint
        return ready

    def groups(self) -> dict[str, list[int]]:
        procs = self.cluster.dep.procs
        return {"api": [procs["api"].pid],
                "scheduler": [procs["scheduler"].pid],
                "volume": [procs[name].pid
                           for name in self.cluster.volume_names()]}

    def after_s3(self) -> None:
        """Nothing beyond the common Pss reading."""

    def s6_flags(self) -> list[str]:
        return ma_cluster.s6_flags(self.folder, scripts=True)

    def stop(self) -> None:
        ma_cluster.stop_extra(self.folder)
        if self.cluster is not None:
            self.cluster.stop()


# -- one round of one side --------------------------------------------------
def bench_parts() -> list[tuple[str, list[str]]]:
    """bench.py's invocations, in its own scenario order: S2 and S3 one
    level at a time, so that the CPU of each is counted on its own."""
    parts = [("s1", ["--scenarios", "S1"])]
    for scenario in METERED:
        parts += [("%sc%d" % (scenario.lower(), level), [
            "--scenarios", scenario,
            "--%s-concurrency" % scenario.lower(), str(level)])
            for level in LEVELS]
    return parts + [("s4s5s6", ["--scenarios", "S4,S5,S6"])]


def bench_flags(args: argparse.Namespace) -> list[str]:
    """The flags both sides get (issue 21: 5 ms polling, 200 cycles, 50
    volumes), plus any ``--bench-arg``."""
    return ["--poll-interval", str(args.poll_interval), "--s2-count",
            str(args.s2_count), "--s3-cycles", str(args.s3_cycles),
            *args.bench_arg]


def run_bench(command: list[str], env: dict, err: IO[bytes]) -> None:
    """Run bench.py to its end; if interrupted, let it delete what it
    created (one SIGINT runs its cleanup) for up to a minute."""
    proc = subprocess.Popen(command, cwd=REPO, env=env, stderr=err,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        code = proc.wait(timeout=BENCH_TIMEOUT)
    except BaseException:
        with shielded():
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        raise
    if code:
        raise subprocess.CalledProcessError(code, command)


def run_side(side: Anchor | Ashlar, args: argparse.Namespace,
             out: pathlib.Path, round_no: int) -> dict:
    """Start one deployment fresh, bench it, read its processes, stop it."""
    jsonl = out / ("%s.%d.jsonl" % (side.name, round_no))
    record: dict = {"side": side.name, "round": round_no,
                    "loadavg_before": os.getloadavg(), "cpu_s": {},
                    "units": {"S2": args.s2_count, "S3": args.s3_cycles}}
    started = time.monotonic()
    try:
        record["ready_s"] = round(side.start(), 2)
        record["start_s"] = round(time.monotonic() - started, 2)
        groups = side.groups()
        if side.auth is not None:
            keystone_sides.warm(side.endpoint, side.auth_flags)
            groups = dict(groups, keystone=[side.auth.keystone.proc.pid])
        meter = CpuMeter(groups, side.database)
        for part, flags in bench_parts():
            command = [sys.executable, str(args.anchor / "bench.py"),
                       "--endpoint", side.endpoint, "--output", str(jsonl),
                       "--prefix", "sbs%d-%s-%s-%s" % (
                           round_no, side.name, part, uuid.uuid4().hex[:6]),
                       *bench_flags(args), *side.auth_flags, *flags]
            if part == "s4s5s6":
                command += side.s6_flags()
            print("  %s round %d: bench.py %s" % (side.name, round_no, part),
                  file=sys.stderr, flush=True)
            meter.start()
            with open(out / ("%s.%d.%s.stderr" % (side.name, round_no, part)),
                      "wb") as err:
                run_bench(command, side.env, err)
            if part[:2].upper() in METERED:
                record["cpu_s"][part] = meter.stop()
            if part == "s3c%d" % LEVELS[-1]:
                record["memory"] = procmem.group_usage(side.groups())
                side.after_s3()
    finally:
        with shielded():
            side.stop()
    record["wall_s"] = round(time.monotonic() - started, 1)
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    record["figures"] = figures(records)
    record["figures"]["pss_mib"] = record["memory"]["total_pss_mib"]
    record["checks"] = checks(records)
    return record


# -- reading bench.py's lines -----------------------------------------------
def _p50(summary: dict | None, scale: float) -> float | None:
    value = (summary or {}).get("p50")
    return None if value is None else round(value * scale, 4)


def figures(records: list[dict]) -> dict:
    """The table's figures from bench.py's JSON lines of one run."""
    last = {r["id"]: r for r in records if r.get("id")}
    levels: dict = {"S2": {}, "S3": {}}
    for rec in records:
        if rec.get("id") in levels:
            for level in rec.get("levels", []):
                levels[rec["id"]][level["concurrency"]] = level
    s1 = last.get("S1", {})
    s2, s3 = levels["S2"], levels["S3"]
    return {
        "s1_p50_ms": _p50(s1.get("time_to_failure_s"), 1000),
        "s1_paths": s1.get("paths"),
        "s1_codes": sorted({e.split()[0] for e in
                            s1.get("sample_4xx_errors", [])}),
        "s2_c1_p50_ms": _p50(s2.get(1, {}).get("create_to_available_s"),
                             1000),
        "s2_c8_per_s": s2.get(8, {}).get("volumes_per_s"),
        "s3_c1_p50_ms": _p50(s3.get(1, {}).get("cycle_s"), 1000),
        "s3_c8_per_s": s3.get(8, {}).get("cycles_per_s"),
        "s6_p50_s": _p50(last.get("S6", {}).get("visible_after_s"), 1),
    }


def checks(records: list[dict]) -> dict:
    """What tells a broken run from a slow one, per scenario."""
    out: dict = {}
    for rec in records:
        sid = rec.get("id")
        if not sid:
            continue
        if sid in METERED:     # one record per level
            out.setdefault(sid, []).extend(
                ["error: %s" % rec["error"][:120]] if "error" in rec else
                [_level_check(sid, lvl) for lvl in rec["levels"]])
        elif "error" in rec:
            out[sid] = "error: %s" % rec["error"][:120]
        elif sid in ("S1", "S5"):
            out[sid] = "correct" if rec.get("correct") else "WRONG"
        elif sid == "S4":
            out[sid] = "first try %d/%d%s" % (
                rec["first_try_successes"], rec["instances"],
                "" if rec["attach_state_ok"] and rec["detach_state_ok"]
                else ", STATE WRONG")
        elif sid == "S6":
            runs = rec.get("runs", [])
            out[sid] = "skipped" if rec.get("skipped") else "%d/%d visible" % (
                sum(1 for r in runs if r.get("visible_after_s")), len(runs))
    for sid in METERED:
        if sid in out:
            out[sid] = "; ".join(out[sid])
    return out


def _level_check(sid: str, lvl: dict) -> str:
    """One S2 or S3 level's outcome, as ``checks`` prints it."""
    if sid == "S2":
        return "c=%d %d/%d" % (lvl["concurrency"], lvl["ok"], lvl["volumes"])
    return "c=%d %d/%d%s, %d refused" % (
        lvl["concurrency"], lvl["ok"], lvl["cycles"],
        "" if lvl["final_state_ok"] else " FINAL STATE WRONG",
        sum(lvl["create_rejections_by_status"].values()))


# -- the table ---------------------------------------------------------------
def ratio(how: str, cinder: float | None, ashlar: float | None
          ) -> float | None:
    if not cinder or not ashlar:
        return None
    return cinder / ashlar if how == "faster" else ashlar / cinder


def _num(value: float) -> str:
    return "%.1f" % value if abs(value) < 10 else "%.0f" % value


def span(values: list[float | None], unit: str = "",
         fmt: Callable[[float], str] = _num) -> str:
    """``min–max unit`` (one value if they agree); n/a if none."""
    present = [v for v in values if v is not None]
    if not present:
        return "n/a"
    low, high = fmt(min(present)), fmt(max(present))
    text = low if low == high else "%s–%s" % (low, high)
    return "%s %s" % (text, unit) if unit else text


def s1_how(rounds: list[dict], side: str) -> str:
    """How S1's failure showed: ``202, then error`` or the 4xx codes."""
    seen = set()
    for rnd in rounds:
        fig = rnd[side]["figures"]
        for path in fig.get("s1_paths") or {}:
            seen.add("202, then `error`" if path == "error" else
                     "/".join(fig["s1_codes"]) or path if path == "4xx"
                     else path)
    return " (%s)" % ", ".join(sorted(seen)) if seen else ""


def table(rounds: list[dict], db: str, auth: str = "noauth",
          volumes: str = "one", cinder_db: str = "mysql") -> str:
    lines = ["| | Cinder 29 (%s, %s) | Ashlar (%s, %s, %s volume service%s) "
             "| ratio |" % (cinder_db, auth, db, auth, volumes,
                            "" if volumes == "one" else "s"),
             "|---|---|---|---|"]
    for key, label, unit, how in METRICS:
        cinder = [r["cinder"]["figures"][key] for r in rounds]
        ashlar = [r["ashlar"]["figures"][key] for r in rounds]
        ratios = [ratio(how, c, a) for c, a in zip(cinder, ashlar, strict=True)]
        c_text, a_text = span(cinder, unit), span(ashlar, unit)
        if key == "s1_p50_ms":
            c_text += s1_how(rounds, "cinder")
            a_text += s1_how(rounds, "ashlar")
        if key == "pss_mib":
            c_text += " (api %s)" % span(
                [r["cinder"]["memory"]["api"]["pss_mib"] for r in rounds])
            a_text += " (api %s)" % span(
                [r["ashlar"]["memory"]["api"]["pss_mib"] for r in rounds])
            r_text = span(ratios, fmt=lambda v: "%.2f" % v)
        else:
            r_text = span(ratios, fmt=lambda v: "%.1f" % v)
            r_text += "×" if r_text != "n/a" else ""
        lines.append("| %s | %s | %s | %s |" % (label, c_text, a_text, r_text))
    return "\n".join(lines)


def cpu_table(rounds: list[dict]) -> str:
    """CPU ms per volume of S2 and per attach cycle of S3, by process
    kind, min–max over rounds."""
    behind_keystone = any("keystone" in levels for rnd in rounds
                          for levels in rnd["cinder"]["cpu_s"].values())
    head = KINDS + ("keystone",) * behind_keystone + ("rest_of_machine",)
    lines = []
    for scenario, unit in METERED.items():
        lines += ["| CPU ms per %s (%s) | %s |" % (unit, scenario,
                                                   " | ".join(head)),
                  "|---|%s" % ("---|" * len(head))]
        for side in ("cinder", "ashlar"):
            for level in LEVELS:
                part = "%sc%d" % (scenario.lower(), level)
                cells = [span([_per_unit(rnd[side], part, scenario, kind)
                               for rnd in rounds]) for kind in head]
                lines.append("| %s c=%d | %s |" % (
                    "Cinder 29" if side == "cinder" else "Ashlar", level,
                    " | ".join(cells)))
        lines.append("")
    return "\n".join(lines[:-1])


def _per_unit(record: dict, part: str, scenario: str,
              kind: str) -> float | None:
    """CPU ms of one process kind per volume (S2) or cycle (S3)."""
    seconds = record["cpu_s"].get(part, {}).get(kind)
    return (None if seconds is None
            else 1000 * seconds / record["units"][scenario])


def medians(rounds: list[dict]) -> dict:
    """Median per metric and side, for the JSON line."""
    out: dict = {}
    for key, _label, _unit, how in METRICS:
        row = {}
        for side in ("cinder", "ashlar"):
            values = [r[side]["figures"][key] for r in rounds
                      if r[side]["figures"][key] is not None]
            row[side] = statistics.median(values) if values else None
        ratios = [ratio(how, r["cinder"]["figures"][key],
                        r["ashlar"]["figures"][key]) for r in rounds]
        row["ratios"] = [None if v is None else round(v, 3) for v in ratios]
        out[key] = row
    return out


# -- main ----------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", choices=sorted(DATABASE), default="mysql",
                        help="Ashlar's database: MariaDB through PyMySQL "
                             "(mysql, the anchor's driver) or mysqlclient "
                             "(mysqldb), or PostgreSQL; the anchor's is "
                             "--cinder-db's")
    parser.add_argument("--cinder-db", choices=sorted(CINDER_URLS),
                        default="mysql",
                        help="the anchor's database: MariaDB through "
                             "PyMySQL (mysql, as its cinder.conf names) or "
                             "mysqlclient (mysqldb, plain mysql://, the "
                             "dialect's default; installed into its venv), "
                             "or PostgreSQL (postgresql://, psycopg, a "
                             "fresh database 'cinder')")
    parser.add_argument("--workers", type=int, default=2,
                        help="Ashlar's API workers (the anchor has 2)")
    parser.add_argument("--auth", choices=["noauth", "keystone"],
                        default="noauth",
                        help="both apis' authentication: noauth tokens, or "
                             "a real Keystone's tokens checked by "
                             "keystonemiddleware (keystone_sides.py)")
    parser.add_argument("--volumes", choices=sorted(ma_cluster.VOLUMES),
                        default="one",
                        help="Ashlar's backends in one volume service, as "
                             "the anchor's, or each on a node of its own")
    parser.add_argument("--poll-interval", type=float, default=0.005)
    parser.add_argument("--s2-count", type=int, default=50)
    parser.add_argument("--s3-cycles", type=int, default=200)
    parser.add_argument("--bench-arg", action="append", default=[],
                        help="one more bench.py argument for both sides "
                             "(repeatable), e.g. --bench-arg=--s1-repeat=5")
    parser.add_argument("--cpu", action="store_true",
                        help="print the CPU breakdown of an S2 volume and of an "
                             "S3 attach cycle")
    parser.add_argument("--out", type=pathlib.Path,
                        help="output folder (default: a new /tmp folder)")
    parser.add_argument("--anchor", type=pathlib.Path, required=True,
                        help="the anchor's folder (run.sh, bench.py, ...)")
    parser.add_argument("--anchor-home", type=pathlib.Path,
                        default=os.environ.get("ANCHOR_HOME"),
                        help="the anchor's venv and state (ANCHOR_HOME)")
    args = parser.parse_args(argv)
    if args.anchor_home is None:
        parser.error("set ANCHOR_HOME or --anchor-home")
    return args


def cinder_driver(args: argparse.Namespace, out: pathlib.Path,
                  stack: contextlib.ExitStack) -> None:
    """Point the anchor's scripts (their ``CONF``) at a copy of its
    cinder.conf naming ``--cinder-db``'s database and driver: mysqlclient
    installed into its venv first, or a fresh PostgreSQL database ``cinder``
    synced by ``cinder-manage`` (dropped as ``stack`` closes); nothing for
    its own PyMySQL."""
    if args.cinder_db == "mysql":
        return
    if args.cinder_db == "mysqldb":
        mysqlclient.install(str(args.anchor_home / "venv" / "bin" /
                                "python"))
    conf = out / "cinder.conf"
    conf.write_text((args.anchor / "etc" / "cinder.conf").read_text().replace(
        CINDER_URLS["mysql"], CINDER_URLS[args.cinder_db]))
    os.environ["CONF"] = str(conf)
    if args.cinder_db == "postgresql":
        stack.callback(postgres_database(args, conf))


def postgres_database(args: argparse.Namespace,
                      conf: pathlib.Path) -> Callable[[], None]:
    """A fresh database ``cinder`` on the machine's PostgreSQL, synced by
    the anchor's ``cinder-manage`` through ``conf``; returns its drop."""
    return synced_database(args, conf, PG_SERVER,
                           CINDER_URLS["postgresql"].rsplit("/", 1)[1])


def synced_database(args: argparse.Namespace, conf: pathlib.Path,
                    server_url: str, name: str) -> Callable[[], None]:
    """Database ``name`` made afresh (dropped first if it is there) on the
    server ``server_url`` connects to, then synced by the anchor's
    ``cinder-manage`` through ``conf``, which names it (dropped again if
    the sync fails); returns its drop (PostgreSQL's closes whatever is
    still connected)."""
    server = sa.create_engine(server_url, isolation_level="AUTOCOMMIT",
                              poolclass=sa.pool.NullPool)
    force = " WITH (FORCE)" if server.dialect.name == "postgresql" else ""

    def drop() -> None:
        with server.connect() as conn:
            conn.exec_driver_sql("DROP DATABASE IF EXISTS %s%s"
                                 % (name, force))
    drop()
    with server.connect() as conn:
        conn.exec_driver_sql("CREATE DATABASE %s" % name)
    try:
        subprocess.run([str(args.anchor_home / "venv" / "bin" /
                            "cinder-manage"), "--config-file", str(conf),
                        "db", "sync"], check=True, capture_output=True,
                       timeout=600)
    except BaseException:
        drop()
        raise
    return drop


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out = args.out or pathlib.Path(tempfile.mkdtemp(prefix="side-by-side-"))
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        sys.exit("%s is not empty: bench.py appends to its files" % out)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    rounds = []
    stack = contextlib.ExitStack()
    try:
        cinder_driver(args, out, stack)
        auth = (keystone_sides.Auth(stack, out) if args.auth == "keystone"
                else None)
        for round_no in range(1, args.rounds + 1):
            rnd = {"round": round_no}
            for side_class in (Anchor, Ashlar):
                side = side_class(args, out, round_no, auth)
                print("== round %d: %s (fresh start)" % (round_no, side.name),
                      file=sys.stderr, flush=True)
                rec = run_side(side, args, out, round_no)
                rnd[side.name] = rec
                print("   %s: ready in %.1f s, %s" % (
                    side.name, rec["ready_s"], json.dumps(rec["checks"])),
                    file=sys.stderr, flush=True)
            rounds.append(rnd)
    except Interrupted as exc:
        sys.exit("interrupted by %s; partial results in %s" % (exc, out))
    finally:
        with shielded():
            stack.close()
        print("raw results in %s" % out, file=sys.stderr, flush=True)
    summary = {"side_by_side": {
        "rounds": args.rounds, "ashlar_db": args.db,
        "cinder_db": args.cinder_db,
        "auth": args.auth, "ashlar_volume_services": args.volumes,
        "api_workers": args.workers, "bench_flags": bench_flags(args),
        "bench_parts": [p for p, _f in bench_parts()], "out": str(out)},
        "medians": medians(rounds), "per_round": rounds}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(table(rounds, args.db, args.auth, args.volumes, args.cinder_db))
    if args.cpu:
        print()
        print(cpu_table(rounds))
    print(json.dumps(summary))
    print("raw results in %s" % out)


if __name__ == "__main__":
    main()
