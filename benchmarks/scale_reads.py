"""The scale rig's reads and scenarios, against any Cinder v3 endpoint.

Both sides are measured by the same code: Ashlar by
:mod:`benchmarks.scale_rig`, Cinder 29 by :mod:`benchmarks.scale_cinder`.
An endpoint is ``http://HOST:PORT/v3/PROJECT`` in noauth mode (the token
``user:project``); reads of another project replace the last part.
"""

import functools
import json
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import psutil
import requests

from benchmarks import common
from benchmarks import side_by_side

VERSION = "volume 3.54"


class Client:
    """A kept-alive session for one project's part of an endpoint."""

    def __init__(self, endpoint: str, project: str | None = None) -> None:
        base, own = endpoint.rstrip("/").rsplit("/", 1)
        self.project = project or own
        self.url = "%s/%s" % (base, self.project)
        self.session = requests.Session()
        self.session.headers.update({
            "X-Auth-Token": "admin:%s" % self.project,
            "OpenStack-API-Version": VERSION,
            "Content-Type": "application/json"})

    def get(self, path: str) -> Any:
        resp = self.session.get(self.url + path, timeout=300)
        resp.raise_for_status()
        return resp.json()


def api_cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU of ``pids`` and all their children."""
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            procs = [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for one in procs:
            try:
                times = one.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
    return total


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def _series(name: str, calls: list[Callable[[], Any]],
            api: list[int]) -> dict:
    """Run ``calls`` one after another: latencies and api CPU per call."""
    cpu = api_cpu_seconds(api)
    seconds = [timed(call)[0] for call in calls]
    cpu = api_cpu_seconds(api) - cpu
    return {"figure": name, **common.summarize(seconds),
            "api_cpu_ms_per_op": round(cpu * 1000 / len(calls), 2)}


def page_to_end(client: Client, query: str) -> tuple[int, int]:
    """Follow markers (``limit=1000``) to the end: (pages, rows)."""
    pages = rows = 0
    marker = ""
    while True:
        body = client.get("/volumes/detail?limit=1000%s%s" % (query, marker))
        pages += 1
        rows += len(body["volumes"])
        if len(body["volumes"]) < 1000:
            return pages, rows
        marker = "&marker=%s" % body["volumes"][-1]["id"]


def measure(endpoint: str, sample: dict, api: list[int],
            repeat: int = 20) -> list[dict]:
    """The reads of issue 43, each ``repeat`` times over the sample."""
    admin = Client(endpoint)
    users = [Client(endpoint, p) for p in sample["projects"]]
    vols, attached = sample["volume_ids"], sample["attached_ids"]

    def each(make: Callable[[int], Callable[[], Any]]) -> list:
        return [make(i) for i in range(repeat)]
    records = [
        _series("detail_project", each(lambda i: lambda: users[
            i % len(users)].get("/volumes/detail")), api),
        _series("detail_project_limit_1000", each(lambda i: lambda: users[
            i % len(users)].get("/volumes/detail?limit=1000")), api),
        _series("detail_all_tenants", each(lambda i: lambda: admin.get(
            "/volumes/detail?all_tenants=1")), api),
        _series("detail_all_tenants_limit_1000", each(lambda i: lambda:
                admin.get("/volumes/detail?all_tenants=1&limit=1000")), api),
        _series("attachments_by_volume", each(lambda i: lambda: admin.get(
            "/attachments?all_tenants=1&volume_id=%s"
            % attached[i % len(attached)])), api),
        _series("volume_show", each(lambda i: lambda: admin.get(
            "/volumes/%s" % vols[i % len(vols)])), api),
    ]
    for name, client, query in (("paging_project", users[0], ""),
                                ("paging_all_tenants", admin,
                                 "&all_tenants=1")):
        cpu = api_cpu_seconds(api)
        seconds, (pages, rows) = timed(functools.partial(
            page_to_end, client, query))
        records.append({"figure": name, "seconds": round(seconds, 2),
                        "pages": pages, "rows": rows,
                        "api_cpu_ms_per_page": round(
                            (api_cpu_seconds(api) - cpu) * 1000 / pages, 2)})
    return records


def default_type(endpoint: str) -> str:
    """The id of the endpoint's default volume type."""
    client = Client(endpoint)
    resp = client.session.get(client.url + "/types/default", timeout=60,
                              headers={"OpenStack-API-Version":
                                       "volume 3.62"})
    resp.raise_for_status()
    return resp.json()["volume_type"]["id"]


def sample_of(endpoint: str) -> dict:
    """The sample of an empty database: one available volume of its own
    project (made and left for the reads)."""
    client = Client(endpoint)
    resp = client.session.post(client.url + "/volumes", json={
        "volume": {"size": 1, "name": "scale-probe"}}, timeout=60)
    resp.raise_for_status()
    vid = resp.json()["volume"]["id"]
    common.Api(endpoint).wait_volume(vid, "available", 0.01)
    return {"volume_ids": [vid], "attached_ids": [vid],
            "projects": [client.project]}


def bench_scenarios(bench_py: pathlib.Path, endpoint: str, scenarios: str,
                    s3_cycles: int, s2_count: int = 20) -> list[dict]:
    """The anchor's bench.py on ``endpoint``: side_by_side's figures of
    S1-S3 and S4's first-try successes and time until all attached."""
    if not scenarios:
        return []
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as out:
        subprocess.run([sys.executable, str(bench_py), "--endpoint",
                        endpoint, "--output", out.name, "--scenarios",
                        scenarios.upper(), "--poll-interval", "0.005",
                        "--s2-count", str(s2_count), "--s3-cycles",
                        str(s3_cycles)], check=True,
                       stdout=subprocess.DEVNULL, timeout=3600)
        lines = [json.loads(line) for line in
                 pathlib.Path(out.name).read_text().splitlines()]
    found = side_by_side.figures(lines)
    s4 = {r["id"]: r for r in lines if r.get("id")}.get("S4", {})
    found.update(s4_first_try=s4.get("first_try_successes"),
                 s4_all_attached_s=s4.get("time_until_all_attached_s"))
    return [{"figure": "scenarios", **found}]


def _cell(record: dict) -> str:
    if "p50_ms" in record:
        return "%s/%s ms, %s cpu ms" % (record["p50_ms"], record["p95_ms"],
                                        record["api_cpu_ms_per_op"])
    if "pages" in record:
        return "%s s, %s pages" % (record["seconds"], record["pages"])
    return json.dumps({k: v for k, v in record.items()
                       if k not in ("figure", "side", "db")})


def table(records: list[dict]) -> str:
    """figure | empty | loaded, per side."""
    rows = {}
    for record in records:
        key = (record.get("side"), record["figure"])
        rows.setdefault(key, {})[record.get("db")] = _cell(record)
    lines = ["| side | figure | empty | loaded |", "|---|---|---|---|"]
    for (side, figure), cells in rows.items():
        lines.append("| %s | %s | %s | %s |" % (
            side, figure, cells.get("empty", ""), cells.get("loaded", "")))
    return "\n".join(lines)
