"""A real three-node RabbitMQ cluster (Debian's 3.10) on loopback.

The machine's own broker (5672) is left alone: each node here has its own
node name (``ashlar-<run>-r1@localhost``), AMQP and distribution ports,
mnesia and log folders, config and plugins files and Erlang cookie, all in
a caller's folder, set through the ``RABBITMQ_*`` variables that
``rabbitmq-env`` reads (its ``/etc`` file is not).  The nodes start at
once; the second and third ``join_cluster`` the first.  A vhost and a user
come from a definitions file every node loads at boot.  ``kill(member)``
is a ``kill -9``; ``start(member)`` brings the node back on its data, and
it rejoins by itself.  ``install()`` (``python -m
deploy.testbed.components.rabbit_cluster install``) installs Debian's
``rabbitmq-server`` when it is missing (the functional tests' own broker
is the same package).
"""

import base64
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import uuid
from pathlib import Path
from urllib import parse

from deploy.testbed import harness
from deploy.testbed.components import debian
from deploy.testbed.components import members

PACKAGES = ("rabbitmq-server",)
INSTALL_COMMAND = ("python -m deploy.testbed.components.rabbit_cluster "
                   "install")
#: Debian's own scripts: /usr/sbin's would switch to the rabbitmq user.
RABBITMQ_BIN = Path("/usr/lib/rabbitmq/bin")
CTL_TIMEOUT = 120

#: NOTE(ashlar): small memory on a 2-core machine: one scheduler and no
#: busy-waiting schedulers (an idle node then costs no CPU), a process
#: table of 64 Ki entries instead of 1 Mi.
ERL_ARGS = ("-kernel inet_dist_use_interface {127,0,0,1} "
            "+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none")
MAX_PROCESSES = "65536"

#: rabbitmq.conf of a node.  NOTE(ashlar): a memory alarm at 256 MiB and a
#: Raft WAL of 32 MiB (its in-memory tables are flushed when it rolls
#: over; RabbitMQ's default is 512 MiB) keep each node small.
CONFIG = """\
listeners.tcp.1 = 127.0.0.1:{port}
vm_memory_high_watermark.absolute = 256MiB
disk_free_limit.absolute = 64MiB
raft.wal_max_size_bytes = 33554432
collect_statistics_interval = 30000
load_definitions = {definitions}
"""


def install() -> None:
    """Install Debian's rabbitmq-server when it is missing."""
    if shutil.which("dpkg-query") and debian.install(
            "rabbit_cluster", PACKAGES, INSTALL_COMMAND):
        print("rabbit_cluster: ready")


def available() -> None:
    """Skip the calling test unless RabbitMQ's server and CLI are here
    (fail it in CI)."""
    for tool in ("rabbitmq-server", "rabbitmqctl"):
        if not (RABBITMQ_BIN / tool).exists():
            harness.unavailable("a RabbitMQ cluster", FileNotFoundError(
                "%s missing; install it with `%s`"
                % (RABBITMQ_BIN / tool, INSTALL_COMMAND)))


def password_hash(password: str) -> str:
    """RabbitMQ's ``rabbit_password_hashing_sha256`` of ``password``
    (a definitions file carries hashes, not passwords)."""
    salt = secrets.token_bytes(4)
    digest = hashlib.sha256(salt + password.encode()).digest()
    return base64.b64encode(salt + digest).decode()


class RabbitCluster(members.Members):
    """Nodes ``r1``, ``r2``, ``r3``; one vhost and one user with every
    right on it (``user``, ``password``, ``vhost``)."""

    label = "RabbitMQ"
    prefix = "r"

    def __init__(self, workdir, size: int = 3) -> None:
        super().__init__(workdir, size)
        run = uuid.uuid4().hex[:6]
        self.nodenames = {name: "ashlar-%s-%s@localhost" % (run, name)
                          for name in self.names}
        self.ports, self.dist_ports = members.port_maps(self.names, 2)
        self.vhost = "ashlar"
        self.user = "ashlar"
        self.password = secrets.token_hex(12)

    # -- URLs -----------------------------------------------------------------
    def transport_url(self, names: list[str] | None = None) -> str:
        """oslo.messaging's URL naming every node (or ``names``), in order."""
        hosts = ",".join("%s:%s@127.0.0.1:%d" % (
            self.user, self.password, self.ports[name])
            for name in names or self.names)
        return "rabbit://%s/%s" % (hosts, parse.quote(self.vhost, safe=""))

    # -- the nodes --------------------------------------------------------------
    def prepare(self) -> None:
        cookie = self.dir / ".erlang.cookie"
        cookie.write_text(secrets.token_hex(16))
        cookie.chmod(0o600)
        (self.dir / "rabbitmq-env.conf").write_text("")
        (self.dir / "enabled_plugins").write_text("[].\n")
        (self.dir / "definitions.json").write_text(json.dumps({
            "vhosts": [{"name": self.vhost}],
            "users": [{"name": self.user, "tags": "",
                       "password_hash": password_hash(self.password),
                       "hashing_algorithm":
                           "rabbit_password_hashing_sha256"}],
            "permissions": [{"user": self.user, "vhost": self.vhost,
                             "configure": ".*", "write": ".*",
                             "read": ".*"}]}))
        for name in self.names:
            (self.dir / name).mkdir(exist_ok=True)
            (self.dir / name / "rabbitmq.conf").write_text(CONFIG.format(
                port=self.ports[name],
                definitions=self.dir / "definitions.json"))

    def command(self, member: str) -> list[str]:
        return [str(RABBITMQ_BIN / "rabbitmq-server")]

    def environ(self, member: str) -> dict[str, str]:
        """What ``rabbitmq-env`` reads for node ``member`` (and its CLI)."""
        node = self.dir / member
        return dict(
            os.environ, HOME=str(self.dir),
            RABBITMQ_CONF_ENV_FILE=str(self.dir / "rabbitmq-env.conf"),
            RABBITMQ_NODENAME=self.nodenames[member],
            RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
            RABBITMQ_NODE_PORT=str(self.ports[member]),
            RABBITMQ_DIST_PORT=str(self.dist_ports[member]),
            RABBITMQ_CONFIG_FILE=str(node / "rabbitmq.conf"),
            RABBITMQ_MNESIA_BASE=str(node / "mnesia"),
            RABBITMQ_LOG_BASE=str(node / "log"),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(self.dir / "enabled_plugins"),
            RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=ERL_ARGS,
            RABBITMQ_MAX_NUMBER_OF_PROCESSES=MAX_PROCESSES,
            ERL_EPMD_ADDRESS="127.0.0.1")

    def member_ready(self, member: str) -> bool:
        """The node's AMQP listener is open (the last step of its boot)."""
        try:
            socket.create_connection(("127.0.0.1", self.ports[member]),
                                     timeout=1).close()
        except OSError:
            return False
        return True

    def form(self) -> None:
        """``join_cluster`` the first node from the others, one at a time.

        NOTE(ashlar): two nodes joining at once change the cluster's Mnesia
        schema together; under load one of them failed to start its app
        again (``{mnesia_app, start}``, a CI run's set-up error).
        """
        first = self.nodenames[self.names[0]]
        for member in self.names[1:]:
            self.ctl(member, "stop_app")
            self.ctl(member, "join_cluster", first)
            self.ctl(member, "start_app")

    def cluster_ready(self) -> bool:
        return self.running_nodes(self.names[0]) == {
            self.nodenames[name] for name in self.names}

    def running_nodes(self, member: str) -> set[str]:
        """The nodes running in the cluster, as ``member`` sees them."""
        status = json.loads(self.ctl(member, "cluster_status",
                                     "--formatter", "json"))
        return set(status["running_nodes"])

    def connections(self, member: str) -> dict[str, str]:
        """The client connections: their names (oslo.messaging's
        ``<process>:<pid>:<uuid>``) -> the member they are on, as
        ``member`` lists them."""
        by_port = {port: name for name, port in self.ports.items()}
        rows = json.loads(self.ctl(member, "list_connections", "port",
                                   "client_properties", "--formatter",
                                   "json"))
        return {dict((key, value) for key, _kind, value
                     in row["client_properties"]).get("connection_name", ""):
                by_port.get(row["port"], str(row["port"])) for row in rows}

    def queues(self, member: str) -> list[dict]:
        """The vhost's queues: name, type, leader and members (quorum)."""
        return json.loads(self.ctl(member, "list_queues", "-p", self.vhost,
                                   "name", "type", "leader", "members",
                                   "--formatter", "json"))

    def ctl(self, member: str, *args: str) -> str:
        """``rabbitmqctl -q -n <member's node> ARGS``; its output."""
        argv = [str(RABBITMQ_BIN / "rabbitmqctl"), "-q", "-n",
                self.nodenames[member], *args]
        proc = subprocess.run(argv, env=self.environ(member),
                              capture_output=True, text=True,
                              timeout=CTL_TIMEOUT, check=False)
        if proc.returncode:
            raise RuntimeError("%s: %s%s" % (" ".join(argv), proc.stdout,
                                             proc.stderr))
        return proc.stdout


def main(argv: list[str] | None = None) -> None:
    members.main(argv, __doc__, install, RabbitCluster, lambda cluster: (
        "transport_url = %s" % cluster.transport_url()))


if __name__ == "__main__":
    main()
