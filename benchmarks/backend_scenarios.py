"""S2, S3 and S4 on each storage backend, side by side, on one deployment.

Starts the engines the chosen backends need (a throwaway Ceph, tgt,
nfs-ganesha: ``deploy/testbed/components/``) and one deployment (the
functional tests' processes: scheduler, api under gunicorn, one volume
node per backend, ``node-file@file#file`` and so on, on a fresh RabbitMQ
vhost and a fresh PostgreSQL database), every backend's pool multiattach.
Then, backend after backend, on a multiattach type pinned to it
(``volume_backend_name``):

* S2: ``--s2`` creates of 1 GiB volumes at concurrency 1, then 8, each
  polled until ``available``, then their deletes until gone:
  create→available p50/p95, volumes/s, the POST's answer, delete→gone p50;
* S3: ``--s3`` attach cycles on one multiattach volume at concurrency 1,
  then 8 (``attach_cycle.run``): cycle p50/p95, cycles/s, refusals, end
  state;
* S4: 16 hosts attach (reserve, ``os-complete``) one multiattach volume
  at the same instant, then detach at once: first-try successes, the time
  until all are attached, the state after each phase.

One JSON line per backend and scenario, then a table::

    python -m benchmarks.backend_scenarios [--backends file,rbd,iscsi,nfs]
        [--s2 20] [--s3 100]
"""

import argparse
import collections
import contextlib
import json
import pathlib
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from benchmarks import attach_cycle
from benchmarks.common import Api
from benchmarks.common import summarize
from deploy.testbed import harness

BACKENDS = ("file", "rbd", "iscsi", "nfs")
CONCURRENCIES = (1, 8)
FAN_OUT = 16
POLL_S = 0.01


def parse_backends(text: str) -> list[str]:
    """``file,rbd`` → ``["file", "rbd"]``; unknown or repeated names are
    refused."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = sorted(set(names) - set(BACKENDS))
    if unknown or not names or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            "backends: a list of distinct names of %s, not %r"
            % (",".join(BACKENDS), text))
    return names


# -- engines and the deployment --------------------------------------------
def _rbd(stack: contextlib.ExitStack, folder: pathlib.Path) -> str:
    from deploy.testbed.components import ceph
    ceph.available()
    cluster = stack.enter_context(ceph.Ceph(folder / "ceph"))
    return ("[rbd]\nvolume_driver = rbd\nrbd_pool = %s\nrbd_user = %s\n"
            "rbd_ceph_conf = %s\nrbd_keyring = %s\n" % (
                cluster.pool, cluster.client, cluster.conf,
                cluster.keyring(cluster.client)))


def _iscsi(stack: contextlib.ExitStack, folder: pathlib.Path) -> str:
    from deploy.testbed.components import tgt
    tgt.available()
    target = stack.enter_context(tgt.Tgt(folder / "tgt"))
    return ("[iscsi]\nvolume_driver = iscsi\ntarget_port = %d\n"
            "tgtadm_control_port = %d\n" % (target.port, target.control_port))


def _nfs(stack: contextlib.ExitStack, folder: pathlib.Path) -> str:
    from deploy.testbed.components import ganesha
    ganesha.available()
    server = stack.enter_context(ganesha.Ganesha(folder / "ganesha"))
    shares = folder / "nfs_shares"
    shares.write_text(server.url + "\n")
    return "[nfs]\nvolume_driver = nfs\nnfs_shares_config = %s\n" % shares


def _file(_stack: contextlib.ExitStack, _folder: pathlib.Path) -> str:
    return "[file]\nvolume_driver = file\nfile_volume_format = raw\n"


SECTIONS = {"file": _file, "rbd": _rbd, "iscsi": _iscsi, "nfs": _nfs}


@contextlib.contextmanager
def deployment(backends: list[str], folder: pathlib.Path):
    """The engines and one deployment with a volume node per backend;
    yields its endpoint once every backend's pool is listed."""
    with contextlib.ExitStack() as stack:
        sections = {b: SECTIONS[b](stack, folder) for b in backends}
        vhost, drop_vhost = harness.broker_vhost()
        stack.callback(drop_vhost)
        db_url, drop_db = harness.database("postgresql")
        stack.callback(drop_db)
        dep = harness.Deployment(folder, vhost, db_url)
        stack.callback(dep.stop_all)
        dep.db_sync()
        dep.start("scheduler", "services.scheduler", "sched")
        for backend, section in sections.items():
            dep.start("volume-" + backend, "services.volume",
                      "node-" + backend, backends=backend, extra=section)
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        wanted = sorted("node-%s@%s#%s" % (b, b, b) for b in backends)
        harness.wait_for(lambda: sorted(client.pools()) == wanted,
                         timeout=120, what="pools %s" % wanted)
        yield dep.endpoint


def specs(backend: str) -> dict:
    """A multiattach type's extra specs that place it on ``backend``."""
    return {"multiattach": "<is> True", "volume_backend_name": backend}


# -- S2 ---------------------------------------------------------------------
def _create(api: Api, type_id: str) -> dict:
    started = time.perf_counter()
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": type_id, "name": "s2"}})
    answered = time.perf_counter() - started
    if resp.status_code != 202:
        return {"error": "create %d %s" % (resp.status_code, resp.text[:200])}
    volume_id = resp.json()["volume"]["id"]
    status = api.wait_volume(volume_id, "available", POLL_S, timeout=120)
    took: dict = {"id": volume_id, "post": answered,
            "available": time.perf_counter() - started}
    if status != "available":
        took["error"] = "volume %s is %s" % (volume_id, status)
    return took


def _delete(api: Api, volume_id: str) -> dict:
    """Delete the volume (a 503 retried) and poll until it is gone."""
    started = time.perf_counter()
    for attempt in range(1, 11):
        if api.call("DELETE", "/volumes/%s" % volume_id).status_code != 503:
            break
        attach_cycle.backoff(attempt)
    status = api.wait_volume(volume_id, None, POLL_S, timeout=120)
    took: dict = {"gone": time.perf_counter() - started}
    if status is not None:
        took["error"] = "volume %s is %s" % (volume_id, status)
    return took


def s2(api: Api, type_id: str, count: int, concurrency: int) -> dict:
    """``count`` creates at ``concurrency``, then their deletes."""
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        started = time.perf_counter()
        made = list(pool.map(lambda _i: _create(api, type_id), range(count)))
        wall = time.perf_counter() - started
        gone = list(pool.map(lambda m: _delete(api, m["id"]),
                             [m for m in made if "id" in m]))
    ok = [m for m in made if "error" not in m]
    return {"concurrency": concurrency, "creates": count, "ok": len(ok),
            "volumes_per_s": round(len(ok) / wall, 2),
            "available_ms": summarize([m["available"] for m in ok]),
            "post_ms": summarize([m["post"] for m in ok]),
            "gone_ms": summarize([g["gone"] for g in gone
                                  if "error" not in g]),
            "errors": [r["error"] for r in made + gone if "error" in r][:3]}


# -- S4 ---------------------------------------------------------------------
def _attach(api: Api, volume_id: str, host: str,
            barrier: threading.Barrier, started: list[float]) -> dict:
    """Reserve (4xx and 503 retried, as a compute agent retries them) and
    complete an attachment as ``host``, from the barrier on."""
    refused: collections.Counter = collections.Counter()
    barrier.wait()
    for attempt in range(1, 11):
        resp = attach_cycle.reserve(api, volume_id, host, refused)
        if resp.status_code != 503:
            break
        refused[503] += 1
        attach_cycle.backoff(attempt)
    if resp.status_code != 200:
        return {"error": "reserve %d %s" % (resp.status_code,
                                           resp.text[:200])}
    attachment = resp.json()["attachment"]["id"]
    done = api.call("POST", "/attachments/%s/action" % attachment,
                    {"os-complete": None})
    if done.status_code >= 400:
        return {"error": "complete %d" % done.status_code}
    return {"id": attachment, "first_try": not refused,
            "retried_503": refused[503],
            "attached": time.perf_counter() - started[0]}


def _detach(api: Api, attachment: str, barrier: threading.Barrier) -> dict:
    """Delete the attachment; a 503 (the database busy or out of
    connections) is retried as a client retries it, and counted."""
    barrier.wait()
    for attempt in range(1, 21):
        resp = api.call("DELETE", "/attachments/%s" % attachment)
        if resp.status_code != 503:
            break
        attach_cycle.backoff(attempt)
    if resp.status_code >= 400:
        return {"error": "detach %d %s" % (resp.status_code,
                                          resp.text[:200])}
    return {"retried_503": attempt - 1}


def s4(api: Api, volume_id: str, hosts: int = FAN_OUT) -> dict:
    """``hosts`` attach ``volume_id`` at once, then detach at once."""
    started: list[float] = []
    at_once = threading.Barrier(hosts, action=lambda: started.append(
        time.perf_counter()))
    with ThreadPoolExecutor(max_workers=hosts) as pool:
        attached = list(pool.map(
            lambda i: _attach(api, volume_id, "s4-host-%d" % i, at_once,
                              started), range(hosts)))
        after_attach = attach_cycle.final_state(api, volume_id)
        ids = [a["id"] for a in attached if "id" in a]
        apart = threading.Barrier(max(len(ids), 1))
        detached = list(pool.map(lambda a: _detach(api, a, apart), ids))
    after_detach = attach_cycle.final_state(api, volume_id)
    ok = [a for a in attached if "error" not in a]
    return {"hosts": hosts, "attached": len(ok),
            "first_try_successes": sum(a["first_try"] for a in ok),
            "all_attached_ms": (round(max(a["attached"] for a in ok) * 1000,
                                      1) if len(ok) == hosts else None),
            "reserve_503_retries": sum(a["retried_503"] for a in ok),
            "detached": sum("error" not in d for d in detached),
            "detach_503_retries": sum(d.get("retried_503", 0)
                                      for d in detached),
            "after_attach": after_attach,
            "after_attach_ok": after_attach == {
                "status": "in-use", "volume_attachments": hosts,
                "listed_attachments": hosts},
            "after_detach": after_detach,
            "after_detach_ok": after_detach == {
                "status": "available", "volume_attachments": 0,
                "listed_attachments": 0},
            "errors": [r["error"] for r in attached + detached
                       if "error" in r][:3]}


# -- one backend, then all --------------------------------------------------
def scenarios(endpoint: str, backend: str, creates: int,
              cycles: int) -> list[dict]:
    """S2 and S3 at each concurrency, then S4, on ``backend``: one record
    each."""
    api = Api(endpoint)
    records = []
    type_id, volume_id = api.typed_volume("s2-" + backend, specs(backend),
                                          POLL_S)
    try:
        for concurrency in CONCURRENCIES:
            records.append({"backend": backend, "scenario": "S2",
                            **s2(api, type_id, creates, concurrency)})
        for concurrency in CONCURRENCIES:
            records.append({"backend": backend, "scenario": "S3",
                            **attach_cycle.run(endpoint, cycles, concurrency,
                                               {"volume_backend_name":
                                                backend})})
        records.append({"backend": backend, "scenario": "S4",
                        **s4(api, volume_id)})
    finally:
        api.call("DELETE", "/volumes/%s" % volume_id)
        api.wait_volume(volume_id, None, POLL_S)
        api.call("DELETE", "/types/%s" % type_id)
    return records


def _ms(summary: dict, key: str) -> str:
    return "%.1f" % summary[key] if key in summary else "-"


def table(records: list[dict]) -> str:
    """A Markdown table of the records, a row per backend."""
    rows: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for rec in records:
        row = rows[rec["backend"]]
        if rec["scenario"] == "S2":
            row["S2 c=%d avail p50/p95 ms" % rec["concurrency"]] = "%s/%s" % (
                _ms(rec["available_ms"], "p50_ms"),
                _ms(rec["available_ms"], "p95_ms"))
            row["S2 c=%d vol/s" % rec["concurrency"]] = str(
                rec["volumes_per_s"])
            row["S2 c=%d gone p50 ms" % rec["concurrency"]] = _ms(
                rec["gone_ms"], "p50_ms")
        elif rec["scenario"] == "S3":
            row["S3 c=%d cycle p50/p95 ms" % rec["concurrency"]] = \
                "%s/%s" % (_ms(rec["cycle_ms"], "p50_ms"),
                           _ms(rec["cycle_ms"], "p95_ms"))
            row["S3 c=%d cycles/s" % rec["concurrency"]] = str(
                rec["cycles_per_s"])
            row["S3 c=%d refused, end ok" % rec["concurrency"]] = "%d, %s" % (
                sum(rec["refused"].values()), rec["final_state_ok"])
        else:
            row["S4 first try"] = "%d/%d" % (rec["first_try_successes"],
                                             rec["hosts"])
            row["S4 all attached ms"] = str(rec["all_attached_ms"])
            row["S4 states ok"] = str(rec["after_attach_ok"]
                                      and rec["after_detach_ok"])
    columns = list(dict.fromkeys(c for row in rows.values() for c in row))
    lines = ["| figure | %s |" % " | ".join(rows),
             "|---|" + "---|" * len(rows)]
    for column in columns:
        lines.append("| %s | %s |" % (column, " | ".join(
            rows[b].get(column, "-") for b in rows)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", type=parse_backends,
                        default=list(BACKENDS))
    parser.add_argument("--s2", type=int, default=20,
                        help="creates at each concurrency")
    parser.add_argument("--s3", type=int, default=100,
                        help="attach cycles at each concurrency")
    args = parser.parse_args(argv)
    records = []
    with tempfile.TemporaryDirectory(prefix="ashlar-backends-") as folder, \
            deployment(args.backends, pathlib.Path(folder)) as endpoint:
        for backend in args.backends:
            for record in scenarios(endpoint, backend, args.s2, args.s3):
                print(json.dumps(record), flush=True)
                records.append(record)
    print(table(records))


if __name__ == "__main__":
    main()
