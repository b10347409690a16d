"""Rows loaded straight into an Ashlar database, for the scale rig.

Bulk INSERTs through SQLAlchemy Core on the project's own tables
(``common.db.models``), every column the API reads set, the counters
(``attachment_count``, ``writer_count``, ``snapshot_count``) consistent
with the rows: volumes spread over projects, attachments (one host
attaches ``attachments / hosts`` volumes), snapshots, and the service rows
of simulated volume services.  Quotas stay lifted (the deployment's
``quota_volumes = -1``, as the anchor lifts them); usage is counted from
these rows, so it is consistent by construction.
"""

import dataclasses
import datetime
import json
import time
import uuid

import sqlalchemy as sa

from common.db import models

BATCH = 5000
#: The zone, host and backend the loaded volumes live on: a simulated
#: service's (none of the real volume node's).
ZONE = "nova"


@dataclasses.dataclass
class Counts:
    """How many rows of each kind to load."""

    volumes: int = 100_000
    projects: int = 1_000
    attachments: int = 20_000
    hosts: int = 2_000
    snapshots: int = 5_000
    services: int = 1_000

    def scaled(self, factor: float, services: int | None) -> "Counts":
        """These counts times ``factor`` (at least one of each);
        ``services``: the simulated services' count, not scaled."""
        def times(n: int) -> int:
            return max(1, int(round(n * factor)))
        return Counts(times(self.volumes), times(self.projects),
                      times(self.attachments), times(self.hosts),
                      times(self.snapshots),
                      self.services if services is None else services)


def project_id(index: int) -> str:
    """The loaded project number ``index``'s id (32 hex digits)."""
    return "5ca1e%027x" % index


def service_host(index: int) -> str:
    """``host@backend`` of simulated volume service ``index``."""
    return "sim-%04d@b%d" % (index, index)


@dataclasses.dataclass
class Loaded:
    """What was loaded: counts, seconds per table, and samples to read."""

    counts: Counts
    seconds: dict[str, float]
    attached: list[tuple[str, str]]  # (project, volume) with an attachment
    volumes: list[tuple[str, str]]   # (project, volume), spread evenly


def _insert(conn: sa.Connection, table: sa.Table, rows: list[dict]) -> None:
    for start in range(0, len(rows), BATCH):
        conn.execute(table.insert(), rows[start:start + BATCH])


def _volume_rows(counts: Counts, type_id: str, now: datetime.datetime
                 ) -> list[dict]:
    """One row per volume; volume ``i`` belongs to project ``i % projects``
    and was made ``volumes - i`` seconds ago (distinct, as real ones)."""
    rows = []
    every = max(1, counts.volumes // counts.snapshots)
    for i in range(counts.volumes):
        svc = i % counts.services
        made = now - datetime.timedelta(seconds=counts.volumes - i)
        attached = i < counts.attachments
        rows.append({
            "id": str(uuid.UUID(int=(0x5CA1E << 96) + i)),
            "project_id": project_id(i % counts.projects),
            "user_id": "loader", "display_name": "vol-%d" % i,
            "display_description": None, "size": 1 + i % 10,
            "status": "in-use" if attached else "available",
            "previous_status": None,
            "attach_status": "attached" if attached else "detached",
            "migration_status": None,
            "host": "%s#p%d" % (service_host(svc), i % 10),
            "cluster_name": None, "availability_zone": ZONE,
            "volume_type_id": type_id, "multiattach": False,
            "bootable": False, "readonly": False, "encrypted": False,
            "provider_location": None, "service_uuid": None,
            "error_reason": None, "attachment_count": int(attached),
            "writer_count": int(attached), "pending_size": None,
            "pending_type_id": None, "snapshot_id": None,
            "source_volid": None,
            "snapshot_count": int(i % every == 0
                                  and i // every < counts.snapshots),
            "group_id": None, "created_at": made, "updated_at": made})
    return rows


def _attachment_rows(counts: Counts, volumes: list[dict],
                     now: datetime.datetime) -> list[dict]:
    """Volumes 0 .. attachments-1 attached read-write, each by one host
    (host ``i % hosts``), completed."""
    info = json.dumps({"driver_volume_type": "file",
                       "data": {"device_path": "/dev/null"}})
    return [{
        "id": str(uuid.UUID(int=(0xA77AC << 96) + i)),
        "volume_id": volumes[i]["id"], "instance_uuid": str(uuid.uuid4()),
        "attached_host": "compute-%04d" % (i % counts.hosts),
        "mountpoint": "/dev/vdb", "attach_status": "attached",
        "attach_mode": "rw", "connection_info": info, "attach_time": now,
        "detach_time": None, "transition": None, "fenced_at": None,
        "fenced_clients": None, "clients": None, "lease_expires_at": None,
        "agent_made": False, "created_at": volumes[i]["created_at"],
        "updated_at": now} for i in range(counts.attachments)]


def _snapshot_rows(volumes: list[dict]) -> list[dict]:
    """A snapshot of each volume whose ``snapshot_count`` is 1."""
    return [{
        "id": str(uuid.UUID(int=(0x5AA95 << 96) + i)),
        "volume_id": vol["id"], "project_id": vol["project_id"],
        "user_id": "loader", "status": "available", "progress": "100%",
        "volume_size": vol["size"], "display_name": "snap-%d" % i,
        "display_description": None, "provider_location": None,
        "error_reason": None, "group_snapshot_id": None,
        "created_at": vol["created_at"], "updated_at": vol["created_at"]}
        for i, vol in enumerate(v for v in volumes if v["snapshot_count"])]


def _service_rows(counts: Counts, now: datetime.datetime) -> list[dict]:
    return [{"uuid": str(uuid.uuid4()), "host": service_host(i),
             "binary": "ashlar-volume", "topic": "ashlar-volume",
             "availability_zone": ZONE, "disabled": False,
             "disabled_reason": None, "heartbeat_at": now,
             "version": None, "cluster_name": None, "created_at": now,
             "updated_at": now} for i in range(counts.services)]


def load(db_url: str, counts: Counts, samples: int = 200) -> Loaded:
    """Load ``counts`` rows into the database at ``db_url`` (migrated,
    holding its ``__DEFAULT__`` type) and ``ANALYZE`` the tables."""
    engine = sa.create_engine(db_url)
    seconds: dict[str, float] = {}
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None,
                                                      microsecond=0)
    try:
        with engine.begin() as conn:
            type_id = conn.execute(sa.select(models.VolumeType.id).where(
                models.VolumeType.name == "__DEFAULT__")).scalar_one()
        started = time.perf_counter()
        volumes = _volume_rows(counts, type_id, now)
        tables = [("services", models.Service.__table__,
                   _service_rows(counts, now)),
                  ("volumes", models.Volume.__table__, volumes),
                  ("attachments", models.VolumeAttachment.__table__,
                   _attachment_rows(counts, volumes, now)),
                  ("snapshots", models.Snapshot.__table__,
                   _snapshot_rows(volumes))]
        seconds["build_rows"] = time.perf_counter() - started
        for name, table, rows in tables:
            started = time.perf_counter()
            with engine.begin() as conn:
                _insert(conn, table, rows)
            seconds[name] = time.perf_counter() - started
        started = time.perf_counter()
        _analyze(engine, [t.name for _n, t, _r in tables])
        seconds["analyze"] = time.perf_counter() - started
    finally:
        engine.dispose()
    step = max(1, counts.attachments // samples)
    attached = [(v["project_id"], v["id"])
                for v in volumes[:counts.attachments:step]]
    step = max(1, counts.volumes // samples)
    return Loaded(counts, {k: round(v, 2) for k, v in seconds.items()},
                  attached, [(v["project_id"], v["id"])
                             for v in volumes[::step]])


def _analyze(engine: sa.Engine, tables: list[str]) -> None:
    """Fresh planner statistics, as autovacuum or InnoDB's would be."""
    with engine.connect().execution_options(
            isolation_level="AUTOCOMMIT") as conn:
        for table in tables:
            conn.exec_driver_sql("ANALYZE %s" % (
                table if engine.dialect.name == "postgresql"
                else "TABLE " + table))


def heartbeat(db_url: str, counts: Counts, up: bool = True) -> None:
    """Stamp every simulated service's heartbeat now (one UPDATE); not
    ``up``: a day ago, so that they count as down."""
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    table = models.Service.__table__
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    if not up:
        now -= datetime.timedelta(days=1)
    with engine.begin() as conn:
        conn.execute(table.update().where(table.c.host.like("sim-%"))
                     .values(heartbeat_at=now))
    engine.dispose()
