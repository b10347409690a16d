"""The "ha" deployment: Ashlar on the clustered engines of deploy/ha.

``HA`` starts the three engine clusters of ``components`` (RabbitMQ,
MariaDB Galera behind haproxy, etcd; at once, each on its own loopback
ports and folders), then Ashlar as ``harness.Deployment`` starts it (the
same config files and processes): two api hosts (gunicorn each) behind an
haproxy front that clients use (``endpoint``), a scheduler and two
volume nodes, members of one cluster ``c1`` whose file backend is a folder
both share, locking through tooz on etcd (through an haproxy front that
outlives any one etcd member).  Every process's ``transport_url`` names
the three RabbitMQ nodes with quorum queues; the database is Galera
through haproxy (one writer).

The single-node path (``harness.Deployment`` on the machine's broker and
database) and the embedded mode are untouched: this module only adds
configuration.

    python -m deploy.testbed.ha install    # the engines' Debian packages
    python -m deploy.testbed.ha up DIR     # until Ctrl-C; prints the endpoint
"""

import shutil
import subprocess
import time
from collections.abc import Mapping
from concurrent import futures
from pathlib import Path

import requests

from benchmarks import procmem
from deploy.testbed import harness
from deploy.testbed.components import etcd as etcd_component
from deploy.testbed.components import galera as galera_component
from deploy.testbed.components import members
from deploy.testbed.components import rabbit_cluster

#: The volume cluster, its members (volume node host names) and backend.
CLUSTER = "c1"
MEMBERS = ("node1", "node2")
BACKEND = "file"
POOL = "%s@%s#%s" % (CLUSTER, BACKEND, BACKEND)
#: oslo.messaging on the RabbitMQ cluster (deploy/ha/README.md): quorum
#: queues for topics, and for replies and fanouts, so a reply whose queue
#: led on a dead node is not lost; the next node chosen at random
#: (``common.rpc.FAILOVER_STRATEGY``).
RPC_OPTIONS = "\n".join((
    "[oslo_messaging_rabbit]",
    "rabbit_quorum_queue = true",
    "rabbit_transient_quorum_queue = true",
    "kombu_failover_strategy = shuffle", ""))
POOLS_TIMEOUT = 120.0
#: How soon a live member takes over an attachment a dead one left in
#: flight (the defaults: 120 s, checked every 60 s).  NOTE(ashlar): the
#: tests' detection time, stated in deploy/ha/README.md.
DETECTION = "attachment_transition_timeout = 20\nattachment_check_interval = 2"
#: The api hosts (process name = host name; ``api`` on the deployment's
#: own port), behind the front.
API_HOSTS = ("api", "api2")
#: haproxy in front of the api hosts: round robin; a host whose ``GET /``
#: fails three times in a row (a second apart) is out until it answers
#: twice; a request whose connection is refused goes to the other host.
#: NOTE(ashlar): a check waits in line behind the requests a busy host
#: holds: with 500 ms checks and ``on-marked-down shutdown-sessions``,
#: 64 racing creates got both hosts marked down and their sessions cut.
API_FRONT_CONFIG = """\
global
    maxconn 512
    nbthread 1
defaults
    mode http
    timeout connect 1s
    timeout client 120s
    timeout server 120s
    timeout check 10s
    retries 3
    option redispatch 1
listen api
    bind 127.0.0.1:{port}
    balance roundrobin
    option httpchk GET /
    default-server inter 1s rise 2 fall 3
{servers}
"""


class ApiFront:
    """haproxy in front of the api hosts (``API_FRONT_CONFIG``)."""

    def __init__(self, folder: Path, ports: dict[str, int]) -> None:
        self.folder = folder
        self.ports = ports
        self.port = harness.free_port()
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "haproxy.cfg"
        config.write_text(API_FRONT_CONFIG.format(
            port=self.port, servers="\n".join(
                "    server %s 127.0.0.1:%d check" % (name, port)
                for name, port in self.ports.items())))
        log = open(self.folder / "haproxy.log", "ab")
        self.proc = subprocess.Popen(
            [shutil.which("haproxy") or "haproxy", "-db", "-f", str(config)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        harness.wait_for(self._answers, timeout=30,
                         what="the api front to answer")

    def _answers(self) -> bool:
        try:
            return requests.get("http://127.0.0.1:%d/" % self.port,
                                timeout=5).status_code < 500
        except requests.RequestException:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


class HA:
    """The whole deployment as a context manager: ``start_seconds``,
    ``pss_mib()`` (``pss_parts()``), the engine clusters (``rabbit``,
    ``galera``, ``etcd``), Ashlar's processes (``dep``: a
    ``harness.Deployment``) and a ``client``.

    :param members: How many volume members (``node1``, ...).
    :param backend: The members' backend name, and ``backend_section``
        its config section (default: the file backend on a shared folder).
    :param options: ``harness.Deployment``'s (``quota_volumes``, ...).
    """

    def __init__(self, workdir: Path | str, members: int = len(MEMBERS),
                 backend: str = BACKEND, backend_section: str | None = None,
                 **options: object) -> None:
        self.dir = Path(workdir)
        self.options = options
        self.members = tuple("node%d" % (i + 1) for i in range(members))
        self.backend = backend
        self.backend_section = backend_section
        #: The cluster's one pool, as ``get_pools`` names it.
        self.pool = "%s@%s#%s" % (CLUSTER, backend, backend)
        self.rabbit = rabbit_cluster.RabbitCluster(self.dir / "rabbitmq")
        self.galera = galera_component.Galera(self.dir / "galera")
        self.etcd = etcd_component.Etcd(self.dir / "etcd")
        self.dep: harness.Deployment | None = None
        self.front: ApiFront | None = None
        #: Each api host's port, and own endpoint (clients use the
        #: front's: ``dep.endpoint``).
        self.api_ports: dict[str, int] = {}
        self.api_endpoints: dict[str, str] = {}
        self.client: harness.Client | None = None
        self.start_seconds: float | None = None
        self.engine_seconds: dict[str, float] = {}

    @staticmethod
    def available() -> None:
        """Raise ``harness.Unavailable`` unless every engine is here."""
        for component in (rabbit_cluster, galera_component, etcd_component):
            component.available()

    def __enter__(self) -> "HA":
        started = time.monotonic()
        self.available()
        engines = (self.rabbit, self.galera, self.etcd)
        try:
            with futures.ThreadPoolExecutor(len(engines)) as pool:
                for done in [pool.submit(engine.__enter__)
                             for engine in engines]:
                    done.result()
            self.engine_seconds = {engine.label: round(
                engine.start_seconds, 1) for engine in engines}
            self._start_ashlar()
        except BaseException:
            self.__exit__()
            raise
        self.start_seconds = time.monotonic() - started
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.dep is not None:
            # NOTE(ashlar): all at once (``stop_all``): on the RabbitMQ
            # cluster a volume member took 16-20 s to stop, and one after
            # the other that adds up.
            self.dep.stop_all()
        if self.front is not None:
            self.front.stop()
        for engine in (self.rabbit, self.galera, self.etcd):
            engine.stop()

    # -- Ashlar -----------------------------------------------------------------
    def _start_ashlar(self) -> None:
        self.dep = harness.Deployment(
            self.dir / "ashlar", self.rabbit.transport_url(),
            self.galera.url(), **self.options)
        self.dep.tmp.mkdir(parents=True, exist_ok=True)
        self.dep.db_sync()
        self.dep.start("scheduler", "services.scheduler", "sched",
                       extra=RPC_OPTIONS)
        for index in range(len(self.members)):
            self.start_member(index)
        self.api_ports = {name: self.dep.port if name == "api"
                          else harness.free_port() for name in API_HOSTS}
        own = self.dep.endpoint
        self.api_endpoints = {name: own.replace(
            ":%d/" % self.dep.port, ":%d/" % port)
            for name, port in self.api_ports.items()}
        for name in API_HOSTS:
            self.start_api(name)
        self.front = ApiFront(self.dir / "api-front", self.api_ports)
        self.front.start()
        self.dep.endpoint = own.replace(":%d/" % self.dep.port,
                                        ":%d/" % self.front.port)
        self.client = harness.Client(self.dep.endpoint)
        harness.wait_for(lambda: set(self.client.pools()) == {self.pool},
                         timeout=POOLS_TIMEOUT, what="the cluster's pool")

    def start_api(self, name: str) -> None:
        """(Re)start api host ``name`` (of ``API_HOSTS``) on its port."""
        assert self.dep is not None
        self.dep.start(name, "services.api", name, extra=RPC_OPTIONS,
                       api_port=self.api_ports[name])

    def member_config(self, index: int) -> str:
        """The extra config of volume member ``index``: the cluster, the
        backend (by default a folder the members share), tooz on etcd's
        front, the RPC options."""
        section = self.backend_section
        if section is None:
            shared = self.dir / "ashlar" / "shared-volumes"
            shared.mkdir(parents=True, exist_ok=True)
            section = "[%s]\nfile_volume_dir = %s" % (self.backend, shared)
        return "\n".join((
            "[DEFAULT]", "cluster = %s" % CLUSTER, DETECTION,
            "[coordination]",
            "backend_url = %s" % self.etcd.tooz_url(),
            section, RPC_OPTIONS))

    def start_member(self, index: int) -> None:
        """(Re)start volume member ``index`` (``volume1``, ...)."""
        assert self.dep is not None
        self.dep.start("volume%d" % (index + 1), "services.volume",
                       self.members[index], backends=self.backend,
                       extra=self.member_config(index))

    def done_more_than_once(self, line: str, ids: set[str]
                            ) -> dict[str, int]:
        """The ids the volume members' logs name in ``line`` (``%s`` for
        the id) more than once, with how often: an operation done twice
        (a restarted member appends to its log, so its earlier life
        counts too)."""
        assert self.dep is not None
        logs = "".join(self.dep.log("volume%d" % (i + 1))
                       for i in range(len(self.members)))
        counts = {i: logs.count(line % i) for i in ids}
        return {i: n for i, n in counts.items() if n > 1}

    def connected_more_than_once(self, volume_of: Mapping[str, str]
                                 ) -> dict[str, int]:
        """The attachments (``{id: its volume's id}``) a volume member
        connected more than once.

        NOTE: a connect logs "Attachment A of volume V connected to H"; a
        sweep of the same attachment later (a stuck disconnect resolved, a
        lapsed lease removed) logs another operation, not this one again.
        """
        return self.done_more_than_once("Attachment %s", {
            "%s of volume %s connected" % pair for pair in volume_of.items()})

    # -- what it costs --------------------------------------------------------
    def pss_parts(self) -> dict[str, float]:
        """Pss (MiB, benchmarks/procmem.py) of each engine cluster and of
        Ashlar's processes."""
        assert self.dep is not None
        usage = {engine.label: engine.pss_mib()
                 for engine in (self.rabbit, self.galera, self.etcd)}
        usage["Ashlar"] = procmem.group_usage({"ashlar": [
            proc.pid for proc in self.dep.procs.values()
            if proc.poll() is None]})["ashlar"]["pss_mib"]
        return usage

    def pss_mib(self) -> float:
        """Pss of the whole deployment, in MiB."""
        return round(sum(self.pss_parts().values()), 1)

    def volume_members_on(self) -> dict[str, list[str]]:
        """The RabbitMQ nodes each live volume member's connections are on,
        as the first live node lists them (oslo.messaging names a
        connection ``<process>:<pid>:<uuid>``)."""
        assert self.dep is not None
        pids = {str(proc.pid): name for name, proc in self.dep.procs.items()
                if name.startswith("volume") and proc.poll() is None}
        live = next(name for name in self.rabbit.names
                    if self.rabbit.alive(name))
        found: dict[str, list[str]] = {}
        for connection, node in self.rabbit.connections(live).items():
            parts = connection.split(":")
            if len(parts) > 1 and parts[1] in pids:
                found.setdefault(pids[parts[1]], []).append(node)
        return found


def install() -> None:
    """Install what the three engine clusters need (Debian packages)."""
    for component in (rabbit_cluster, galera_component, etcd_component):
        component.install()


def main(argv: list[str] | None = None) -> None:
    """``install``, or ``up DIR``: the ha deployment in DIR until Ctrl-C
    or SIGTERM."""
    members.main(argv, __doc__, install, HA, lambda ha: (
        "endpoint %s, engines up in %s s, Pss %s MiB"
        % (ha.dep.endpoint, ha.engine_seconds, ha.pss_parts())))


if __name__ == "__main__":
    main()
