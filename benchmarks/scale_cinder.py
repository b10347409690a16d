"""Cinder 29 (the anchor) loaded to the scale rig's row counts.

The anchor runs on a database of its own (``cinder_scale`` on the
machine's MariaDB, synced with ``cinder-manage db sync``, dropped at the
end) through a copy of its ``cinder.conf``; it is measured empty, then
loaded straight into its tables (volumes in many projects, attachments
over many hosts, snapshots, and volume services whose ``updated_at`` a
heartbeat thread keeps fresh), then measured again: the reads of
:mod:`benchmarks.scale_reads` with the CPU of ``cinder-api``, and the
anchor's ``bench.py`` scenarios (S1, S2, S3, S4) on the loaded database::

    python -m benchmarks.scale_cinder --anchor ANCHOR_DIR \\
        --anchor-home ANCHOR_HOME [--scale 1.0] [--scenarios s1,s2,s3,s4]

The capability reports of the loaded services are not sent (Cinder's
scheduler would keep them in memory, which the reads do not touch); the
loaded services are up, so ``GET /os-services`` and the scheduler's
service reads see them.  One JSON line per figure on standard output.
"""

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

from benchmarks import scale_reads
from benchmarks import side_by_side
from deploy.testbed import harness

ROOT_URL = "mysql+pymysql://root@127.0.0.1/%s?charset=utf8mb4"
DATABASE = "cinder_scale"
PROJECT = "bench"
CHUNK = 5000


def project(i: int) -> str:
    """The loaded projects' ids: hex, as Cinder's routes want them."""
    return "5ca1e%027x" % i


def _rows(n: int, make) -> Iterator[list[dict]]:
    """``make(i)`` for i in range(n), in chunks of CHUNK."""
    for start in range(0, n, CHUNK):
        yield [make(i) for i in range(start, min(n, start + CHUNK))]


class Counts:
    """The rig's row counts at ``scale`` (1.0: the issue's)."""

    def __init__(self, scale: float) -> None:
        self.volumes = int(100_000 * scale)
        self.projects = max(1, int(1_000 * scale))
        self.attachments = int(20_000 * scale)
        self.hosts = max(1, int(2_000 * scale))
        self.snapshots = int(5_000 * scale)
        self.services = max(1, int(1_000 * scale))


def load(engine: sa.Engine, counts: Counts, type_id: str) -> dict:
    """Insert the rows; return the ids the reads sample."""
    meta = sa.MetaData()
    meta.reflect(engine, only=["volumes", "volume_attachment", "snapshots",
                               "services"])
    now = datetime.datetime.utcnow()
    vids = [str(uuid.uuid4()) for _ in range(counts.volumes)]

    def volume(i: int) -> dict:
        attached = i < counts.attachments
        return {"id": vids[i], "created_at": now, "updated_at": now,
                "deleted": False, "use_quota": True,
                "user_id": "scale", "project_id": project(
                    i % counts.projects), "host": "anchor@ma#ma",
                "size": 1, "availability_zone": "nova",
                "status": "in-use" if attached else "available",
                "attach_status": "attached" if attached else "detached",
                "display_name": "scale-%d" % i, "volume_type_id": type_id,
                "multiattach": True, "bootable": False}

    def attachment(i: int) -> dict:
        host = "scale-host-%04d" % (i % counts.hosts)
        return {"id": str(uuid.uuid4()), "created_at": now,
                "updated_at": now, "deleted": False, "volume_id": vids[i],
                "instance_uuid": str(uuid.uuid4()), "attached_host": host,
                "mountpoint": "/dev/vdb", "attach_time": now,
                "attach_status": "attached", "attach_mode": "rw",
                "connection_info": json.dumps({"driver_volume_type": "local"}),
                "connector": json.dumps({"host": host, "initiator": host})}

    def snapshot(i: int) -> dict:
        return {"id": str(uuid.uuid4()), "created_at": now,
                "updated_at": now, "deleted": False, "use_quota": True,
                "user_id": "scale", "project_id": project(
                    i % counts.projects), "volume_id": vids[i],
                "status": "available", "progress": "100%",
                "volume_size": 1, "volume_type_id": type_id,
                "display_name": "scale-snap-%d" % i}

    def service(i: int) -> dict:
        return {"created_at": now, "updated_at": now, "deleted": False,
                "uuid": str(uuid.uuid4()), "host": "scale-%04d@b" % i,
                "binary": "cinder-volume", "topic": "cinder-volume",
                "report_count": 1, "disabled": False,
                "availability_zone": "nova", "frozen": False,
                "replication_status": "not-capable"}

    with engine.begin() as conn:
        for name, n, make in (("volumes", counts.volumes, volume),
                              ("volume_attachment", counts.attachments,
                               attachment),
                              ("snapshots", counts.snapshots, snapshot),
                              ("services", counts.services, service)):
            for chunk in _rows(n, make):
                conn.execute(meta.tables[name].insert(), chunk)
    return {"volume_ids": vids[::max(1, len(vids) // 200)][:200],
            "attached_ids": vids[:counts.attachments:max(
                1, counts.attachments // 200)][:200],
            "projects": [project(i) for i in range(
                0, counts.projects, max(1, counts.projects // 20))]}


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
                    "UPDATE services SET updated_at = UTC_TIMESTAMP(), "
                    "report_count = report_count + 1 "
                    "WHERE host LIKE 'scale-%%'"))


@contextlib.contextmanager
def database(args: argparse.Namespace, work: pathlib.Path
             ) -> Iterator[tuple[pathlib.Path, sa.Engine]]:
    """A fresh ``cinder_scale`` database synced by cinder-manage, and the
    anchor's cinder.conf pointed at it; dropped at the end."""
    server = sa.create_engine(ROOT_URL % "", isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(sa.text("DROP DATABASE IF EXISTS %s" % DATABASE))
        conn.execute(sa.text("CREATE DATABASE %s" % DATABASE))
    conf = work / "cinder.conf"
    text = (args.anchor / "etc" / "cinder.conf").read_text()
    transport, remove_vhost = harness.broker_vhost()
    conf.write_text(text.replace(
        "mysql+pymysql://cinder:cinder@127.0.0.1/cinder?charset=utf8mb4",
        ROOT_URL % DATABASE).replace(
        "rabbit://guest:guest@127.0.0.1:5672/", transport))
    subprocess.run([str(args.anchor_home / "venv" / "bin" / "cinder-manage"),
                    "--config-file", str(conf), "db", "sync"], check=True,
                   capture_output=True, timeout=600)
    engine = sa.create_engine(ROOT_URL % DATABASE)
    try:
        yield conf, engine
    finally:
        engine.dispose()
        remove_vhost()
        if not args.keep:
            with server.connect() as conn:
                conn.execute(sa.text("DROP DATABASE IF EXISTS %s"
                                     % DATABASE))
        server.dispose()


def measure(label: str, anchor: side_by_side.Anchor, sample: dict,
            args: argparse.Namespace) -> list[dict]:
    """The reads and the bench scenarios, each record tagged ``label``."""
    api = [int((anchor.state / "run" / "api.pid").read_text())]
    records = scale_reads.measure(anchor.endpoint, sample, api,
                                  repeat=args.repeat)
    records += scale_reads.bench_scenarios(
        args.anchor / "bench.py", anchor.endpoint, args.scenarios,
        args.s3_cycles)
    for record in records:
        record.update(side="cinder", db=label)
        print(json.dumps(record), flush=True)
    return records


def run(args: argparse.Namespace) -> list[dict]:
    counts = Counts(args.scale)
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
        try:
            type_id = scale_reads.default_type(anchor.endpoint)
            empty = scale_reads.sample_of(anchor.endpoint)
            records += measure("empty", anchor, empty, args)
            seconds, sample = scale_reads.timed(
                lambda: load(engine, counts, type_id))
            print(json.dumps({"side": "cinder", "figure": "load",
                              "seconds": round(seconds, 1),
                              **vars(counts)}), flush=True)
            heartbeat.start()
            records += measure("loaded", anchor, sample, args)
        finally:
            heartbeat.stopping.set()
            anchor.stop()
    shutil.rmtree(work, ignore_errors=True)
    return records


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--anchor", type=pathlib.Path, required=True)
    p.add_argument("--anchor-home", type=pathlib.Path, required=True)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--port", type=int, default=8786)
    p.add_argument("--scenarios", default="s1,s2,s3,s4")
    p.add_argument("--s3-cycles", type=int, default=100)
    p.add_argument("--keep", action="store_true",
                   help="keep the cinder_scale database")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    records = run(parse_args(argv))
    print(scale_reads.table(records), file=sys.stderr)


if __name__ == "__main__":
    main()
