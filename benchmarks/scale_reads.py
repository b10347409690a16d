"""The scale rig's reads, against any Cinder v3 endpoint in noauth mode.

Ashlar (:mod:`benchmarks.scale_rig`) and Cinder 29
(:mod:`benchmarks.scale_cinder`) are read by the same code: each read
``count`` times, one at a time, with its p50/p95 and the api processes'
CPU per request (less the CPU they spend meanwhile on other work, e.g.
capability reports, given as ``background`` CPU seconds per second).
``base`` is ``http://HOST:PORT/v3``; the token is ``admin:PROJECT``.

On its own (``main``), the reads' api CPU without the rest of the rig:
the api alone on a fresh database holding the rig's rows::

    python -m benchmarks.scale_reads [--db mysql|mysqldb|postgresql] [--scale 0.01]
        [--reads 50] [--runs 3] [--workers 1] [--ops NAME,...]
"""

import argparse
import collections
import contextlib
import json
import pathlib
import tempfile
import time
from collections.abc import Iterator

import psutil

from benchmarks import scale_load
from benchmarks.common import Api
from benchmarks.common import summarize
from deploy.testbed import harness


def process_tree(pid: int) -> list[psutil.Process]:
    """``pid`` and all its children (an api's workers)."""
    top = psutil.Process(pid)
    return [top] + top.children(recursive=True)


def cpu_s(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = proc.cpu_times()
            total += times.user + times.system
    return total


def timed_reads(procs: list[psutil.Process], base: str, name: str,
                calls: list[tuple[str, str, dict]],
                background: float) -> dict:
    """``calls`` ((project, path, params)) one at a time: p50/p95 and the
    api's CPU per request, less ``background`` (the CPU seconds per
    second the api spends meanwhile on the reports)."""
    apis: dict[str, Api] = {}
    durations, codes, rows = [], collections.Counter(), 0
    before, started = cpu_s(procs), time.perf_counter()
    for project, path, params in calls:
        api = apis.setdefault(project, Api("%s/%s" % (base, project)))
        t0 = time.perf_counter()
        resp = api.call("GET", path, params=params)
        durations.append(time.perf_counter() - t0)
        codes[resp.status_code] += 1
        if resp.status_code == 200:
            answer = next(iter(resp.json().values()))
            rows += len(answer) if isinstance(answer, list) else 1
    used = cpu_s(procs) - before
    net = used - background * (time.perf_counter() - started)
    return {"figure": "read", "op": name, **summarize(durations),
            "api_cpu_ms_per_op": round(net * 1000 / len(calls), 2),
            "api_cpu_ms_per_op_gross": round(used * 1000 / len(calls), 2),
            "rows_per_answer": round(rows / len(calls), 1),
            "codes": dict(codes)}


def reads(procs: list[psutil.Process], base: str, loaded: scale_load.Loaded,
          count: int, background: float,
          only: list[str] | None = None) -> list[dict]:
    """Each read ``count`` times (the 1,000-row ones a fifth as often);
    ``only``: those named."""
    p0 = scale_load.project_id(0)

    def spread(pairs, path, params=None):
        return [(pairs[i % len(pairs)][0], path % pairs[i % len(pairs)][1],
                 dict(params or {})) for i in range(count)]
    few = max(5, count // 5)  # the 1,000-row answers take seconds
    ops = {
        "detail_project": [(p0, "/volumes/detail", {})] * count,
        "detail_project_limit1000": [(p0, "/volumes/detail",
                                      {"limit": 1000})] * count,
        "detail_all_tenants": [(p0, "/volumes/detail",
                                {"all_tenants": 1})] * few,
        "detail_all_tenants_limit1000": [(p0, "/volumes/detail",
                                          {"all_tenants": 1,
                                           "limit": 1000})] * few,
        "detail_all_tenants_with_count": [(p0, "/volumes/detail", {
            "all_tenants": 1, "limit": 10, "with_count": "true"})] * few,
        "attachments_by_volume": [
            (p, "/attachments", {"volume_id": v})
            for p, v in (loaded.attached * count)[:count]],
        "volume_show": spread(loaded.volumes, "/volumes/%s"),
    }
    return [timed_reads(procs, base, name, calls, background)
            for name, calls in ops.items() if only is None or name in only]


def page_to_end(procs: list[psutil.Process], base: str, project: str,
                params: dict, limit: int, background: float) -> dict:
    """Marker paging through ``/volumes/detail`` until a short page."""
    api = Api("%s/%s" % (base, project))
    before, started = cpu_s(procs), time.perf_counter()
    marker, ids, pages, durations = None, set(), 0, []
    while True:
        query = dict(params, limit=limit, **({"marker": marker}
                                             if marker else {}))
        t0 = time.perf_counter()
        resp = api.call("GET", "/volumes/detail", params=query)
        durations.append(time.perf_counter() - t0)
        resp.raise_for_status()
        volumes = resp.json()["volumes"]
        pages += 1
        ids.update(v["id"] for v in volumes)
        if len(volumes) < limit:
            break
        marker = volumes[-1]["id"]
    return {"figure": "paging", "all_tenants": "all_tenants" in params,
            "limit": limit, "pages": pages, "rows": len(ids),
            "seconds": round(time.perf_counter() - started, 2),
            "page_ms": summarize(durations),
            "api_cpu_ms_per_page": round(
                (cpu_s(procs) - before - background
                 * (time.perf_counter() - started)) * 1000 / pages, 1)}


#: The reads the standalone run (``main``) times by default: the volume
#: list views' row cost.
LIST_READS = ("detail_all_tenants_limit1000", "detail_project",
              "volume_show")


@contextlib.contextmanager
def api_only(folder: pathlib.Path, db: str, workers: int
             ) -> Iterator[tuple[list[psutil.Process], str, str]]:
    """A fresh vhost and database (migrated) and the api alone under
    gunicorn with ``workers``; yields its processes, the database URL
    and the base URL."""
    with contextlib.ExitStack() as stack:
        vhost, drop_vhost = harness.broker_vhost()
        stack.callback(drop_vhost)
        db_url, drop_db = harness.database(db)
        stack.callback(drop_db)
        dep = harness.Deployment(folder, vhost, db_url, api_workers=workers)
        stack.callback(dep.stop_all)
        dep.db_sync()
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: client.get("/volumes").status_code == 200,
                         timeout=60, what="the api")
        yield (process_tree(dep.procs["api"].pid), db_url,
               dep.endpoint.rsplit("/", 1)[0])


def main(argv: list[str] | None = None) -> None:
    """The list views' api CPU per request, on the api alone."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--db", choices=["postgresql", "mysql", "mysqldb"],
                        default="mysql")
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--reads", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--ops", default=",".join(LIST_READS),
                        help="comma-separated reads (names of ``reads``)")
    args = parser.parse_args(argv)
    counts = scale_load.Counts().scaled(args.scale, 1)
    wanted = args.ops.split(",")
    with tempfile.TemporaryDirectory(prefix="ashlar-reads-") as tmp, \
            api_only(pathlib.Path(tmp), args.db, args.workers) as (
                procs, db_url, base):
        loaded = scale_load.load(db_url, counts)
        runs: dict[str, list[dict]] = collections.defaultdict(list)
        reads(procs, base, loaded, 2, 0.0, wanted)  # warm the workers
        for _ in range(args.runs):
            for rec in reads(procs, base, loaded, args.reads, 0.0, wanted):
                runs[rec["op"]].append(rec)
    for name, recs in runs.items():
        cpu = [rec["api_cpu_ms_per_op_gross"] for rec in recs]
        print(json.dumps({"op": name, "rows": recs[0]["rows_per_answer"],
                          "api_cpu_ms_min": min(cpu),
                          "api_cpu_ms_max": max(cpu), "runs": cpu,
                          "p50_ms": [rec["p50_ms"] for rec in recs],
                          "codes": recs[0]["codes"]}))


if __name__ == "__main__":
    main()
