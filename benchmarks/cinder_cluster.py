"""Cinder 29 (the anchor's venv) in active-active on Ceph RBD, for the
failover campaign side by side with Ashlar (issue 39).

``CinderCluster`` starts real ``cinder-api`` (noauth, eventlet WSGI with
``api_workers`` workers), ``cinder-scheduler`` and ``members`` (2)
``cinder-volume`` processes, each its own ``host`` (``member0``,
``member1``, ...) and all in one ``cluster`` (``c1``), with Cinder's own
RBD driver (the anchor's ``rbd/cinder-rbd.conf`` backend, on the given
Ceph pool and cephx user) and tooz on ``coordination_url`` (etcd:
``etcd3+http://``, tooz's etcd3gw driver, in the anchor's venv).  It runs
on a fresh RabbitMQ vhost and a fresh MariaDB database of the machine's
servers (``deploy/testbed/harness.py``), or on the ``transport_url`` and
``db_url`` given (left as they are at the end); quotas are lifted as the
anchor lifts them.  Configs, state and logs are in ``workdir``.  It is
ready once the API answers, the scheduler and every member are ``up``,
and the cluster's pool is listed::

    with CinderCluster(anchor_dir, anchor_home, workdir,
                       ceph_conf=ceph.conf, ceph_keyring=ceph.keyring(user),
                       ceph_user=user, ceph_pool=ceph.pool,
                       coordination_url=etcd.tooz_url()) as cinder:
        client = cinder.client()   # harness.Client, noauth admin, HEADERS
        cinder.kill_member(0)                      # kill -9, its group
        cinder.cleanup_workers()                   # POST /workers/cleanup
        cinder.start_member(0)

Served until Ctrl-C (it prints the endpoint)::

    python -m benchmarks.cinder_cluster serve --anchor ANCHOR_DIR \\
        --anchor-home ANCHOR_HOME --ceph-conf C --keyring K \\
        --coordination etcd3+http://127.0.0.1:2379 [--user cinder] \\
        [--pool volumes] [--members 2] [--service-down-time 60] \\
        [--report-interval 10]

The anchor's venv needs, beyond its ``requirements-anchor.txt``,
``etcd3gw`` and the ``rados``/``rbd`` bindings linked in (its
``rbd/README.md``); ``available()`` says what is missing.
"""

import argparse
import configparser
import io
import os
import pathlib
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from deploy.testbed import harness

#: The project of the endpoint: noauth takes it from ``X-Auth-Token:
#: admin:<project>`` (any user is admin there); the URL's must match
#: Cinder's ``project_id_regex`` (``[0-9a-f-]+``).
PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
#: Headers a client of the endpoint sends with every request besides
#: ``harness.Client``'s: since bug #2004555 Cinder lets only a service
#: (Nova's service token; in noauth this header) delete an attachment
#: that has an instance and a connection, and without it asks Nova, which
#: here is an HTTP 500 (the anchor's RESULTS.md, finding 3).  Nothing else
#: reads it.
HEADERS = {"X-Service-Roles": "service"}
CLUSTER = "c1"
#: The backend section of the members (Cinder's RBD driver).
BACKEND = "rbd"
#: The anchor's section its RBD backend is copied from.
ANCHOR_BACKEND = "rbd_ma"
#: The anchor's per-project quotas, lifted as it lifts them.
QUOTAS = ("quota_volumes", "quota_snapshots", "quota_gigabytes",
          "quota_backups", "quota_backup_gigabytes", "quota_groups")
#: Microversion of ``POST /workers/cleanup`` (Cinder's WORKERS_CLEANUP);
#: ``cluster`` in ``os-services`` is from 3.7.
WORKERS_CLEANUP = "3.24"
SERVICES_VERSION = "3.7"
VOLUME_ROWS = (
    "SELECT v.id, v.status, v.host, (SELECT COUNT(*) FROM volume_attachment "
    "a WHERE a.volume_id = v.id AND a.deleted = 0) AS attachment_count "
    "FROM volumes v WHERE v.deleted = 0")
ATTACHMENT_ROWS = ("SELECT id, volume_id, attach_status, NULL AS transition "
                   "FROM volume_attachment WHERE deleted = 0")
READY_TIMEOUT = 180.0
STOP_TIMEOUT = 20.0


def _read(path: pathlib.Path | None = None) -> configparser.ConfigParser:
    """An ini file as configparser reads it, names as written (None: an
    empty one)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    if path is not None:
        parser.read(path)
    return parser


def _text(parser: configparser.ConfigParser) -> str:
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def available(anchor_home: pathlib.Path | str) -> str:
    """``cinder <version>``; ``harness.Unavailable`` if the anchor's venv
    lacks Cinder, tooz's etcd3gw driver or the Ceph bindings."""
    python = pathlib.Path(anchor_home) / "venv" / "bin" / "python"
    try:
        return "cinder " + subprocess.run(
            [str(python), "-c", "import importlib.metadata as m, etcd3gw, "
             "rados, rbd, tooz; print(m.version('cinder'))"],
            check=True, text=True, capture_output=True,
            timeout=120).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        harness.unavailable(
            "the anchor's venv %s with etcd3gw and the rados/rbd bindings "
            "(its RESULTS.md \"Setup\", `pip install etcd3gw`, and the links "
            "of its rbd/README.md)" % python.parent.parent,
            RuntimeError(getattr(exc, "stderr", None) or exc))


class CinderCluster:
    """Cinder's api, scheduler and clustered volume members, in processes
    of their own (each its own session: a kill reaches its children)."""

    def __init__(self, anchor_dir: pathlib.Path | str,
                 anchor_home: pathlib.Path | str,
                 workdir: pathlib.Path | str, *, ceph_conf: pathlib.Path | str,
                 ceph_keyring: pathlib.Path | str, ceph_user: str,
                 ceph_pool: str, coordination_url: str, members: int = 2,
                 service_down_time: int = 60, report_interval: int = 10,
                 rpc_response_timeout: int = 60, api_workers: int = 2,
                 transport_url: str | None = None,
                 db_url: str | None = None, debug: bool = False) -> None:
        """:param ceph_user: the cephx user without ``client.``.
        :param transport_url, db_url: a broker and an empty database to use
            instead of a fresh vhost and database on the machine's servers.
        """
        self.anchor = pathlib.Path(anchor_dir)
        self.venv = pathlib.Path(anchor_home) / "venv"
        self.dir = pathlib.Path(workdir)
        self.ceph = (pathlib.Path(ceph_conf), pathlib.Path(ceph_keyring),
                     ceph_user, ceph_pool)
        self.coordination_url = coordination_url
        self.members = members
        self.options = {"service_down_time": service_down_time,
                        "report_interval": report_interval,
                        "rpc_response_timeout": rpc_response_timeout,
                        "osapi_volume_workers": api_workers,
                        "debug": str(debug).lower()}
        self.transport_url = transport_url
        self.db_url = db_url
        self.port = harness.free_port()
        self.endpoint = "http://127.0.0.1:%d/v3/%s" % (self.port, PROJECT)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.cleanups: list[Callable[[], Any]] = []

    # -- the deployment ----------------------------------------------------
    def __enter__(self) -> "CinderCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> float:
        """Broker, database, configs, ``db sync`` and every process; the
        seconds until ready (from the processes' start)."""
        available(self.venv.parent)
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.transport_url is None:
            self.transport_url, remove = harness.broker_vhost()
            self.cleanups.append(remove)
        if self.db_url is None:
            url, drop = harness.database("mysql")
            self.cleanups.append(drop)
            self.db_url = sa.engine.make_url(url).update_query_dict(
                {"charset": "utf8mb4"}).render_as_string(hide_password=False)
        self.write_configs()
        subprocess.run([str(self.venv / "bin" / "cinder-manage"),
                        "--config-file", str(self.conf), "db", "sync"],
                       check=True, capture_output=True, timeout=300)
        started = time.monotonic()
        self._spawn("scheduler", "scheduler")
        for index in range(self.members):
            self.start_member(index, wait=False)
        self._spawn("api", "api")
        harness.wait_for(self._ready, timeout=READY_TIMEOUT, interval=0.5,
                         what="Cinder's api, scheduler, %d members up and "
                         "the pool (logs in %s)" % (self.members, self.dir))
        return time.monotonic() - started

    @property
    def conf(self) -> pathlib.Path:
        return self.dir / "cinder.conf"

    def member_host(self, index: int) -> str:
        """The ``host`` of member ``index`` (its service: ``<host>@rbd``)."""
        return "member%d" % index

    def write_configs(self) -> None:
        """cinder.conf (shared), a ceph.conf naming the keyring, and one
        file per member (its host and the cluster)."""
        conf, keyring, user, pool = self.ceph
        ceph = _read(conf)
        ceph["client.%s" % user] = {"keyring": str(keyring)}
        (self.dir / "ceph.conf").write_text(_text(ceph))
        anchor = _read(self.anchor / "rbd" / "cinder-rbd.conf")
        etc = self.anchor / "etc"
        parser = _read()
        parser["DEFAULT"] = {
            "auth_strategy": "noauth", "transport_url": self.transport_url
            or "", "host": "control", "my_ip": "127.0.0.1",
            "osapi_volume_listen": "127.0.0.1",
            "osapi_volume_listen_port": str(self.port),
            "enabled_backends": BACKEND, "state_path": str(self.dir / "state"),
            "api_paste_config": str(etc / "api-paste.ini"),
            "resource_query_filters_file": str(etc / "resource_filters.json"),
            **{name: str(value) for name, value in self.options.items()},
            **{name: "-1" for name in QUOTAS}}
        parser["database"] = {"connection": self.db_url or ""}
        parser["oslo_messaging_notifications"] = {"driver": "noop"}
        parser["oslo_concurrency"] = {"lock_path": str(self.dir / "lock")}
        parser["coordination"] = {"backend_url": self.coordination_url}
        parser[BACKEND] = dict(anchor[ANCHOR_BACKEND])
        parser[BACKEND].update({"rbd_pool": pool, "rbd_user": user,
                                "rbd_ceph_conf": str(self.dir / "ceph.conf"),
                                "volume_backend_name": BACKEND})
        self.conf.write_text(_text(parser))
        for index in range(self.members):
            (self.dir / ("member%d.conf" % index)).write_text(
                "[DEFAULT]\nhost = %s\ncluster = %s\n"
                % (self.member_host(index), CLUSTER))

    def _spawn(self, name: str, service: str,
               extra: pathlib.Path | None = None) -> None:
        command = [str(self.venv / "bin" / ("cinder-" + service)),
                   "--config-file", str(self.conf)]
        if extra is not None:
            command += ["--config-file", str(extra)]
        command += ["--log-file", str(self.dir / ("%s.log" % name))]
        with open(self.dir / ("%s.out" % name), "ab") as out:
            self.procs[name] = subprocess.Popen(
                command, cwd=self.dir, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)

    def _ready(self) -> bool:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise harness.Unavailable("cinder %s exited (%s); see %s" % (
                    name, proc.returncode, self.dir / ("%s.log" % name)))
        up = {(s["binary"], s["host"]) for s in self.services()
              if s["state"] == "up"}
        wanted = {("cinder-scheduler", "control")} | {
            ("cinder-volume", "%s@%s" % (self.member_host(i), BACKEND))
            for i in range(self.members)}
        return wanted <= up and bool(self.pools())

    # -- the members -------------------------------------------------------
    def kill_member(self, index: int) -> None:
        """kill -9 of member ``index``: its parent and its backend's child
        (one process group)."""
        proc = self.procs.pop("member%d" % index)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=STOP_TIMEOUT)

    def start_member(self, index: int, wait: bool = True) -> None:
        """Start member ``index``; ``wait``: until it has reported itself
        (its service's ``updated_at`` moved and it is ``up``)."""
        name = "member%d" % index
        if name in self.procs and self.procs[name].poll() is None:
            raise RuntimeError("%s is running" % name)
        host = "%s@%s" % (self.member_host(index), BACKEND)
        before = self._updated_at(host) if wait else None
        self._spawn(name, "volume", self.dir / ("%s.conf" % name))
        if wait:
            harness.wait_for(lambda: self._reported(host, before),
                             timeout=READY_TIMEOUT, interval=0.5,
                             what="%s to report (log %s)" % (
                                 host, self.dir / ("%s.log" % name)))

    def member_alive(self, index: int) -> bool:
        proc = self.procs.get("member%d" % index)
        return proc is not None and proc.poll() is None

    def _updated_at(self, host: str) -> str | None:
        return next((s["updated_at"] for s in self.services()
                     if s["host"] == host), None)

    def _reported(self, host: str, before: str | None) -> bool:
        return any(s["host"] == host and s["state"] == "up"
                   and s["updated_at"] != before for s in self.services())

    # -- the API -----------------------------------------------------------
    def client(self, version: str = "3.60") -> harness.Client:
        """A client of the endpoint (noauth admin of ``PROJECT``, with
        ``HEADERS``)."""
        return harness.Client(self.endpoint, version=version,
                              headers=HEADERS)

    def services(self) -> list[dict[str, Any]]:
        """``os-services``: binary, host, cluster, state, status,
        updated_at of each service."""
        resp = self.client(SERVICES_VERSION).get("/os-services")
        resp.raise_for_status()
        return [{key: s.get(key) for key in ("binary", "host", "cluster",
                                             "state", "status", "updated_at")}
                for s in resp.json()["services"]]

    def pools(self) -> list[str]:
        resp = self.client().get("/scheduler-stats/get_pools")
        resp.raise_for_status()
        return [p["name"] for p in resp.json()["pools"]]

    def cleanup_workers(self, **filters: Any) -> dict[str, list[dict]]:
        """``POST /workers/cleanup`` (3.24) with ``filters`` (``cluster_name``,
        ``host``, ``is_up``, ``resource_id``, ...; none: every service that
        is down): ``{"cleaning": [...], "unavailable": [...]}``, the
        services asked to clean up and those that none could."""
        resp = self.client(WORKERS_CLEANUP).post("/workers/cleanup",
                                                 filters)
        if resp.status_code != 202:
            raise RuntimeError("workers/cleanup: %d %s"
                               % (resp.status_code, resp.text))
        return resp.json()

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        """Live rows (Cinder soft-deletes: ``deleted = 0``) shaped as
        ``fault_campaign.Campaign.rows`` gives Ashlar's: volumes (id,
        status, host, attachment_count: their live attachments, as Cinder
        keeps no counter) and attachments (id, volume_id, attach_status,
        transition: always None, Cinder has none)."""
        engine = sa.create_engine(self.db_url or "", poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                return {"volumes": [dict(r._mapping) for r in conn.execute(
                    sa.text(VOLUME_ROWS))], "attachments": [
                    dict(r._mapping) for r in conn.execute(
                        sa.text(ATTACHMENT_ROWS))]}
        finally:
            engine.dispose()

    def log(self, name: str) -> str:
        """The log of ``api``, ``scheduler`` or ``member<i>``."""
        path = self.dir / ("%s.log" % name)
        return path.read_text(errors="replace") if path.exists() else ""

    # -- the end -----------------------------------------------------------
    def stop(self) -> None:
        """SIGTERM each process's group (SIGKILL after a grace), then drop
        the vhost and database this made."""
        for name in list(self.procs):
            proc = self.procs.pop(name)
            if proc.poll() is not None:
                continue
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=STOP_TIMEOUT)
        while self.cleanups:
            try:
                self.cleanups.pop()()
            except Exception as exc:  # noqa: BLE001 - clean up the rest
                print("cleanup failed: %r" % exc, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--anchor", type=pathlib.Path, required=True,
                        help="the anchor's folder (etc/, rbd/, RESULTS.md)")
    parser.add_argument("--anchor-home", type=pathlib.Path,
                        default=os.environ.get("ANCHOR_HOME"),
                        help="the anchor's home (its venv)")
    parser.add_argument("--ceph-conf", required=True)
    parser.add_argument("--keyring", required=True)
    parser.add_argument("--user", default="cinder",
                        help="the cephx user, without client.")
    parser.add_argument("--pool", default="volumes")
    parser.add_argument("--coordination", required=True,
                        help="tooz's URL, e.g. etcd3+http://127.0.0.1:2379")
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--service-down-time", type=int, default=60)
    parser.add_argument("--report-interval", type=int, default=10)
    parser.add_argument("--workdir", type=pathlib.Path,
                        help="configs and logs (default: a new temporary "
                        "folder, kept)")
    args = parser.parse_args(argv)
    if args.anchor_home is None:
        parser.error("set ANCHOR_HOME or --anchor-home")
    workdir = args.workdir or pathlib.Path(tempfile.mkdtemp(
        prefix="cinder-cluster-"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    cluster = CinderCluster(
        args.anchor, args.anchor_home, workdir, ceph_conf=args.ceph_conf,
        ceph_keyring=args.keyring, ceph_user=args.user, ceph_pool=args.pool,
        coordination_url=args.coordination, members=args.members,
        service_down_time=args.service_down_time,
        report_interval=args.report_interval)
    try:
        ready = cluster.start()
        print("Cinder ready in %.2f s at %s" % (ready, cluster.endpoint))
        print("Configs and logs: %s" % workdir, flush=True)
        stop.wait()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
