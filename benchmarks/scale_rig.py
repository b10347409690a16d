"""How Ashlar's costs grow with the rows and the backends it holds.

One real deployment (the functional tests' processes from
``deploy/testbed/harness.py``: the api under gunicorn with two workers, a
scheduler, one volume node ``node1`` with the anchor's two file backends
``ma`` and ``plain``, a fresh RabbitMQ vhost and a fresh database), in one
run:

1. empty: S2, S3 (c=1, c=8), S4 (``--s4`` bursts, their median) and S1
   (until the client knows the create failed) (``benchmarks/README.md``)
   in project ``P0``, on types pinned to ``ma`` (S1: multiattach on
   ``plain``); the api's and scheduler's Pss;
2. loaded (``scale_load``): 100,000 volumes in 1,000 projects, 20,000
   attachments over 2,000 hosts, 5,000 snapshots, 1,000 volume service
   rows (times ``--scale``; ``--services`` simulated services), the load
   timed; then the senders: each simulated service casts its report of 10
   pools every 10 s over the real capabilities fanout, and heartbeats;
   the api's and scheduler's CPU per report received, their Pss;
3. reads, each ``--reads`` times: p50/p95 and the api's CPU per request;
   marker paging to the end of one project and of all of them;
4. S2, S3, S4, S1 again in ``P0`` (which now holds loaded rows) and the
   ratio loaded/empty of each one's p50 (goal: at most 1.2);
5. a boot storm: ``--storm-volumes`` volumes attached by ``--storm-hosts``
   hosts at once, then that many hosts on one multiattach volume (S4);
6. the scheduler's placer in process at the simulated pools' count.

One JSON line per figure, then a table::

    python -m benchmarks.scale_rig [--db postgresql|mysql|mysqldb] [--scale 1]
        [--services 1000] [--report-cost-only RUNS]

``--report-cost-only RUNS`` stops after step 2's CPU per report, measured
in RUNS windows in a row (a quick before/after of the report consumers).
"""

import argparse
import collections
import contextlib
import json
import math
import multiprocessing
import os
import pathlib
import random
import statistics
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psutil

from benchmarks import attach_cycle
from benchmarks import backend_scenarios as scen
from benchmarks import ma_cluster
from benchmarks import placement as bench_placement
from benchmarks import scale_load
from benchmarks import scale_reads
from benchmarks.scale_reads import cpu_s
from benchmarks.common import Api
from benchmarks.common import summarize
from deploy.testbed import harness
from services.scheduler import placement

#: The deployment's backends: ``ma`` (multiattach pools) and ``plain``.
BACKENDS = ("ma", "plain")
POOLS_PER_SERVICE = 10
#: Seconds between polls of an S1 create the API accepted (bench.py's).
S1_POLL_S = 0.005


def emit(records: list[dict], record: dict) -> dict:
    """Print ``record`` as a JSON line (with the machine's load average:
    the figures are only as quiet as the machine) and keep it."""
    record["loadavg_1m"] = round(os.getloadavg()[0], 1)
    print(json.dumps(record, default=str), flush=True)
    records.append(record)
    return record


# -- the deployment and its processes ---------------------------------------
@contextlib.contextmanager
def deployment(folder: pathlib.Path, db: str, interval: int):
    """The deployment; yields it, its database's URL and its base URL."""
    with contextlib.ExitStack() as stack:
        vhost, drop_vhost = harness.broker_vhost()
        stack.callback(drop_vhost)
        db_url, drop_db = harness.database(db)
        stack.callback(drop_db)
        dep = harness.Deployment(folder, vhost, db_url,
                                 report_interval=interval,
                                 service_down_time=6 * interval,
                                 polling_interval=interval)
        stack.callback(dep.stop_all)
        dep.db_sync()
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume", "services.volume", "node1", backends="ma,plain",
                  extra=ma_cluster.MA + ma_cluster.PLAIN)
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        wanted = ["node1@ma#ma", "node1@plain#plain"]
        harness.wait_for(lambda: sorted(client.pools()) == wanted,
                         timeout=120, what="pools %s" % wanted)
        yield dep, db_url, dep.endpoint.rsplit("/", 1)[0]


def processes(dep: harness.Deployment, name: str) -> list[psutil.Process]:
    return scale_reads.process_tree(dep.procs[name].pid)


def pss_mib(procs: list[psutil.Process]) -> float:
    total = 0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += proc.memory_full_info().pss
    return round(total / 2 ** 20, 1)


def memory(dep: harness.Deployment, phase: str) -> dict:
    return {"figure": "pss_mib", "phase": phase,
            "api": pss_mib(processes(dep, "api")),
            "scheduler": pss_mib(processes(dep, "scheduler"))}


# -- the simulated volume services ------------------------------------------
def _send(conf_path: str, hosts: list[str], pools: int, interval: float,
          threads: int, sent, stop) -> None:
    """In a process of its own: ``threads`` threads cast the reports of
    ``hosts`` (evenly paced, each every ``interval``) until ``stop``."""
    from common import context as ashlar_context
    from common import rpc
    from common import service
    from services.scheduler import rpcapi

    conf = service.prepare_process(["--config-file", conf_path])
    client = rpcapi.CapabilitiesAPI(conf)
    ctxt = ashlar_context.get_admin_context()

    def run(mine: list[str]) -> None:
        rng = random.Random(len(mine))
        reports = {h: bench_placement.backend_report(
            rng, int(h.rsplit("@b", 1)[1]), pools) for h in mine}
        gap = interval / max(1, len(mine))
        due = time.monotonic() + rng.uniform(0, gap)
        while not stop.is_set():
            for host in mine:
                if stop.wait(max(0.0, due - time.monotonic())):
                    return
                client.update_service_capabilities(ctxt, host,
                                                   reports[host], time.time())
                with sent.get_lock():
                    sent.value += 1
                due += gap
    workers = [threading.Thread(target=run, args=(hosts[k::threads],))
               for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    rpc.cleanup()


class Senders:
    """The simulated services' reports and heartbeats, started and
    stopped."""

    def __init__(self, folder: pathlib.Path, dep: harness.Deployment,
                 db_url: str, counts: scale_load.Counts,
                 interval: float) -> None:
        self.db_url, self.counts, self.interval = db_url, counts, interval
        self.conf = folder / "senders.conf"
        self.conf.write_text("[DEFAULT]\nhost = senders\ntransport_url = %s\n"
                             "[database]\nconnection = %s\n"
                             % (dep.transport_url, db_url))
        spawn = multiprocessing.get_context("spawn")
        self.sent = spawn.Value("l", 0)
        self.stop = spawn.Event()
        hosts = [scale_load.service_host(i) for i in range(counts.services)]
        self.proc = spawn.Process(target=_send, args=(
            str(self.conf), hosts, POOLS_PER_SERVICE, interval,
            min(16, max(1, counts.services // 50)), self.sent, self.stop))
        self.beats = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while not self.stop.wait(self.interval):
            scale_load.heartbeat(self.db_url, self.counts)

    def __enter__(self) -> "Senders":
        scale_load.heartbeat(self.db_url, self.counts)
        self.proc.start()
        self.beats.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        self.proc.join(timeout=60)
        if self.proc.is_alive():
            self.proc.kill()
        self.beats.join(timeout=60)
        # Silent services that still heartbeat make the scheduler wait for
        # their reports: the phase after this one has them down.
        scale_load.heartbeat(self.db_url, self.counts, up=False)


def report_cost(dep: harness.Deployment, endpoint: str, senders: Senders,
                window: float, idle: dict) -> dict:
    """Once every simulated pool is listed: the api's and scheduler's CPU
    per report received over ``window`` seconds, less their idle rate."""
    api = Api(endpoint)
    total = senders.counts.services * POOLS_PER_SERVICE + 2
    started = time.perf_counter()
    harness.wait_for(lambda: len(api.call("GET", "/scheduler-stats/get_pools")
                                 .json()["pools"]) >= total,
                     timeout=300, interval=2.0,
                     what="%d pools listed" % total)
    listed = time.perf_counter() - started
    names = ("api", "scheduler")
    before = {n: cpu_s(processes(dep, n)) for n in names}
    sent0, t0 = senders.sent.value, time.perf_counter()
    time.sleep(window)  # NOTE: a measuring window, not synchronisation
    took = time.perf_counter() - t0
    reports = senders.sent.value - sent0
    record = {"figure": "report_cost", "services": senders.counts.services,
              "pools": total - 2, "reports": reports,
              "reports_per_s": round(reports / took, 1),
              "all_pools_listed_s": round(listed, 1)}
    for name in names:
        used = cpu_s(processes(dep, name)) - before[name]
        record[name + "_cpu_ms_per_report"] = round(
            (used - idle[name] * took) * 1000 / max(1, reports), 3)
        record[name + "_cpu_share"] = round(used / took, 3)
    return record


def idle_rates(dep: harness.Deployment, window: float) -> dict:
    """CPU seconds per second of the api and scheduler with no reports."""
    names = ("api", "scheduler")
    before = {n: cpu_s(processes(dep, n)) for n in names}
    time.sleep(window)  # NOTE: a measuring window, not synchronisation
    return {n: (cpu_s(processes(dep, n)) - before[n]) / window
            for n in names}


# -- scenarios --------------------------------------------------------------
def queued(vhost: str) -> int | None:
    """Messages waiting in the vhost's queues (None: rabbitmqctl could not
    tell)."""
    try:
        listed = subprocess.run(
            ["rabbitmqctl", "-q", "list_queues", "-p", vhost, "messages"],
            capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sum(int(word) for word in listed.split() if word.isdigit())


def drained(dep: harness.Deployment, timeout: float = 300.0) -> dict:
    """Wait until the reports the senders cast are all consumed: how long
    the consumers lagged after the last one, and what was queued then."""
    vhost = dep.transport_url.rsplit("/", 1)[1]
    started = time.perf_counter()
    first = left = queued(vhost)
    while left and time.perf_counter() - started < timeout:
        time.sleep(0.5)
        left = queued(vhost)
    return {"figure": "reports_drained", "queued_at_stop": first,
            "left": left, "seconds": round(time.perf_counter() - started, 1)}


def s1(api: Api, count: int, plain: str) -> dict:
    """Creates of a type no pool satisfies (multiattach on ``plain``), one
    after another: the POST's answer, and the time until the create is
    known to have failed (a 4xx at once; a 202 when the volume shows
    ``error``, polled every ``S1_POLL_S``, as the anchor's bench does); the
    codes.  Volumes that went ``error`` are deleted afterwards."""
    resp = api.call("POST", "/types", {"volume_type": {
        "name": "s1-%d" % time.time_ns(), "extra_specs": {
            "multiattach": "<is> True", "volume_backend_name": plain}}})
    resp.raise_for_status()
    type_id = resp.json()["volume_type"]["id"]
    answered, failed, codes = [], [], collections.Counter()
    accepted = []
    for _i in range(count):
        t0 = time.perf_counter()
        resp = api.call("POST", "/volumes", {"volume": {
            "size": 1, "volume_type": type_id, "name": "s1"}})
        answered.append(time.perf_counter() - t0)
        codes[resp.status_code] += 1
        if resp.status_code == 202:
            accepted.append(resp.json()["volume"]["id"])
            codes[api.wait_volume(accepted[-1], "error", S1_POLL_S)] += 1
        failed.append(time.perf_counter() - t0)
    for volume_id in accepted:
        api.call("DELETE", "/volumes/%s" % volume_id)
        api.wait_volume(volume_id, None, 0.01)
    api.call("DELETE", "/types/%s" % type_id)
    return {"creates": count, "refused_ms": summarize(answered),
            "failed_ms": summarize(failed), "codes": dict(codes)}


def s4(api: Api, volume_id: str, bursts: int) -> dict:
    """S4 (``backend_scenarios.s4``: 16 hosts attach one volume at once,
    then detach at once) ``bursts`` times in a row: the first burst's
    record, each burst's time until all were attached and first-try
    successes, their median as ``all_attached_ms`` (None when a burst never
    attached all), and whether every burst ended as it should.  One burst
    takes about 150 ms on Ashlar: its median of several is what a phase is
    compared on."""
    runs = [scen.s4(api, volume_id) for _ in range(max(1, bursts))]
    each = [r["all_attached_ms"] for r in runs]
    return {**runs[0], "bursts": len(runs), "all_attached_ms_each": each,
            "all_attached_ms": (None if None in each
                                else statistics.median(each)),
            "first_try_successes_each": [r["first_try_successes"]
                                         for r in runs],
            "after_attach_ok": all(r["after_attach_ok"] for r in runs),
            "after_detach_ok": all(r["after_detach_ok"] for r in runs)}


def scenario_args(parser: argparse.ArgumentParser) -> None:
    """The scenarios' and the storm's counts, the same on both sides
    (``scale_cinder`` takes them too)."""
    parser.add_argument("--s1", type=int, default=20)
    parser.add_argument("--s2", type=int, default=20)
    parser.add_argument("--s3", type=int, default=100)
    parser.add_argument("--s4", type=int, default=5,
                        help="S4 bursts; their median is compared")
    parser.add_argument("--storm-volumes", type=int, default=500)
    parser.add_argument("--storm-hosts", type=int, default=50)


def scenarios(endpoint: str, args: argparse.Namespace,
              backends: tuple[str, str] = BACKENDS) -> list[dict]:
    """S2 (c=1, 8), S3 (c=1, 8), S4 and S1 in ``endpoint``'s project, on
    ``backends`` (the multiattach one's name, the plain one's)."""
    api = Api(endpoint)
    out = []
    ma, plain = backends
    type_id, volume_id = api.typed_volume("scale-s4", {
        "multiattach": "<is> True", "volume_backend_name": ma})
    try:
        for c in (1, 8):
            out.append({"scenario": "S2", **scen.s2(api, type_id, args.s2,
                                                    c)})
        for c in (1, 8):
            out.append({"scenario": "S3", **attach_cycle.run(
                endpoint, args.s3, c, {"volume_backend_name": ma})})
        out.append({"scenario": "S4", **s4(api, volume_id, args.s4)})
        out.append({"scenario": "S1", **s1(api, args.s1, plain)})
    finally:
        api.call("DELETE", "/volumes/%s" % volume_id)
        api.wait_volume(volume_id, None, 0.01)
        api.call("DELETE", "/types/%s" % type_id)
    return out


def headline(rec: dict) -> tuple[str, float | None]:
    """The scenario's figure compared between phases: (name, ms)."""
    kind = rec["scenario"]
    if kind == "S2":
        return ("S2 c=%d available p50" % rec["concurrency"],
                rec["available_ms"].get("p50_ms"))
    if kind == "S3":
        return ("S3 c=%d cycle p50" % rec["concurrency"],
                rec["cycle_ms"].get("p50_ms"))
    if kind == "S4":
        return "S4 all attached p50", rec["all_attached_ms"]
    return "S1 failed p50", rec["failed_ms"].get("p50_ms")


# -- the boot storm ---------------------------------------------------------
def _attach_all(api: Api, host: str, volumes: list[str],
                barrier: threading.Barrier) -> list[dict]:
    barrier.wait()
    done = []
    for volume_id in volumes:
        refused: collections.Counter = collections.Counter()
        t0 = time.perf_counter()
        resp = attach_cycle.reserve(api, volume_id, host, refused)
        if resp.status_code != 200:
            done.append({"error": "reserve %d" % resp.status_code})
            continue
        attachment = resp.json()["attachment"]["id"]
        ok = api.call("POST", "/attachments/%s/action" % attachment,
                      {"os-complete": None}).status_code < 400
        done.append({"id": attachment, "took": time.perf_counter() - t0,
                     "end": time.perf_counter(), "refused": sum(
                         refused.values())} if ok else {"error": "complete"})
    return done


def boot_storm(endpoint: str, volumes: int, hosts: int,
               ma: str = BACKENDS[0]) -> list[dict]:
    """``volumes`` volumes attached by ``hosts`` hosts at once (each host
    its share, one after another), then ``hosts`` hosts on one multiattach
    volume at once; all on backend ``ma``."""
    api = Api(endpoint)
    type_id, shared = api.typed_volume("scale-storm", {
        "multiattach": "<is> True", "volume_backend_name": ma})
    with ThreadPoolExecutor(max_workers=8) as pool:
        made = list(pool.map(lambda _i: scen._create(api, type_id),
                             range(volumes)))
    ids = [m["id"] for m in made if "error" not in m]
    barrier = threading.Barrier(hosts)
    with ThreadPoolExecutor(max_workers=hosts) as pool:
        started = time.perf_counter()
        results = [r for batch in pool.map(
            lambda h: _attach_all(api, "storm-host-%d" % h, ids[h::hosts],
                                  barrier), range(hosts)) for r in batch]
    ok = [r for r in results if "error" not in r]
    took = sorted(r["took"] for r in ok)
    storm = {"figure": "boot_storm", "volumes": len(ids), "hosts": hosts,
             "attached": len(ok),
             "all_attached_s": round(max(r["end"] for r in ok) - started, 2)
             if ok else None,
             "attach_ms": summarize(took),
             "attach_p99_ms": round(took[min(len(took) - 1, math.ceil(
                 0.99 * len(took)) - 1)] * 1000, 1) if took else None,
             "refused": sum(r["refused"] for r in ok),
             "errors": [r["error"] for r in results if "error" in r][:3]}
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda r: api.call("DELETE", "/attachments/%s"
                                         % r["id"]), ok))
        list(pool.map(lambda v: scen._delete(api, v), ids))
    fan = {"figure": "multiattach_storm", **scen.s4(api, shared, hosts)}
    api.call("DELETE", "/volumes/%s" % shared)
    api.wait_volume(shared, None, 0.01)
    api.call("DELETE", "/types/%s" % type_id)
    return [storm, fan]


def placer(pools: int) -> list[dict]:
    """The scheduler's placer in process at ``pools`` pools, each case."""
    rng = random.Random(pools)
    store = placement.new_store(3600)
    chooser = placement.Placer(store)
    for i in range(max(1, pools // POOLS_PER_SERVICE)):
        store.update("h%d@b%d" % (i, i), bench_placement.backend_report(
            rng, i, POOLS_PER_SERVICE), time.time())
    return [{"figure": "placement", "pools": pools, "case": case,
             **bench_placement.time_placements(chooser.choose, specs, 400)}
            for case, specs in bench_placement.CASES.items()]


# -- the run ----------------------------------------------------------------
def table(records: list[dict]) -> str:
    """A Markdown table: one row per figure."""
    lines = ["| figure | value |", "|---|---|"]
    for rec in records:
        fig = rec.get("figure")
        if fig == "load":
            value = "%s rows in %.1f s (%s)" % (
                rec["rows"], rec["seconds"], rec["per_table_s"])
        elif fig == "read":
            fig = " ".join(filter(None, ("read", rec["op"],
                                         rec.get("phase"))))
            value = "p50 %s / p95 %s ms, api CPU %s ms/op, %s rows" % (
                rec.get("p50_ms"), rec.get("p95_ms"),
                rec["api_cpu_ms_per_op"], rec["rows_per_answer"])
        elif fig == "paging":
            fig = "paging %s" % ("all_tenants" if rec["all_tenants"]
                                 else "one project")
            value = "%d rows in %d pages of %d, %.1f s, page p50 %s ms" % (
                rec["rows"], rec["pages"], rec["limit"], rec["seconds"],
                rec["page_ms"].get("p50_ms"))
        elif fig == "ratio":
            fig = "%s %s/empty" % (rec["name"], rec["phase"])
            value = "%s / %s ms = %s" % (rec["loaded_ms"], rec["empty_ms"],
                                         rec["ratio"])
        elif fig == "placement":
            fig = "placement %s at %d pools" % (rec["case"], rec["pools"])
            value = "p50 %s ms" % rec.get("p50_ms")
        elif fig in ("boot_storm", "multiattach_storm", "report_cost",
                     "pss_mib", "reports_drained"):
            fig = "%s %s" % (fig, rec.get("phase", ""))
            value = json.dumps({k: v for k, v in rec.items()
                                if k not in ("figure", "phase", "loadavg_1m")
                                and not k.startswith("after_")})
        else:
            continue
        lines.append("| %s | %s |" % (fig, value))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["postgresql", "mysql", "mysqldb"],
                        default="postgresql",
                        help="mysql: MariaDB through PyMySQL; mysqldb: "
                        "through mysqlclient, the mysql dialect's default")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="times the row counts (0.1: a tenth)")
    parser.add_argument("--services", type=int, default=None,
                        help="simulated volume services (default 1000 "
                        "times --scale)")
    parser.add_argument("--interval", type=int, default=10,
                        help="seconds between a service's reports")
    parser.add_argument("--reads", type=int, default=50)
    parser.add_argument("--quiet-reads", type=int, default=250,
                        help="reads of each kind once the reports stop")
    scenario_args(parser)
    parser.add_argument("--window", type=float, default=20.0,
                        help="seconds of each CPU-per-report window")
    parser.add_argument("--no-paging-all", action="store_true")
    parser.add_argument("--report-cost-only", type=int, default=0,
                        metavar="RUNS",
                        help="only the CPU per report received, RUNS "
                        "windows in a row (no scenarios, reads, storm)")
    args = parser.parse_args(argv)
    counts = scale_load.Counts().scaled(args.scale, args.services)
    if args.services is None:
        counts.services = max(1, int(round(1000 * args.scale)))
    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ashlar-scale-") as tmp, \
            deployment(pathlib.Path(tmp), args.db, args.interval) as (
                dep, db_url, base):
        if args.report_cost_only:
            report_cost_only(pathlib.Path(tmp), dep, db_url, base, counts,
                             args, records)
        else:
            run(pathlib.Path(tmp), dep, db_url, base, counts, args,
                records)
    print(table(records))


def compare(records: list[dict], phase: str, now: list[dict],
            empty: list[dict]) -> None:
    """Each scenario's record of ``phase`` and its p50 over the empty
    database's."""
    for rec, before in zip(now, empty, strict=True):
        emit(records, {"phase": phase, **rec})
        name, was = headline(before)
        is_ = headline(rec)[1]
        emit(records, {"figure": "ratio", "phase": phase, "name": name,
                       "empty_ms": was, "loaded_ms": is_,
                       "ratio": round(is_ / was, 2) if is_ and was
                       else None})


def report_cost_only(folder: pathlib.Path, dep: harness.Deployment,
                     db_url: str, base: str, counts: scale_load.Counts,
                     args: argparse.Namespace, records: list[dict]) -> None:
    """The rows loaded, then ``--report-cost-only`` windows of CPU per
    report received with the senders on (a quick before/after)."""
    p0 = "%s/%s" % (base, scale_load.project_id(0))
    scale_load.load(db_url, counts)
    idle = idle_rates(dep, args.window)
    with Senders(folder, dep, db_url, counts, args.interval) as senders:
        for _run in range(args.report_cost_only):
            emit(records, report_cost(dep, p0, senders, args.window, idle))


def run(folder: pathlib.Path, dep: harness.Deployment, db_url: str,
        base: str, counts: scale_load.Counts, args: argparse.Namespace,
        records: list[dict]) -> None:
    p0 = "%s/%s" % (base, scale_load.project_id(0))
    # NOTE: warm the processes first, or the empty phase pays for them.
    attach_cycle.run(p0, 16, 4, {"volume_backend_name": "ma"})
    emit(records, memory(dep, "empty"))
    empty = [emit(records, {"phase": "empty", **r})
             for r in scenarios(p0, args)]
    started = time.perf_counter()
    loaded = scale_load.load(db_url, counts)
    emit(records, {"figure": "load", "db": args.db,
                   "seconds": round(time.perf_counter() - started, 1),
                   "rows": counts.volumes + counts.attachments
                   + counts.snapshots + counts.services,
                   "counts": vars(counts), "per_table_s": loaded.seconds})
    idle = idle_rates(dep, args.window)
    with Senders(folder, dep, db_url, counts, args.interval) as senders:
        cost = emit(records, report_cost(dep, p0, senders, args.window,
                                         idle))
        emit(records, memory(dep, "loaded"))
        background = cost["api_cpu_share"]
        for rec in scale_reads.reads(processes(dep, "api"), base, loaded,
                                     args.reads, background):
            emit(records, rec)
        emit(records, scale_reads.page_to_end(
            processes(dep, "api"), base, scale_load.project_id(0), {}, 20,
            background))
        if not args.no_paging_all:
            emit(records, scale_reads.page_to_end(
                processes(dep, "api"), base, scale_load.project_id(0),
                {"all_tenants": 1}, 1000, background))
        compare(records, "loaded", scenarios(p0, args), empty)
        for rec in boot_storm(p0, args.storm_volumes, args.storm_hosts):
            emit(records, {"phase": "loaded", **rec})
    # The rows without the reports: which of the two costs what (once the
    # consumers have caught up with the reports queued for them).
    emit(records, drained(dep))
    compare(records, "loaded_no_reports", scenarios(p0, args), empty)
    # NOTE: the reads again with no report arriving, as scale_cinder reads
    # Cinder (whose simulated services send none): nothing to take off, and
    # more of them, for /proc's CPU times count in 10 ms ticks.
    for rec in scale_reads.reads(processes(dep, "api"), base, loaded,
                                 args.quiet_reads, 0.0):
        emit(records, {"phase": "loaded_no_reports", **rec})
    for rec in placer(counts.services * POOLS_PER_SERVICE):
        emit(records, rec)


if __name__ == "__main__":
    main()
