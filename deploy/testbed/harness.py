"""Real deployments: broker vhosts, databases, Ashlar's processes, a client.

The functional tests and the benchmarks start Ashlar with this module, so
both measure and check the very same deployment.  Defaults point at the
services on 127.0.0.1; ``TEST_TRANSPORT_URL``, ``TEST_PG_URL``,
``TEST_MYSQL_URL`` (PyMySQL) and ``TEST_MYSQLDB_URL`` (mysqlclient)
override them.  A service that cannot be reached raises ``Unavailable``;
the tests' ``conftest.py`` turns it into a skip, or under ``CI=true`` a
failure, with its message.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import NoReturn

import requests
import sqlalchemy as sa

from deploy.testbed.components import mysqlclient

RABBIT_URL = os.environ.get("TEST_TRANSPORT_URL",
                            "rabbit://guest:guest@127.0.0.1:5672/")
DB_URLS = {
    "postgresql": os.environ.get(
        "TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
    "mysql": os.environ.get(
        "TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test"),
    # The same MariaDB through mysqlclient, the C driver.
    "mysqldb": os.environ.get(
        "TEST_MYSQLDB_URL", "mysql+mysqldb://root@127.0.0.1:3306/test"),
}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class Unavailable(RuntimeError):
    """A service a deployment needs cannot be reached or is not installed:
    the test that needs it is skipped (failed under CI), a benchmark ends."""


def unavailable(what: str, error: BaseException) -> NoReturn:
    """Raise ``Unavailable``: a missing service is never silent."""
    raise Unavailable("%s is not reachable: %s" % (what, error))


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.05,
             what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value or time runs out."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Unavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - retried until the deadline
            last = exc
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError("timed out after %.0fs waiting for %s (last: %r)"
                         % (timeout, what, last))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- broker ---------------------------------------------------------------
def broker_vhost() -> tuple[str, callable]:
    """A transport URL on a fresh vhost, and a function that removes it.

    Without rabbitmqctl (a remote broker) the configured URL is used as is.
    """
    _check_tcp(RABBIT_URL, 5672, "RabbitMQ")
    if "TEST_TRANSPORT_URL" in os.environ:
        return RABBIT_URL, lambda: None
    vhost = "ashlar-test-%s" % uuid.uuid4().hex[:8]
    try:
        subprocess.run(["rabbitmqctl", "-q", "add_vhost", vhost], check=True,
                       capture_output=True, timeout=60)
        subprocess.run(["rabbitmqctl", "-q", "set_permissions", "-p", vhost,
                        "guest", ".*", ".*", ".*"], check=True,
                       capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        unavailable("rabbitmqctl (to make a test vhost)", exc)

    def remove() -> None:
        subprocess.run(["rabbitmqctl", "-q", "delete_vhost", vhost],
                       capture_output=True, timeout=60)
    return RABBIT_URL.rstrip("/") + "/" + vhost, remove


def _check_tcp(url: str, default_port: int, what: str) -> None:
    netloc = sa.engine.make_url(url.replace("rabbit://", "mysql://", 1))
    host, port = netloc.host or "127.0.0.1", netloc.port or default_port
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        unavailable("%s at %s:%s" % (what, host, port), exc)


# -- databases ------------------------------------------------------------
def database(kind: str) -> tuple[str, callable]:
    """Create an empty database; return its URL and a function to drop it."""
    if kind == "sqlite":
        path = "/tmp/ashlar-test-%s.sqlite" % uuid.uuid4().hex[:8]
        return "sqlite:///" + path, lambda: os.path.exists(path) and \
            os.remove(path)
    if kind == "mysqldb" and not mysqlclient.installed():
        unavailable("mysqlclient", ModuleNotFoundError(
            "MySQLdb is not installed; install it with `%s`"
            % mysqlclient.INSTALL_COMMAND))
    admin_url = sa.engine.make_url(DB_URLS[kind])
    name = "ashlar_test_%s" % uuid.uuid4().hex[:10]
    try:
        engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE DATABASE %s" % name)
    except Exception as exc:  # noqa: BLE001 - any driver error means down
        unavailable("%s at %s" % (kind, admin_url.render_as_string(
            hide_password=True)), exc)

    def drop() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
        engine.dispose()
    return admin_url.set(database=name).render_as_string(
        hide_password=False), drop


#: MySQL's ER_NO_SUCH_THREAD: a KILL of a connection that has ended.
MYSQL_NO_SUCH_THREAD = 1094


def cut_connections(db_url: str) -> int:
    """Terminate every server-side connection to the database of ``db_url``
    (what a database restart does to pooled connections); return how many.
    """
    url = sa.engine.make_url(db_url)
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            if url.get_backend_name() == "postgresql":
                return len(conn.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %(db)s AND pid <> pg_backend_pid()",
                    {"db": url.database}).all())
            ids = conn.exec_driver_sql(
                "SELECT id FROM information_schema.processlist WHERE db = "
                "%(db)s AND id <> CONNECTION_ID()",
                {"db": url.database}).scalars().all()
            killed = 0
            for conn_id in ids:
                try:
                    conn.exec_driver_sql("KILL %d" % conn_id)
                except sa.exc.OperationalError as exc:
                    # NOTE: 1094, "Unknown thread id": it ended since the
                    # listing, as a pool may close one; anything else fails.
                    if exc.orig.args[0] != MYSQL_NO_SUCH_THREAD:
                        raise
                else:
                    killed += 1
            return killed
    finally:
        engine.dispose()


def release_tree(folder: Path, commit: str) -> str:
    """Write the source tree of ``commit`` (a release: ``git archive``
    of this clone) into ``folder``; its path, for ``Deployment.start``'s
    ``tree``."""
    archive = subprocess.run(["git", "-C", REPO, "archive", commit],
                             capture_output=True, timeout=120)
    assert archive.returncode == 0, (
        "release commit %s is not in this clone's history: %s"
        % (commit, archive.stderr.decode()[-500:]))
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout,
                   check=True, timeout=120)
    return str(folder)


def connector(host: str) -> dict:
    """A compute host's connector, as os-brick gives it (loopback)."""
    return {"host": host, "ip": "127.0.0.1", "initiator": "iqn.%s" % host,
            "platform": "x86_64", "os_type": "linux", "multipath": False}


# -- processes ------------------------------------------------------------
class Deployment:
    """Config files and real Ashlar processes in a temporary folder."""

    def __init__(self, tmp_path, transport_url: str | None, db_url: str,
                 **options) -> None:
        self.tmp = tmp_path
        self.transport_url = transport_url
        self.db_url = db_url
        self.port = free_port()
        self.options = options
        self.procs: dict[str, subprocess.Popen] = {}
        self.endpoint = "http://127.0.0.1:%d/v3/%s" % (
            self.port, "ba5eba11ba5eba11ba5eba11ba5eba11")

    def config(self, name: str, host: str, backends: str = "file",
               extra: str = "", api_port: int | None = None) -> str:
        """Write process ``name``'s config file; ``api_port``: an api's
        port other than the deployment's (a second api host)."""
        state = self.tmp / ("state-" + host)
        lines = ["[DEFAULT]", "host = %s" % host, "state_path = %s" % state,
                 "enabled_backends = %s" % backends,
                 "report_interval = %s" % self.options.get("report_interval", 1),
                 "service_down_time = %s"
                 % self.options.get("service_down_time", 5),
                 "backend_stats_polling_interval = %s"
                 % self.options.get("polling_interval", 2),
                 "rpc_call_timeout = %s"
                 % self.options.get("rpc_call_timeout", 30),
                 "debug = %s" % self.options.get("debug", False),
                 # Quotas lifted, as the Cinder anchor lifts them, unless
                 # a test is about them.
                 "quota_volumes = %s" % self.options.get("quota_volumes", -1),
                 "quota_gigabytes = %s"
                 % self.options.get("quota_gigabytes", -1)]
        if self.transport_url:
            lines.append("transport_url = %s" % self.transport_url)
        lines += ["[database]", "connection = %s" % self.db_url,
                  "[api]", "bind_port = %d" % (api_port or self.port),
                  "workers = %s" % self.options.get("api_workers", 2)]
        path = self.tmp / ("%s.conf" % name)
        path.write_text("\n".join(lines) + "\n" + extra)
        return str(path)

    def db_sync(self) -> None:
        conf = self.config("manage", "manage")
        subprocess.run([sys.executable, "-m", "services.manage",
                        "--config-file", conf, "db", "sync"], check=True,
                       cwd=REPO, capture_output=True, timeout=120)

    def start(self, name: str, module: str, host: str,
              tree: str | None = None, **kwargs) -> None:
        """Start ``python -m module`` as ``host``; ``tree``: the source
        tree to run (another release's), instead of this one."""
        conf = self.config(name, host, **kwargs)
        log = open(self.tmp / ("%s.log" % name), "ab")
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", module, "--config-file", conf],
            cwd=tree or REPO, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def start_cluster(self, volume_hosts: list[str]) -> "Client":
        """Start a scheduler, one volume node per host and the api; wait
        until every node's pool is reported."""
        self.start("scheduler", "services.scheduler", "sched")
        for i, host in enumerate(volume_hosts, 1):
            self.start("volume%d" % i, "services.volume", host)
        self.start("api", "services.api", "api")
        client = Client(self.endpoint)
        wait_for(lambda: len(client.pools()) == len(volume_hosts),
                 timeout=60, what="the volume nodes' pools")
        return client

    def start_backup(self, host: str = "backup1",
                     chunk_bytes: int | None = None, name: str = "backup",
                     store: Path | None = None,
                     takeover_interval: int | None = None) -> None:
        """Start ``ashlar-backup`` as ``host`` (its POSIX store under its
        state_path); ``chunk_bytes``: a smaller ``backup_file_size``;
        ``store``: a POSIX folder shared with other backup services;
        ``takeover_interval``: take over dead ones' backups
        (``backup_takeover``) every that many seconds."""
        lines = ["[DEFAULT]"]
        if chunk_bytes:
            lines.append("backup_file_size = %d" % chunk_bytes)
        if store is not None:
            lines.append("backup_posix_path = %s" % store)
        if takeover_interval is not None:
            lines += ["backup_takeover = true",
                      "backup_takeover_interval = %d" % takeover_interval]
        extra = "\n".join(lines) + "\n" if len(lines) > 1 else ""
        self.start(name, "services.backup", host, extra=extra)

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        self._reap(self._signal(name, sig))

    def stop_all(self) -> None:
        """Signal every process at once, then wait for each."""
        for proc in [self._signal(name, signal.SIGTERM)
                     for name in list(self.procs)]:
            self._reap(proc)

    def _signal(self, name: str, sig: int) -> subprocess.Popen | None:
        """Send ``sig`` to process ``name``'s group; the process, if it
        was still running."""
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return None
        os.killpg(proc.pid, sig)
        return proc

    @staticmethod
    def _reap(proc: subprocess.Popen | None) -> None:
        """Wait for a signalled process; kill its group after 20 s."""
        if proc is None:
            return
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)

    def log(self, name: str) -> str:
        path = self.tmp / ("%s.log" % name)
        return path.read_text(errors="replace") if path.exists() else ""


class Client:
    """A tiny Cinder v3 client over requests (noauth)."""

    def __init__(self, endpoint: str, version: str = "3.60",
                 token: str | None = None, headers: dict | None = None):
        self.endpoint = endpoint
        project = endpoint.rstrip("/").rsplit("/", 1)[-1]
        self.session = requests.Session()
        self.session.headers.update({
            "X-Auth-Token": token or "admin:%s" % project,
            "OpenStack-API-Version": "volume %s" % version,
            "Content-Type": "application/json"})
        self.session.headers.update(headers or {})

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.endpoint + path, timeout=30,
                                    **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, json=body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, json=body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def attach(self, volume_id: str, host: str) -> str:
        """An attachment connected to ``host`` and completed; its id."""
        resp = self.post("/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": connector(host)}})
        assert resp.status_code == 200, resp.text
        aid = resp.json()["attachment"]["id"]
        done = self.post("/attachments/%s/action" % aid, {"os-complete": None})
        assert done.status_code == 204, done.text
        return aid

    def volume_status(self, volume_id: str) -> str | None:
        resp = self.get("/volumes/%s" % volume_id)
        if resp.status_code == 404:
            return None
        resp.raise_for_status()
        return resp.json()["volume"]["status"]

    def wait_status(self, volume_id: str, wanted: str | None,
                    timeout: float = 30.0) -> None:
        """Wait until the volume shows ``wanted`` (None: until it is gone)."""
        wait_for(lambda: self.volume_status(volume_id) == wanted,
                 timeout=timeout,
                 what="volume %s to be %s" % (volume_id, wanted))

    def messages_of(self, resource_id: str) -> list[dict]:
        """The user messages about a volume or snapshot, newest first
        (Cinder's ``/messages``, filtered from 3.5)."""
        resp = self.get("/messages", params={"resource_uuid": resource_id})
        resp.raise_for_status()
        return resp.json()["messages"]

    def create_volume(self, size: int = 1, **fields) -> dict:
        resp = self.post("/volumes", {"volume": dict(size=size, **fields)})
        assert resp.status_code == 202, resp.text
        return resp.json()["volume"]

    def services_up(self) -> dict:
        resp = self.get("/os-services")
        resp.raise_for_status()
        return {(s["binary"], s["host"]): s["state"]
                for s in resp.json()["services"]}

    def pools(self) -> dict:
        resp = self.get("/scheduler-stats/get_pools", params={"detail": "true"})
        resp.raise_for_status()
        return {p["name"]: p["capabilities"] for p in resp.json()["pools"]}
