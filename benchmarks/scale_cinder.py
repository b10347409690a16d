"""Cinder 29 (the anchor) loaded to the scale rig's row counts.

The same run as :mod:`benchmarks.scale_rig` gives Ashlar, on the anchor:
it runs on a database of its own (``cinder_scale`` on the machine's
MariaDB, or its PostgreSQL with ``--db postgresql``, synced with
``cinder-manage db sync``, dropped at the end) and a
RabbitMQ vhost of its own, through a copy of its ``cinder.conf``, with its
two bookkeeping backends ``anchor_ma`` and ``anchor_plain``:

1. empty: the rig's S2, S3 (c=1, c=8), S4 and S1 in project ``P0``;
2. loaded straight into Cinder's tables (``--scale`` times 100,000 volumes
   in 1,000 projects, 20,000 attachments over 2,000 hosts, 5,000
   snapshots, 1,000 volume services that a heartbeat keeps up); then the
   reads of :mod:`benchmarks.scale_reads` with ``cinder-api``'s CPU per
   request, marker paging to the end, the scenarios again with their
   ratio loaded/empty, and the boot storm.

The loaded services send no capability reports: Cinder's scheduler keeps
reports in memory, which none of these reads touch.  One JSON line per
figure (``"side": "cinder"``), then the rig's table::

    python -m benchmarks.scale_cinder --anchor ANCHOR_DIR \
        --anchor-home ANCHOR_HOME [--db mysql|mysqldb|postgresql] \
        [--scale 1] [--no-paging-all]

The driver: with ``--db mysql`` Cinder's ``cinder.conf`` names
``mysql+pymysql`` (as the anchor's does); with ``mysqldb`` plain ``mysql``,
the dialect's default driver (mysqlclient, installed into the anchor's venv
first, as ``scale_rig --db mysqldb`` runs Ashlar on it); with
``postgresql`` plain ``postgresql`` (psycopg in SQLAlchemy 2.1;
``tempest_anchor`` puts it in the anchor's venv).  The rows are loaded from
here through the test drivers.
"""

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

from benchmarks import attach_cycle
from benchmarks import scale_load
from benchmarks import scale_reads
from benchmarks import scale_rig
from benchmarks import side_by_side
from deploy.testbed import harness
from deploy.testbed.components import mysqlclient

#: dialect -> (URL the rows are loaded through, URL Cinder is given); each
#: takes the database's name.
URLS = {
    "mysql": ("mysql+pymysql://root@127.0.0.1/%s?charset=utf8mb4",
              "mysql+pymysql://root@127.0.0.1/%s?charset=utf8mb4"),
    "mysqldb": ("mysql+pymysql://root@127.0.0.1/%s?charset=utf8mb4",
                "mysql://root@127.0.0.1/%s?charset=utf8mb4"),
    "postgresql": ("postgresql+psycopg://postgres@127.0.0.1/%s",
                   "postgresql://postgres@127.0.0.1/%s")}
#: The database the servers are reached through to create and drop it.
SERVER_DB = {"mysql": "", "mysqldb": "", "postgresql": "postgres"}
DATABASE = "cinder_scale"
#: The anchor's backends: multiattach pools, and pools that are not.
BACKENDS = ("anchor_ma", "anchor_plain")
CHUNK = 5000
SAMPLES = 200


def _volume(i: int, vid: str, counts: scale_load.Counts, type_id: str,
            now: datetime.datetime) -> dict:
    attached = i < counts.attachments
    return {"id": vid, "created_at": now, "updated_at": now,
            "deleted": False, "use_quota": True, "user_id": "scale",
            "project_id": scale_load.project_id(i % counts.projects),
            "host": "anchor@ma#pool0", "size": 1,
            "availability_zone": "nova",
            "status": "in-use" if attached else "available",
            "attach_status": "attached" if attached else "detached",
            "display_name": "scale-%d" % i, "volume_type_id": type_id,
            "multiattach": True, "bootable": False}


def _attachment(i: int, vid: str, counts: scale_load.Counts,
                now: datetime.datetime) -> dict:
    host = "scale-host-%04d" % (i % counts.hosts)
    return {"id": str(uuid.uuid4()), "created_at": now, "updated_at": now,
            "deleted": False, "volume_id": vid,
            "instance_uuid": str(uuid.uuid4()), "attached_host": host,
            "mountpoint": "/dev/vdb", "attach_time": now,
            "attach_status": "attached", "attach_mode": "rw",
            "connection_info": json.dumps({"driver_volume_type": "local"}),
            "connector": json.dumps({"host": host, "initiator": host})}


def _snapshot(i: int, vid: str, counts: scale_load.Counts, type_id: str,
              now: datetime.datetime) -> dict:
    return {"id": str(uuid.uuid4()), "created_at": now, "updated_at": now,
            "deleted": False, "use_quota": True, "user_id": "scale",
            "project_id": scale_load.project_id(i % counts.projects),
            "volume_id": vid, "status": "available", "progress": "100%",
            "volume_size": 1, "volume_type_id": type_id,
            "display_name": "scale-snap-%d" % i}


def _service(i: int, now: datetime.datetime) -> dict:
    return {"created_at": now, "updated_at": now, "deleted": False,
            "uuid": str(uuid.uuid4()), "host": "scale-%04d@b" % i,
            "binary": "cinder-volume", "topic": "cinder-volume",
            "report_count": 1, "disabled": False,
            "availability_zone": "nova", "frozen": False,
            "replication_status": "not-capable"}


def load(engine: sa.Engine, counts: scale_load.Counts) -> scale_load.Loaded:
    """Insert the rows into Cinder's tables, of its default type."""
    meta = sa.MetaData()
    meta.reflect(engine, only=["volumes", "volume_attachment", "snapshots",
                               "services", "volume_types"])
    now = datetime.datetime.utcnow()
    vids = [str(uuid.uuid4()) for _ in range(counts.volumes)]
    with engine.connect() as conn:
        types = meta.tables["volume_types"]
        type_id = conn.execute(sa.select(types.c.id).where(
            types.c.name == "__DEFAULT__")).scalar_one()
    tables = (
        ("volumes", counts.volumes,
         lambda i: _volume(i, vids[i], counts, type_id, now)),
        ("volume_attachment", counts.attachments,
         lambda i: _attachment(i, vids[i], counts, now)),
        ("snapshots", counts.snapshots,
         lambda i: _snapshot(i, vids[i], counts, type_id, now)),
        ("services", counts.services, lambda i: _service(i, now)))
    seconds = {}
    for name, n, make in tables:
        started = time.perf_counter()
        with engine.begin() as conn:
            for first in range(0, n, CHUNK):
                conn.execute(meta.tables[name].insert(), [
                    make(i) for i in range(first, min(n, first + CHUNK))])
        seconds[name] = round(time.perf_counter() - started, 1)

    def spread(last: int) -> list[tuple[str, str]]:
        step = max(1, last // SAMPLES)
        return [(scale_load.project_id(i % counts.projects), vids[i])
                for i in range(0, last, step)][:SAMPLES]
    return scale_load.Loaded(counts, seconds, spread(counts.attachments),
                             spread(counts.volumes))


class Heartbeat(threading.Thread):
    """Keeps the loaded services up: one UPDATE every ``interval``."""

    def __init__(self, engine: sa.Engine, interval: float = 10.0) -> None:
        super().__init__(daemon=True, name="scale-heartbeat")
        self.engine = engine
        self.interval = interval
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            with self.engine.begin() as conn:
                conn.execute(sa.text(
                    "UPDATE services SET updated_at = :now, "
                    "report_count = report_count + 1 "
                    "WHERE host LIKE 'scale-%'"),
                    {"now": datetime.datetime.utcnow()})


@contextlib.contextmanager
def database(args: argparse.Namespace, work: pathlib.Path
             ) -> Iterator[tuple[pathlib.Path, sa.Engine]]:
    """A fresh ``cinder_scale`` database on ``args.db`` synced by
    cinder-manage, and the anchor's cinder.conf pointed at it; dropped at
    the end."""
    ours, cinders = URLS[args.db]
    if args.db == "mysqldb":
        mysqlclient.install(str(args.anchor_home / "venv" / "bin" /
                                "python"))
    conf = work / "cinder.conf"
    text = (args.anchor / "etc" / "cinder.conf").read_text()
    transport, remove_vhost = harness.broker_vhost()
    conf.write_text(text.replace(
        side_by_side.CINDER_URLS["mysql"], cinders % DATABASE).replace(
        "rabbit://guest:guest@127.0.0.1:5672/", transport))
    try:
        drop = side_by_side.synced_database(
            args, conf, ours % SERVER_DB[args.db], DATABASE)
    except BaseException:
        remove_vhost()
        raise
    engine = sa.create_engine(ours % DATABASE)
    try:
        yield conf, engine
    finally:
        engine.dispose()
        remove_vhost()
        if not args.keep:
            drop()


def emit(records: list[dict], record: dict) -> dict:
    return scale_rig.emit(records, dict(record, side="cinder"))


def measure_loaded(args: argparse.Namespace, anchor: side_by_side.Anchor,
                   loaded: scale_load.Loaded, base: str, p0: str,
                   empty: list[dict], records: list[dict]) -> None:
    """The reads, paging, the scenarios again and the boot storm."""
    procs = scale_reads.process_tree(
        int((anchor.state / "run" / "api.pid").read_text()))
    project = scale_load.project_id(0)
    for rec in scale_reads.reads(procs, base, loaded, args.reads, 0.0):
        emit(records, rec)
    emit(records, scale_reads.page_to_end(procs, base, project, {}, 20, 0.0))
    if not args.no_paging_all:
        emit(records, scale_reads.page_to_end(
            procs, base, project, {"all_tenants": 1}, 1000, 0.0))
    now = scale_rig.scenarios(p0, args, BACKENDS)
    scale_rig.compare(records, "loaded", [dict(r, side="cinder")
                                          for r in now], empty)
    for rec in scale_rig.boot_storm(p0, args.storm_volumes,
                                    args.storm_hosts, BACKENDS[0]):
        emit(records, {"phase": "loaded", **rec})


def run(args: argparse.Namespace) -> list[dict]:
    counts = scale_load.Counts().scaled(args.scale, None)
    work = pathlib.Path(tempfile.mkdtemp(prefix="scale-cinder-"))
    # NOTE(ashlar): a state folder and port of its own, so that another
    # anchor (side_by_side, tempest_anchor) may run beside it.
    os.environ.setdefault("STATE", str(work / "state"))
    os.environ.setdefault("PORT", str(args.port))
    records: list[dict] = []
    with database(args, work) as (conf, engine):
        anchor = side_by_side.Anchor(args, work, 0)
        anchor.env["CONF"] = anchor.conf = str(conf)
        anchor.start()
        heartbeat = Heartbeat(engine)
        base = anchor.endpoint.rsplit("/", 1)[0]
        p0 = "%s/%s" % (base, scale_load.project_id(0))
        try:
            # NOTE: warm the processes first, as the rig does.
            attach_cycle.run(p0, 16, 4, {"volume_backend_name": BACKENDS[0]})
            empty = [emit(records, {"phase": "empty", **r})
                     for r in scale_rig.scenarios(p0, args, BACKENDS)]
            started = time.perf_counter()
            loaded = load(engine, counts)
            emit(records, {"figure": "load", "db": args.db, "seconds": round(
                time.perf_counter() - started, 1), "rows": counts.volumes
                + counts.attachments + counts.snapshots + counts.services,
                "counts": vars(counts), "per_table_s": loaded.seconds})
            heartbeat.start()
            measure_loaded(args, anchor, loaded, base, p0, empty, records)
        finally:
            heartbeat.stopping.set()
            anchor.stop()
    shutil.rmtree(work, ignore_errors=True)
    return records


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--anchor", type=pathlib.Path, required=True)
    p.add_argument("--anchor-home", type=pathlib.Path, required=True)
    p.add_argument("--db", choices=sorted(URLS), default="mysql")
    p.add_argument("--scale", type=float, default=1.0,
                   help="times the row counts (0.1: a tenth)")
    p.add_argument("--port", type=int, default=8786)
    p.add_argument("--reads", type=int, default=50)
    scale_rig.scenario_args(p)
    p.add_argument("--no-paging-all", action="store_true")
    p.add_argument("--keep", action="store_true",
                   help="keep the cinder_scale database")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    print(scale_rig.table(run(parse_args(argv))))


if __name__ == "__main__":
    main()
