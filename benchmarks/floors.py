"""The floor under the attach cycle (S3) and a backend's start (S6).

At concurrency 1 an S3 cycle is four HTTP requests, two RPC calls from the
api to the volume node (connect, disconnect) and the SQL statements of both,
one after the other; S6 starts a new volume process.  This serves the
anchor-shaped deployment (``ma_cluster.py``, MariaDB, one volume service)
and times each of those pieces doing nothing else, with the product's own
client library, transport settings and database driver:

- ``http``: ``GET /v3/`` (the version document: no database, no RPC) on one
  kept-alive ``requests`` session, the benchmarks' client, against the api;
- ``rpc``: an oslo.messaging call, through ``common.rpc`` on the
  deployment's vhost, to an endpoint that returns at once;
- ``sql``: a primary-key ``SELECT`` and a one-row ``UPDATE``, each on its
  own, on the driver's cursor of the product's autocommit pool;
- ``start``: a fresh interpreter; one that imports only the libraries a
  volume node of this stack needs before it can register (``STACK``); one
  that imports ``ashlar-volume``'s entry module (before it reads its config
  or connects to anything);
- ``cycle``: S3 at concurrency 1 (``attach_cycle.py``), with the statements
  MariaDB counted (``Questions``) and its redo log writes (durable commits)
  per cycle; they include S3's one volume create and delete, and the
  services' heartbeats (keep the machine quiet).

Prints JSON: p50 of each piece; the CPU milliseconds it costs this process
(the client; both ends of the RPC call; the SQL driver) and the server that
takes part (the api, RabbitMQ, MariaDB; ``/proc`` accounting); and
``cycle_floor_ms``, 4 ``http`` + 2 ``rpc`` + statements x ``sql`` select;
``cycle_durable_floor_ms``, the same with each durable commit costed as a
one-row ``sql`` update (its log flush) rather than a read; the measured
cycle's ratio to each (``*_ratio``); ``cycle_cpu_floor_ms``, the CPU of
those pieces (what bounds cycles/s at concurrency 8 on a machine's
cores); and ``cycle_cpu_floor_by_process_ms``, that CPU floor by process
beside the cycle's own CPU there (at concurrency 1 the pieces run one
after another, so the cycle's CPU, summed, is most of its latency)::

    python -m benchmarks.floors [--db mysql|mysqldb] [--requests 500]
        [--cycles 300]
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Callable

import oslo_messaging as messaging
import requests

from benchmarks import attach_cycle
from benchmarks import cycle_cost
from benchmarks import ma_cluster
from common import conf as ashlar_conf
from common import context as ashlar_context
from common import rpc
from common import service
from common.db.api import engine as db_engine

KINDS = (("services.api", "api"), ("beam", "rabbitmq"),
         ("mariadbd", "mariadb"), ("mysqld", "mariadb"))
#: The processes an attach cycle runs in, besides the client.
CYCLE_KINDS = KINDS + (("services.volume", "volume"),
                       ("services.scheduler", "scheduler"))
QUIET_S = 2.0
#: What any volume node of this stack imports before it can register:
#: config, logging, the bus, and the database through oslo.db.
STACK = ("import oslo_config.cfg, oslo_log.log, oslo_messaging, "
         "oslo_db.sqlalchemy.enginefacade")


def timed(fn: Callable[[], object], n: int, kinds: tuple[str, ...]) -> dict:
    """p50 of ``n`` runs of ``fn`` (after ``n // 10`` unmeasured), and
    the CPU milliseconds per run of this process and of the processes of
    ``kinds`` (of ``KINDS``) that take part in it."""
    for _ in range(max(1, n // 10)):
        fn()
    time.sleep(QUIET_S)
    before, mine = cycle_cost.cpu_by_kind(KINDS), time.process_time()
    took = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        took.append(time.perf_counter() - started)
    spent = time.process_time() - mine
    after = cycle_cost.cpu_by_kind(KINDS)
    cpu = {kind: round((after.get(kind, 0.0) - before.get(kind, 0.0))
                       * 1000 / n, 3) for kind in kinds}
    cpu["this_process"] = round(spent * 1000 / n, 3)
    return {"n": n, "p50_ms": round(statistics.median(took) * 1000, 3),
            "cpu_ms": cpu}


class Probe:
    """The RPC endpoint that answers at once."""

    target = messaging.Target(topic="floors", server="probe", version="1.0")

    @messaging.expose
    def ping(self, ctxt: object) -> int:
        return 1


def rpc_floor(conf_file: pathlib.Path, n: int) -> dict:
    """``n`` calls to ``Probe.ping`` through ``common.rpc``."""
    service.prepare_process(["--config-file", str(conf_file)],
                            database=False)
    server = rpc.get_server(Probe.target, [Probe()])
    server.start()
    try:
        client = rpc.get_client(Probe.target)
        ctxt = ashlar_context.RequestContext(is_admin=False)
        return timed(lambda: client.call(ctxt, "ping"), n, ("rabbitmq",))
    finally:
        server.stop()
        server.wait()
        rpc.cleanup()


def sql_floor(db_url: str, n: int) -> dict:
    """A primary-key read and a one-row update on the autocommit pool."""
    engine = db_engine.autocommit_engine(db_url, ashlar_conf.CONF.database)
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("CREATE TABLE floors_probe (id INT PRIMARY KEY, "
                       "n INT NOT NULL)")
        cursor.execute("INSERT INTO floors_probe VALUES (1, 0)")

        def select() -> None:
            cursor.execute("SELECT n FROM floors_probe WHERE id = 1")
            cursor.fetchall()
        found = {"select": timed(select, n, ("mariadb",))}
        found["update"] = timed(lambda: cursor.execute(
            "UPDATE floors_probe SET n = n + 1 WHERE id = 1"), n,
            ("mariadb",))
        cursor.execute("DROP TABLE floors_probe")
        return found
    finally:
        raw.close()
        engine.dispose()


def http_floor(endpoint: str, n: int) -> dict:
    """``GET /v3/`` on one kept-alive session."""
    session = requests.Session()
    root = endpoint.split("/v3/", 1)[0] + "/v3/"

    def get() -> None:
        if session.get(root, timeout=30).status_code != 200:
            raise RuntimeError("GET %s did not answer 200" % root)
    return timed(get, n, ("api",))


def start_floor(runs: int) -> dict:
    """Wall milliseconds of a fresh interpreter: bare, importing only the
    libraries a volume node cannot start without (``STACK``), and importing
    the volume node's entry module; p50 of ``runs`` each."""
    found = {}
    for name, code in (("python", "pass"), ("stack_import", STACK),
                       ("volume_import",
                        "import services.volume.__main__")):
        took = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True,
                           cwd=ma_cluster.REPO)
            took.append(time.perf_counter() - started)
        found[name + "_p50_ms"] = round(statistics.median(took) * 1000, 1)
    return found


def settle(kinds: tuple[str, ...] = ("mariadb",), share: float = 0.02,
           window: float = 0.5, limit: float = 60.0) -> float:
    """Wait until the processes of ``kinds`` use less than ``share`` of a
    core over ``window`` seconds (MariaDB flushes the pages a fresh
    database's schema dirtied for seconds after it is made, and that CPU
    is no cycle's); at most ``limit`` seconds.  The seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        before = cycle_cost.cpu_by_kind(KINDS)
        time.sleep(window)  # NOTE: a measuring window
        after = cycle_cost.cpu_by_kind(KINDS)
        if sum(after.get(k, 0.0) - before.get(k, 0.0)
               for k in kinds) < share * window:
            break
    return round(time.perf_counter() - started, 1)


def cycle(endpoint: str, db_url: str, cycles: int) -> dict:
    """S3 at concurrency 1 (``attach_cycle``), and MariaDB's statements
    (``Questions``) and redo log writes (``Innodb_log_writes``: one per
    durable commit at ``innodb_flush_log_at_trx_commit = 1``) per cycle,
    read twice on one connection (the second read counts itself)."""
    engine = db_engine.autocommit_engine(db_url, ashlar_conf.CONF.database)
    show = ("SHOW GLOBAL STATUS WHERE Variable_name IN "
            "('Questions', 'Innodb_log_writes')")
    try:
        with engine.connect() as conn:
            settled = settle()
            before = dict(conn.exec_driver_sql(show).all())
            cpu0, mine = (cycle_cost.cpu_by_kind(CYCLE_KINDS),
                          time.process_time())
            level = attach_cycle.run(endpoint, cycles, 1)
            cpu1, mine = (cycle_cost.cpu_by_kind(CYCLE_KINDS),
                          time.process_time() - mine)
            after = dict(conn.exec_driver_sql(show).all())
    finally:
        engine.dispose()
    if level["ok"] != cycles:
        raise RuntimeError("S3: %d of %d cycles ok: %s" % (
            level["ok"], cycles, level["errors"]))
    statements = int(after["Questions"]) - int(before["Questions"]) - 1
    commits = int(after["Innodb_log_writes"]) - int(
        before["Innodb_log_writes"])
    return {"cycles": cycles, "p50_ms": level["cycle_ms"]["p50_ms"],
            "step_p50_ms": {step: figures["p50_ms"] for step, figures
                            in level["step_ms"].items()},
            "statements_per_cycle": round(statements / cycles, 1),
            "log_writes_per_cycle": round(commits / cycles, 2),
            "mariadb_settled_s": settled,
            "cpu_ms": {**{kind: round((cpu1.get(kind, 0.0) - cpu0.get(
                kind, 0.0)) * 1000 / cycles, 2) for _, kind in CYCLE_KINDS},
                "client": round(mine * 1000 / cycles, 2)}}


def floor(found: dict) -> dict:
    """The cycle's floors from its pieces' p50 and CPU: ``cycle_floor_ms``
    (every statement a primary-key read, as the floor study had it) and
    ``cycle_durable_floor_ms`` (each redo log write a one-row update's
    time: a durable commit, which Cinder's cycle pays too), each with the
    measured cycle's ratio to it."""
    http, rpc_call, sql = found["http"], found["rpc"], found["sql"]
    measured = found["cycle"]
    pieces = ((4, http), (2, rpc_call),
              (measured["statements_per_cycle"], sql["select"]))
    durable = ((4, http), (2, rpc_call),
               (measured["log_writes_per_cycle"], sql["update"]),
               (measured["statements_per_cycle"]
                - measured["log_writes_per_cycle"], sql["select"]))
    out = {"cycle_floor_ms": round(
        sum(times * piece["p50_ms"] for times, piece in pieces), 1),
        "cycle_durable_floor_ms": round(
            sum(times * piece["p50_ms"] for times, piece in durable), 1),
        "cycle_cpu_floor_ms": round(sum(
            times * sum(piece["cpu_ms"].values()) for times, piece in pieces),
            1)}
    for name in ("cycle_floor_ms", "cycle_durable_floor_ms"):
        out[name.replace("_ms", "_ratio")] = round(
            measured["p50_ms"] / out[name], 2)
    out["cycle_cpu_floor_by_process_ms"] = cpu_floor_by_process(found)
    return out


def cpu_floor_by_process(found: dict) -> dict:
    """The CPU floor of a cycle where it is spent: the api and client
    ends of 4 ``http``; 2 ``rpc`` (the call's two ends, measured in one
    process, counted half to the api and half to the volume node), with
    RabbitMQ's share; the statements' driver work (the api's) and
    MariaDB's.  Beside the measured cycle's CPU by process (``cycle``'s
    ``cpu_ms``): what each process spends over its floor."""
    http, rpc_call, sql = found["http"], found["rpc"], found["sql"]
    statements = found["cycle"]["statements_per_cycle"]
    ends = rpc_call["cpu_ms"]["this_process"]
    floor_ms = {
        "client": 4 * http["cpu_ms"]["this_process"],
        "api": (4 * http["cpu_ms"]["api"] + ends
                + statements * sql["select"]["cpu_ms"]["this_process"]),
        "volume": ends,
        "rabbitmq": 2 * rpc_call["cpu_ms"]["rabbitmq"],
        "mariadb": statements * sql["select"]["cpu_ms"]["mariadb"]}
    measured = found["cycle"]["cpu_ms"]
    return {kind: {"floor": round(ms, 2), "cycle": measured.get(kind),
                   "over": round(measured.get(kind, 0.0) - ms, 2)}
            for kind, ms in floor_ms.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["mysql", "mysqldb"],
                        default="mysql")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    cluster = ma_cluster.Cluster(db=args.db, volumes="one")
    try:
        cluster.start()
        conf_file = cluster.folder / "floors.conf"
        conf_file.write_text("[DEFAULT]\nuse_stderr = true\n"
                             "transport_url = %s\n[database]\n"
                             "connection = %s\n"
                             % (cluster.vhost, cluster.db_url))
        found = {"rpc": rpc_floor(conf_file, args.requests),
                 "http": http_floor(cluster.dep.endpoint, args.requests)}
        found["sql"] = sql_floor(cluster.db_url, args.requests)
        found["start"] = start_floor(args.starts)
        found["cycle"] = cycle(cluster.dep.endpoint, cluster.db_url,
                               args.cycles)
    finally:
        cluster.stop()
    found.update(floor(found))
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
