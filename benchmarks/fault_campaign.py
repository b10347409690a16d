#!/usr/bin/env python3
"""Fault campaign under load (issue 20, section 2): faults, then the counts.

Starts a deployment (api under gunicorn with 2 workers, a scheduler, two
volume nodes with the file backend) on a private PostgreSQL server that the
campaign starts itself (``initdb``/``pg_ctl`` in a temporary folder, so a
restart touches no other test's database) and a private RabbitMQ node.  A
pool of multiattach volumes takes the attach cycle (create an attachment
with a connector, ``os-complete``, delete it) from ``--concurrency``
threads over HTTP, while ``--churn`` threads create and delete volumes.
Meanwhile the faults are injected one after another:

* ``volume-node``: kill -9 of a volume node, started again;
* ``broker``: kill -9 of the campaign's own RabbitMQ node (one node of
  ``components/rabbit_cluster.py`` on ports of its own, so the machine's
  broker and the tests that use it are untouched), started again on its
  data;
* ``database``: the private PostgreSQL stopped and started again (without
  one, every connection to the database is terminated instead, and the
  report says so);
* ``api-worker``: kill -9 of one gunicorn worker; the master respawns it.

A killed or stopped service stays down until the load has seen an error or
``--outage`` seconds passed (a killed volume node, then until the api shows
it down).  The attach threads take turns on every volume of the pool, so
they contend for each multiattach volume.  Per fault, one JSON line:
successful cycles, the errors the client saw by kind (and which of them
were not retryable: a 500 or a delete ending ``error_deleting`` never is),
the recovery time (from the fault until a probe cycle on a volume of every
node succeeds), the time the deployment took to settle once the load
stopped, and the counts checked within ``--window`` seconds: rows the
server left in a transitional state before the client cleaned up
(``left_by_server``), rows stuck after it, lost rows, leaked backend
files, rows no client knows of (volumes and attachments), volumes whose
attachment counter drifted.  A create that got no answer at all (its api
worker died while answering, or the client timed out) leaves its row to
the client, as in Cinder: the client finds it by its instance
(``GET /attachments?instance_id=``) or its unique name
(``GET /volumes?name=``) and deletes it (``found_by_instance`` counts
them, at most ``unanswered_creates``).  Then a line of
overall cycle latencies (p50/p95/max) and cycles/s::

    python -m benchmarks.fault_campaign [--concurrency 8] [--window 60]
        [--load-seconds 10] [--faults volume-node,broker,database,api-worker]
"""

import argparse
import collections
import dataclasses
import glob
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import requests
import sqlalchemy as sa

from benchmarks.common import summarize
from common import messages
from deploy.testbed import harness
from deploy.testbed.components import rabbit_cluster

FAULTS = ("volume-node", "broker", "database", "api-worker")
#: Volume statuses that something in flight must end.
TRANSITIONAL = ("creating", "deleting", "attaching", "detaching", "extending",
                "retyping", "reverting", "maintenance", "reserved")
#: Volume statuses whose backend file must exist.
HOLDS_FILE = ("available", "in-use", "attaching", "detaching", "reserved")
#: HTTP answers a client retries: a busy or dying service, a lost race.
#: Never a 500: that is a server bug, and counts as one.
RETRYABLE_STATUS = frozenset([409, 502, 503, 504])
MA_SPECS = {"multiattach": "<is> True"}
OK = (200, 202, 204)
#: The user message of a create whose volume node was down.
NODE_DOWN_EVENT = messages.SERVICE_DOWN.event_id


@dataclasses.dataclass
class Settings:
    """What the campaign does; the defaults are the script's."""

    concurrency: int = 8
    pool: int = 8
    churn: int = 1
    load_seconds: float = 10.0
    min_cycles: int = 20
    outage: float = 8.0
    window: float = 60.0
    faults: tuple[str, ...] = FAULTS
    rpc_call_timeout: int = 5
    transition_timeout: int = 10
    check_interval: int = 2
    lease: int = 10


def waited(predicate: Callable[[], Any], timeout: float,
            interval: float = 0.1) -> bool:
    """``harness.wait_for`` answering False at its deadline."""
    try:
        harness.wait_for(predicate, timeout=timeout, interval=interval)
    except AssertionError:
        return False
    return True


# -- what the client saw --------------------------------------------------
def classify(step: str, outcome: requests.Response | Exception
             ) -> tuple[str, bool]:
    """The kind of a failed call, and whether a client would retry it."""
    if isinstance(outcome, requests.Timeout):
        return "%s timeout" % step, True
    if isinstance(outcome, (requests.ConnectionError,
                            requests.exceptions.ChunkedEncodingError)):
        return "%s connection" % step, True
    if isinstance(outcome, Exception):
        return "%s %s" % (step, type(outcome).__name__), False
    return ("%s %d" % (step, outcome.status_code),
            outcome.status_code in RETRYABLE_STATUS)


class Tally:
    """Cycles and errors of one phase, shared by the load's threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        #: When each successful cycle ended (``time.monotonic()``).
        self.done_at: list[float] = []
        self.failed = 0
        self.errors: collections.Counter = collections.Counter()
        self.fatal: collections.Counter = collections.Counter()
        self.samples: dict[str, str] = {}
        self.saw_error = threading.Event()

    @property
    def ok(self) -> int:
        return len(self.latencies)

    def success(self, seconds: float) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.done_at.append(time.monotonic())

    def longest_gap(self, since: float, until: float) -> float:
        """The longest time between ``since``, two successful cycles'
        ends, and ``until``: how long the load saw no progress."""
        with self.lock:
            marks = sorted([since, until] + [
                t for t in self.done_at if since <= t <= until])
        return round(max(b - a for a, b
                         in zip(marks, marks[1:], strict=False)), 2)

    def failure(self) -> None:
        with self.lock:
            self.failed += 1

    def error(self, kind: str, retryable: bool, sample: str) -> None:
        with self.lock:
            self.errors[kind] += 1
            if not retryable:
                self.fatal[kind] += 1
            self.samples.setdefault(kind, sample[:300])
        self.saw_error.set()


class Ledger:
    """What the client was told exists, and what it found missing."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.attachments: dict[str, str] = {}
        #: Every attachment the client was told of, and its volume.
        self.told_of: dict[str, str] = {}
        self.delete_sent: set[str] = set()
        self.volumes: dict[str, str] = {}
        self.lost: list[str] = []
        #: Instances whose attachment create got no answer at all (an api
        #: worker died): whether a row was made is for the client to find.
        self.unanswered: set[str] = set()
        #: Rows the client found that way.
        self.found = 0
        #: Creates (attachments and volumes) that got no answer at all.
        self.unanswered_creates = 0
        #: Names of volumes whose create got no answer: found by name.
        self.unanswered_volumes: set[str] = set()

    def told(self, attachment: str, volume: str) -> None:
        with self.lock:
            self.attachments[attachment] = volume
            self.told_of[attachment] = volume

    def deleting(self, attachment: str) -> bool:
        """Note a delete; True if it is the first sent for the row."""
        with self.lock:
            first = attachment not in self.delete_sent
            self.delete_sent.add(attachment)
            return first

    def gone(self, attachment: str) -> None:
        with self.lock:
            self.attachments.pop(attachment, None)

    def missing(self, what: str) -> None:
        with self.lock:
            self.lost.append(what)

    def unsure(self, instance: str) -> None:
        with self.lock:
            self.unanswered.add(instance)
            self.unanswered_creates += 1

    def unsure_volume(self, name: str) -> None:
        with self.lock:
            self.unanswered_volumes.add(name)
            self.unanswered_creates += 1


# -- the client -------------------------------------------------------------
class Client:
    """One keep-alive HTTP session per thread; each call's failure is
    classified into the phase's tally."""

    def __init__(self, endpoint: str, ledger: Ledger, timeout: float) -> None:
        self.endpoint = endpoint
        self.ledger = ledger
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(harness.Client(endpoint).session.headers)
        #: The last call got no HTTP answer (the connection broke).
        self.unanswered = False

    def call(self, tally: Tally, step: str, method: str, path: str,
             body: dict | None = None, expect: tuple = OK
             ) -> requests.Response | None:
        """The response if its status is in ``expect``; else None, with
        the error counted."""
        self.unanswered = False
        try:
            resp = self.session.request(method, self.endpoint + path,
                                        json=body, timeout=self.timeout)
        except requests.RequestException as exc:
            self.unanswered = True
            tally.error(*classify(step, exc), repr(exc))
            return None
        if resp.status_code in expect:
            return resp
        tally.error(*classify(step, resp), resp.text)
        return None

    def attach_cycle(self, tally: Tally, volume: str, host: str) -> bool:
        """Create with a connector, complete, delete; True if all worked."""
        started = time.monotonic()
        instance = str(uuid.uuid4())
        resp = self.call(tally, "create", "POST", "/attachments", {
            "attachment": {"volume_uuid": volume, "mode": "rw",
                           "instance_uuid": instance,
                           "connector": connector(host)}})
        if resp is None:
            if self.unanswered:
                self.ledger.unsure(instance)
            tally.failure()
            return False
        attachment = resp.json()["attachment"]["id"]
        self.ledger.told(attachment, volume)
        done = self.complete(tally, attachment)
        done = self.delete_attachment(tally, attachment) and done
        if done:
            tally.success(time.monotonic() - started)
        else:
            tally.failure()
        return done

    def complete(self, tally: Tally, attachment: str) -> bool:
        resp = self.call(tally, "complete", "POST",
                         "/attachments/%s/action" % attachment,
                         {"os-complete": None}, expect=OK + (404,))
        if resp is not None and resp.status_code == 404:
            self.ledger.missing("attachment %s: complete got 404" % attachment)
            tally.error("complete 404 (lost row)", False, resp.text)
            return False
        return resp is not None

    def delete_attachment(self, tally: Tally, attachment: str) -> bool:
        """Delete; a 404 is what a retried delete may get, but the first
        delete of a row the client was told exists finds it."""
        first = self.ledger.deleting(attachment)
        resp = self.call(tally, "delete", "DELETE",
                         "/attachments/%s" % attachment, expect=OK + (404,))
        if resp is None:
            return False
        self.ledger.gone(attachment)
        if resp.status_code == 404 and first:
            self.ledger.missing("attachment %s: first delete got 404"
                                % attachment)
            tally.error("delete 404 (lost row)", False, resp.text)
            return False
        return True

    def find_unanswered(self, tally: Tally) -> None:
        """Look up the rows of creates that got no answer, by their
        instance, as a Cinder client must (no server can tell whether its
        answer reached the client): the rows found are the client's."""
        for instance in sorted(self.ledger.unanswered):
            resp = self.call(tally, "lookup", "GET",
                             "/attachments?instance_id=%s" % instance)
            if resp is None:
                continue
            rows = resp.json()["attachments"]
            for row in rows:
                self.ledger.told(row["id"], row["volume_id"])
            with self.ledger.lock:
                self.ledger.unanswered.discard(instance)
                self.ledger.found += len(rows)

    def find_unanswered_volumes(self, tally: Tally) -> None:
        """Look up, by the unique name it was created with, each volume
        whose create got no answer: the volumes found are the client's."""
        for name in sorted(self.ledger.unanswered_volumes):
            resp = self.call(tally, "lookup", "GET", "/volumes?name=%s" % name)
            if resp is None:
                continue
            found = resp.json()["volumes"]
            with self.ledger.lock:
                for volume in found:
                    self.ledger.volumes[volume["id"]] = "found"
                self.ledger.unanswered_volumes.discard(name)
                self.ledger.found += len(found)

    def volume_status(self, tally: Tally, volume: str) -> str | None:
        """The volume's status; "gone" after a 404, None on an error."""
        resp = self.call(tally, "show", "GET", "/volumes/%s" % volume,
                         expect=(200, 404))
        if resp is None:
            return None
        return "gone" if resp.status_code == 404 else \
            resp.json()["volume"]["status"]


def connector(host: str) -> dict:
    """A connector shaped like os-brick's, as a compute host sends."""
    return {"host": host, "ip": "127.0.0.1", "platform": "x86_64",
            "os_type": "linux", "multipath": False,
            "initiator": "iqn.1994-05.com.example:%s" % host}


# -- the load ---------------------------------------------------------------
class Load:
    """Attach-cycle threads over the pool, and volume-churn threads."""

    def __init__(self, endpoint: str, pool: list[str], ledger: Ledger,
                 settings: Settings) -> None:
        self.endpoint = endpoint
        self.pool = pool
        self.ledger = ledger
        self.settings = settings
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self, tally: Tally) -> None:
        self.stopping.clear()
        self.threads = [threading.Thread(target=self._attacher,
                                         args=(tally, n), daemon=True)
                        for n in range(self.settings.concurrency)]
        self.threads += [threading.Thread(target=self._churner, args=(tally,),
                                          daemon=True)
                         for _ in range(self.settings.churn)]
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def _client(self) -> Client:
        return Client(self.endpoint, self.ledger,
                      timeout=self.settings.rpc_call_timeout * 4 + 10)

    def _attacher(self, tally: Tally, n: int) -> None:
        """Cycles over every volume of the pool in turn, from its own
        host: the threads contend for each multiattach volume."""
        client = self._client()
        turn = n
        while not self.stopping.is_set():
            client.attach_cycle(tally, self.pool[turn % len(self.pool)],
                                "fc-host-%d" % n)
            turn += 1

    def _churner(self, tally: Tally) -> None:
        client = self._client()
        while not self.stopping.is_set():
            self.churn_once(client, tally)

    def churn_once(self, client: Client, tally: Tally) -> None:
        """Create a volume, wait for it, delete it, wait until it is gone
        (each wait bounded by the recovery window)."""
        name = "fc-%s" % uuid.uuid4()
        resp = client.call(tally, "volume create", "POST", "/volumes",
                           {"volume": {"size": 1, "name": name}})
        if resp is None:
            if client.unanswered:
                self.ledger.unsure_volume(name)
            return
        volume = resp.json()["volume"]["id"]
        with self.ledger.lock:
            self.ledger.volumes[volume] = "live"
        status = self._await(client, tally, volume, ("available", "error"))
        if status != "available":
            self._volume_error(client, tally, volume, status)
        if status in ("available", "error") and self._delete_volume(
                client, tally, volume):
            gone = self._await(client, tally, volume, ("gone",))
            if gone != "gone":
                # error_deleting, or still there: a delete that failed
                tally.error("volume delete -> %s" % gone, False, volume)

    def _await(self, client: Client, tally: Tally, volume: str,
               wanted: tuple[str, ...]) -> str | None:
        seen: list[str | None] = [None]

        def reached() -> bool:
            seen[0] = client.volume_status(tally, volume)
            return seen[0] in wanted + ("error_deleting",)
        waited(reached, self.settings.window, interval=0.2)
        return seen[0]

    def _delete_volume(self, client: Client, tally: Tally,
                       volume: str) -> bool:
        def deleted() -> bool:
            resp = client.call(tally, "volume delete", "DELETE",
                               "/volumes/%s" % volume, expect=(202, 404))
            return resp is not None
        if not waited(deleted, self.settings.window, interval=0.5):
            return False
        with self.ledger.lock:
            self.ledger.volumes[volume] = "deleted"
        return True

    @staticmethod
    def _volume_error(client: Client, tally: Tally, volume: str,
                      status: str | None) -> None:
        """A create that ended in ``error`` because its node was down (its
        user message says the backend is not running) is one a client
        deletes and makes again; anything else is not."""
        resp = client.call(tally, "messages", "GET",
                           "/messages?resource_uuid=%s" % volume,
                           expect=(200,))
        told = [m["event_id"] for m in resp.json()["messages"]] \
            if resp is not None else []
        tally.error("volume create -> %s" % status,
                    status == "error" and NODE_DOWN_EVENT in told,
                    ", ".join(told))


def delete_held(endpoint: str, ledger: Ledger, window: float) -> None:
    """Delete every attachment the client was told exists (or found by
    its instance after a create got no answer) and has not seen deleted
    yet, and the volumes found by name, retrying as a client would
    (within ``window`` seconds)."""
    client = Client(endpoint, ledger, timeout=30)
    scratch = Tally()

    def found_volumes() -> list[str]:
        with ledger.lock:
            return [volume for volume, state in ledger.volumes.items()
                    if state == "found"]

    def all_deleted() -> bool:
        client.find_unanswered(scratch)
        client.find_unanswered_volumes(scratch)
        for attachment in list(ledger.attachments):
            client.delete_attachment(scratch, attachment)
        for volume in found_volumes():
            if client.call(scratch, "volume delete", "DELETE",
                           "/volumes/%s" % volume, expect=(202, 404)):
                with ledger.lock:
                    ledger.volumes[volume] = "deleted"
        return not (ledger.attachments or ledger.unanswered
                    or ledger.unanswered_volumes or found_volumes())
    waited(all_deleted, window, interval=0.5)


# -- the database under the deployment ----------------------------------
class PrivatePostgres:
    """A PostgreSQL server of the campaign's own (``initdb`` and
    ``pg_ctl`` in a temporary folder, run as the ``postgres`` user when we
    are root), so that restarting it touches no other test's database."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not found:
            raise RuntimeError("no /usr/lib/postgresql/*/bin/pg_ctl")
        self.bin = pathlib.Path(found[-1]).parent
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="ashlar-fc-pg-"))
        self.data = self.dir / "data"
        self.port = harness.free_port()
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")

    @property
    def url(self) -> str:
        return "postgresql+psycopg://postgres@127.0.0.1:%d/ashlar" % self.port

    def _run(self, tool: str, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] \
            if os.geteuid() == 0 else []
        subprocess.run(prefix + [str(self.bin / tool), *args], check=True,
                       capture_output=True, timeout=120, cwd=self.dir)

    def create(self) -> None:
        """initdb, start, and an empty database ``ashlar``."""
        self._run("initdb", "-D", str(self.data), "-A", "trust",
                  "-U", "postgres", "-E", "UTF8", "--no-sync")
        self.start()
        engine = sa.create_engine(self.url.rsplit("/", 1)[0] + "/postgres",
                                  isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE DATABASE ashlar")
        engine.dispose()

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l",
                  str(self.dir / "server.log"), "-w", "-t", "60", "-o",
                  "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c max_connections=300" % (self.port, self.dir), "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w",
                  "-t", "60", "stop")

    def destroy(self) -> None:
        try:
            self.stop()
        except subprocess.SubprocessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def children(pid: int) -> set[int]:
    """Live child processes of ``pid`` (from ``/proc``)."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = pathlib.Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry))
    return found


# -- the campaign -----------------------------------------------------------
class Campaign:
    """A deployment, its load, the faults and the checks after each."""

    def __init__(self, folder: pathlib.Path, settings: Settings) -> None:
        self.folder = folder
        self.settings = settings
        self.ledger = Ledger()
        self.pg: PrivatePostgres | None = None
        self.db_note = ""
        self.cleanups: list[Callable[[], Any]] = []
        self.pool: list[str] = []
        self.probes: list[str] = []
        #: The pool has a volume of this many nodes (one probe each).
        self.nodes_wanted = 2

    # setting up
    def __enter__(self) -> "Campaign":
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_exc: Any) -> None:
        for cleanup in reversed(self.cleanups):
            try:
                cleanup()
            except Exception as exc:  # noqa: BLE001 - clean up the rest
                print("cleanup failed: %r" % exc, flush=True)

    def _start(self) -> None:
        rabbit_cluster.available()
        self.broker = rabbit_cluster.RabbitCluster(self.folder / "rabbitmq",
                                                   size=1)
        self.cleanups.append(self.broker.stop)
        self.broker.__enter__()
        transport_url = self.broker.transport_url()
        self.db_url = self._database()
        s = self.settings
        self.dep = harness.Deployment(
            self.folder, transport_url, self.db_url, api_workers=2,
            rpc_call_timeout=s.rpc_call_timeout, report_interval=1,
            service_down_time=max(10, 2 * s.rpc_call_timeout),
            polling_interval=2)
        self.cleanups.append(self.dep.stop_all)
        self.extra = ("[DEFAULT]\nattachment_transition_timeout = %d\n"
                      "attachment_check_interval = %d\n"
                      "agent_attachment_lease = %d\n"
                      % (s.transition_timeout, s.check_interval, s.lease))
        self.dep.db_sync()
        self.dep.start("scheduler", "services.scheduler", "sched",
                       extra=self.extra)
        for name in ("volume1", "volume2"):
            self.start_volume(name)
        self.dep.start("api", "services.api", "api", extra=self.extra)
        self.client = harness.Client(self.dep.endpoint)
        harness.wait_for(lambda: len(self.client.pools()) == 2, timeout=60,
                         what="both volume nodes' pools")
        self._make_pool()
        self.engine = sa.create_engine(self.db_url, poolclass=sa.pool.NullPool)
        self.cleanups.append(self.engine.dispose)
        self.load = Load(self.dep.endpoint, self.pool, self.ledger, s)

    def _database(self) -> str:
        """The private server's database, or the shared server's."""
        try:
            self.pg = PrivatePostgres()
            self.cleanups.append(self.pg.destroy)
            self.pg.create()
            self.db_note = "private PostgreSQL on port %d" % self.pg.port
            return self.pg.url
        except (OSError, RuntimeError, subprocess.SubprocessError,
                sa.exc.SQLAlchemyError) as exc:
            self.pg = None
            self.db_note = ("shared PostgreSQL; no private server (%s), so "
                            "the database fault terminates connections"
                            % exc)
            url, drop = harness.database("postgresql")
            self.cleanups.append(drop)
            return url

    def start_volume(self, name: str) -> None:
        host = "node" + name[-1]
        self.dep.start(name, "services.volume", host, extra=self.extra)

    def _make_pool(self) -> None:
        """Multiattach volumes, at least one on each node (the probes)."""
        resp = self.client.post("/types", {"volume_type": {
            "name": "multiattach", "extra_specs": MA_SPECS}})
        assert resp.status_code == 200, resp.text
        hosts: dict[str, str] = {}
        while (len(self.pool) < self.settings.pool
               or len(hosts) < self.nodes_wanted):
            assert len(self.pool) < self.settings.pool + 10, hosts
            volume = self.client.create_volume(
                size=1, volume_type="multiattach")["id"]
            self.client.wait_status(volume, "available", timeout=60)
            shown = self.client.get("/volumes/%s" % volume).json()["volume"]
            hosts.setdefault(shown["os-vol-host-attr:host"], volume)
            self.pool.append(volume)
            self.ledger.volumes[volume] = "live"
        self.probes = sorted(hosts.values())

    # the faults: each returns what it did
    def fault_volume_node(self, hold: Callable[[], None]) -> str:
        """Kill node1 and keep it dead until the api shows it down, so
        that the paths for a service seen down run too."""
        self.dep.stop("volume1", signal.SIGKILL)
        hold()
        started = time.monotonic()
        seen = waited(self._node1_down, self.settings.window, interval=0.2)
        self.start_volume("volume1")
        return ("kill -9 of volume node node1, held until the api showed "
                "it down (%s after %.1f s), started again"
                % ("seen" if seen else "never seen",
                   time.monotonic() - started))

    def _node1_down(self) -> bool:
        return any(binary == "cinder-volume" and _node(host) == "node1"
                   and state == "down" for (binary, host), state
                   in self.client.services_up().items())

    def fault_broker(self, hold: Callable[[], None]) -> str:
        [node] = self.broker.names
        self.broker.kill(node)
        try:
            hold()
        finally:
            self.broker.start(node)
        return "kill -9 of the RabbitMQ node, started again on its data"

    def fault_database(self, hold: Callable[[], None]) -> str:
        if self.pg is None:
            cut = harness.cut_connections(self.db_url)
            return "terminated %d connections (no private server)" % cut
        self.pg.stop()
        try:
            hold()
        finally:
            self.pg.start()
        return "pg_ctl stop -m fast, start (%s)" % self.db_note

    def fault_api_worker(self, _hold: Callable[[], None]) -> str:
        master = self.dep.procs["api"].pid
        workers = children(master)
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        harness.wait_for(lambda: len(children(master)) == len(workers)
                         and victim not in children(master),
                         timeout=self.settings.window,
                         what="gunicorn to respawn the killed worker")
        return "kill -9 of api worker %d of %d; respawned" % (victim,
                                                             len(workers))

    # one fault under load
    def run(self) -> list[dict]:
        return [self.run_fault(name) for name in self.settings.faults]

    def run_fault(self, name: str) -> dict:
        tally = Tally()
        started = time.monotonic()
        self.load.start(tally)
        try:
            before = self._load_for(tally, 0)
            tally.saw_error.clear()
            injected = time.monotonic()
            detail = getattr(self, "fault_" + name.replace("-", "_"))(
                lambda: tally.saw_error.wait(self.settings.outage))
            recovery = self.recover(tally, injected)
            mark = tally.ok
            after = self._load_for(tally, mark)
        finally:
            self.load.stop()
        ended = time.monotonic()
        loaded = ended - started
        return dict({"fault": name, "did": detail,
                     "cycles": tally.ok, "cycles_after_recovery":
                     tally.ok - mark, "failed_cycles": tally.failed,
                     "errors": dict(tally.errors),
                     "non_retryable": dict(tally.fatal),
                     "error_samples": tally.samples,
                     "recovery_s": recovery and round(recovery, 2),
                     "longest_gap_s": tally.longest_gap(started, ended),
                     "load_reached": before and after,
                     "load_s": round(loaded, 1),
                     "latency": summarize(tally.latencies),
                     "cycles_per_s": round(tally.ok / loaded, 1)},
                    **self.settle(), _latencies=tally.latencies)

    def _load_for(self, tally: Tally, base: int) -> bool:
        """Let the load run ``load_seconds`` and ``min_cycles`` more
        successful cycles (bounded by the window)."""
        since = time.monotonic()
        s = self.settings
        return waited(lambda: tally.ok - base >= s.min_cycles
                       and time.monotonic() - since >= s.load_seconds,
                       s.load_seconds + s.window)

    def recover(self, tally: Tally, since: float) -> float | None:
        """Seconds from ``since`` until a probe cycle on a volume of every
        node succeeded (None: not within the window)."""
        client = Client(self.dep.endpoint, self.ledger, timeout=30)
        pending = set(self.probes)

        def probed() -> bool:
            for volume in sorted(pending):
                if client.attach_cycle(tally, volume, "fc-probe"):
                    pending.discard(volume)
            return not pending
        if not waited(probed, since + self.settings.window
                       - time.monotonic(), interval=0.2):
            return None
        return time.monotonic() - since

    # the checks once the load stopped
    def settle(self) -> dict:
        """Wait (within the window) until the server itself ended all it
        had in flight (a row only a client could end is stuck), delete
        what the client holds (found by instance or name after a create
        got no answer), wait again, then count."""
        started = time.monotonic()
        by_server = waited(lambda: not self.stuck(), self.settings.window,
                            interval=0.5)
        left_by_server = [] if by_server else self.stuck()
        self._delete_held()
        calm = waited(lambda: not self.stuck(), self.settings.window,
                       interval=0.5)
        settled = time.monotonic() - started
        rows = self.rows()
        lost = self.lost(rows) + self.ledger.lost
        self.ledger.lost.clear()
        leaked = self.leaked(rows)
        orphans = self.orphans(rows)
        stuck = self.stuck()
        for path in orphans.values():
            self.client.delete(path)
        with self.ledger.lock:
            found, self.ledger.found = self.ledger.found, 0
            unanswered = self.ledger.unanswered_creates
            self.ledger.unanswered_creates = 0
        return {"settle_s": round(settled, 2) if calm else None,
                "left_by_server": left_by_server,
                "unanswered_creates": unanswered,
                "found_by_instance": found, "stuck": len(stuck),
                "lost": len(lost),
                "leaked": len(leaked), "orphaned": len(orphans),
                "drift": self.drift(rows),
                "stuck_rows": stuck, "lost_rows": lost,
                "leaked_files": leaked, "orphaned_rows": sorted(orphans)}

    def orphans(self, rows: dict[str, list[dict]]) -> dict[str, str]:
        """Rows no client holds (each with the path that deletes it):
        attachments left once the client deleted all it knew of, volumes
        it never heard of or saw deleted."""
        found = {"attachment %s %s" % (a["id"], a["attach_status"]):
                 "/attachments/%s" % a["id"] for a in rows["attachments"]}
        found.update({"volume %s %s (%s)" % (
            v["id"], v["status"], self.ledger.volumes.get(v["id"],
                                                          "unknown")):
            "/volumes/%s" % v["id"] for v in rows["volumes"]
            if self.ledger.volumes.get(v["id"]) != "live"})
        return found

    def _delete_held(self) -> None:
        delete_held(self.dep.endpoint, self.ledger, self.settings.window)

    def rows(self) -> dict[str, list[dict]]:
        with self.engine.connect() as conn:
            return {"volumes": [dict(r._mapping) for r in conn.execute(
                        sa.text("SELECT id, status, host, attachment_count "
                                "FROM volumes"))],
                    "attachments": [dict(r._mapping) for r in conn.execute(
                        sa.text("SELECT id, volume_id, attach_status, "
                                "transition FROM volume_attachment"))]}

    def stuck(self) -> list[str]:
        """Rows in a transitional state: from the database, and the pool's
        volumes as the REST API shows them."""
        rows = self.rows()
        found = ["volume %s %s" % (v["id"], v["status"])
                 for v in rows["volumes"] if v["status"] in TRANSITIONAL]
        found += ["attachment %s %s (%s)" % (a["id"], a["attach_status"],
                                             a["transition"])
                  for a in rows["attachments"] if a["transition"]
                  or a["attach_status"] in ("attaching", "detaching")]
        for volume in self.pool:
            status = self.client.volume_status(volume)
            if status in TRANSITIONAL:
                found.append("volume %s shown %s" % (volume, status))
        return found

    def lost(self, rows: dict[str, list[dict]]) -> list[str]:
        """Volumes the client holds that have no row; volumes whose row
        says they exist but whose backend file does not."""
        present = {v["id"] for v in rows["volumes"]}
        missing = ["volume %s has no row" % vid for vid, state
                   in self.ledger.volumes.items()
                   if state == "live" and vid not in present]
        files = self.files()
        missing += ["volume %s (%s) has no file" % (v["id"], v["status"])
                    for v in rows["volumes"] if v["status"] in HOLDS_FILE
                    and v["id"] not in files.get(_node(v["host"]), set())]
        return missing

    def leaked(self, rows: dict[str, list[dict]]) -> list[str]:
        """Backend files that no volume row of their node accounts for."""
        mine: dict[str, set[str]] = collections.defaultdict(set)
        for v in rows["volumes"]:
            mine[_node(v["host"])].add(v["id"])
        return ["%s: %s" % (node, name)
                for node, names in self.files(raw=True).items()
                for name in names
                if _volume_id(name) not in mine[node]]

    def files(self, raw: bool = False) -> dict[str, set[str]]:
        """Per node, the volume ids of its backend's files (``raw``: the
        file names, temporary files included)."""
        found = {}
        for node in ("node1", "node2"):
            folder = self.folder / ("state-" + node) / "volumes"
            names = set(os.listdir(folder)) if folder.is_dir() else set()
            found[node] = names if raw else {_volume_id(n) for n in names}
        return found

    @staticmethod
    def drift(rows: dict[str, list[dict]]) -> int:
        """Volumes whose attachment counter differs from their rows."""
        counts = collections.Counter(a["volume_id"]
                                     for a in rows["attachments"])
        return sum(1 for v in rows["volumes"]
                   if v["attachment_count"] != counts[v["id"]])


def _node(host: str | None) -> str:
    return (host or "").partition("@")[0]


def _volume_id(name: str) -> str:
    """``volume-<id>.raw`` -> ``<id>``; anything else stays as it is."""
    if name.startswith("volume-"):
        return name[len("volume-"):].rsplit(".", 1)[0]
    return name


def overall(results: list[dict]) -> dict:
    """Latencies and throughput over every fault's load."""
    latencies = [x for r in results for x in r["_latencies"]]
    seconds = sum(r["load_s"] for r in results)
    return {"overall": summarize(latencies),
            "cycles": len(latencies),
            "cycles_per_s": round(len(latencies) / seconds, 1) if seconds
            else 0.0,
            "stuck": sum(r["stuck"] for r in results),
            "lost": sum(r["lost"] for r in results),
            "leaked": sum(r["leaked"] for r in results),
            "orphaned": sum(r["orphaned"] for r in results),
            "non_retryable": sum(sum(r["non_retryable"].values())
                                 for r in results)}


def chosen_faults(names: str) -> tuple[str, ...]:
    """The faults asked for."""
    faults = tuple(n for n in names.split(",") if n)
    unknown = set(faults) - set(FAULTS)
    if unknown:
        raise SystemExit("unknown faults: %s" % ", ".join(sorted(unknown)))
    return faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    d = Settings()
    for field in ("concurrency", "pool", "churn", "min_cycles",
                  "rpc_call_timeout", "transition_timeout", "check_interval",
                  "lease"):
        parser.add_argument("--" + field.replace("_", "-"), type=int,
                            default=getattr(d, field))
    for field in ("load_seconds", "outage", "window"):
        parser.add_argument("--" + field.replace("_", "-"), type=float,
                            default=getattr(d, field))
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--keep", action="store_true",
                        help="keep the folder of configs and logs")
    args = parser.parse_args()
    settings = Settings(**{k: getattr(args, k) for k in (
        "concurrency", "pool", "churn", "min_cycles", "load_seconds",
        "outage", "window", "rpc_call_timeout", "transition_timeout",
        "check_interval", "lease")}, faults=chosen_faults(args.faults))
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ashlar-fc-"))
    try:
        with Campaign(folder, settings) as campaign:
            print(json.dumps({"database": campaign.db_note,
                              "logs": str(folder)}), flush=True)
            results = []
            for name in settings.faults:
                results.append(campaign.run_fault(name))
                shown = {k: v for k, v in results[-1].items()
                         if not k.startswith("_")}
                print(json.dumps(shown), flush=True)
            print(json.dumps(overall(results)), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
