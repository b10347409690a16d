"""A real three-member etcd cluster (Debian's etcd-server 3.4) on loopback.

``install()`` (``python -m deploy.testbed.components.etcd install``)
installs Debian's ``etcd-server`` when it is missing (root only).  ``Etcd``
starts three members on ports of their own, their data in a caller's
folder, without systemd; tooz reaches it through etcd's gRPC gateway
(``etcd3+http://`` URLs, tooz's etcd3gw driver: ``pip install
'ashlar[ha]'``).  ``kill(member)`` is a ``kill -9``; ``start(member)``
brings it back on its data.  ``front`` is an haproxy in front of the
three (``tooz_url()``), so that a lock client outlives the member it was
talking to.
"""

import shutil
import uuid

import requests

from deploy.testbed import harness
from deploy.testbed.components import debian
from deploy.testbed.components import members

PACKAGES = ("etcd-server",)
INSTALL_COMMAND = "python -m deploy.testbed.components.etcd install"
HTTP_TIMEOUT = 2
FRONT = "front"
#: haproxy in front of the members, for clients that take one endpoint
#: (tooz's etcd3gw driver).  NOTE(ashlar): a TCP check, not
#: ``httpchk GET /health``: etcd answers 503 on ``/health`` while it
#: elects a leader, and checks that fail on every member at once would
#: leave no server at all; a request during an election waits for it
#: instead.  A connection refused by a dead member is sent to the next
#: one at once (``redispatch``), before the check marks it down.
FRONT_CONFIG = """\
global
    maxconn 256
    nbthread 1
defaults
    mode tcp
    timeout connect 1s
    timeout client 300s
    timeout server 300s
    retries 3
    option redispatch 1
listen etcd
    bind 127.0.0.1:{port}
    balance roundrobin
    default-server inter 500 rise 2 fall 2 on-marked-down shutdown-sessions
{servers}
"""


def install() -> None:
    """Install Debian's etcd-server when it is missing."""
    if shutil.which("dpkg-query") and debian.install(
            "etcd", PACKAGES, INSTALL_COMMAND):
        print("etcd: ready")


def available() -> None:
    """Skip the calling test unless etcd and tooz's etcd3gw driver are
    installed (fail it in CI)."""
    try:
        import etcd3gw  # noqa: F401
        import tooz  # noqa: F401
        for tool in ("etcd", "haproxy"):
            if not shutil.which(tool):
                raise FileNotFoundError("%s not found" % tool)
    except (ImportError, FileNotFoundError) as exc:
        harness.unavailable("etcd", FileNotFoundError(
            "%s; install it with `%s` and `pip install -e '.[ha]'`"
            % (exc, INSTALL_COMMAND)))


class Etcd(members.Members):
    """Members ``e1``, ``e2``, ``e3``, each with a client and a peer port.

    NOTE(ashlar): tuned for a small machine: ``--snapshot-count`` keeps
    10,000 raft entries in memory instead of 100,000, and the backend
    quota is 256 MiB (etcd's is 2 GiB); elections keep etcd's defaults
    (100 ms heartbeats, 1 s election timeout).
    """

    label = "etcd"
    prefix = "e"

    def __init__(self, workdir, size: int = 3) -> None:
        super().__init__(workdir, size)
        self.client_ports, self.peer_ports = members.port_maps(self.names, 2)
        self.token = "ashlar-%s" % uuid.uuid4().hex[:8]
        self.front_port = members.ports(1)[0]

    def client_url(self, member: str) -> str:
        return "http://127.0.0.1:%d" % self.client_ports[member]

    def client_urls(self) -> list[str]:
        """Every member's client URL (etcdctl's ``--endpoints``)."""
        return [self.client_url(name) for name in self.names]

    def tooz_url(self, member: str | None = None) -> str:
        """tooz's etcd3gw URL of ``member`` (None: the front).
        NOTE(ashlar): the driver takes one endpoint; a client that must
        outlive its member needs the front (deploy/ha/README.md)."""
        port = self.front_port if member is None else self.client_ports[
            member]
        return "etcd3+http://127.0.0.1:%d" % port

    def prepare(self) -> None:
        servers = "\n".join("    server %s 127.0.0.1:%d check" % (
            name, self.client_ports[name]) for name in self.names)
        (self.dir / "front.cfg").write_text(FRONT_CONFIG.format(
            port=self.front_port, servers=servers))

    def start_all(self) -> None:
        super().start_all()
        self.start(FRONT)

    def _peer_url(self, member: str) -> str:
        return "http://127.0.0.1:%d" % self.peer_ports[member]

    def command(self, member: str) -> list[str]:
        if member == FRONT:
            return [shutil.which("haproxy") or "haproxy", "-db", "-f",
                    str(self.dir / "front.cfg")]
        initial = ",".join("%s=%s" % (name, self._peer_url(name))
                           for name in self.names)
        return ["etcd", "--name", member,
                "--data-dir", str(self.dir / member),
                "--listen-client-urls", self.client_url(member),
                "--advertise-client-urls", self.client_url(member),
                "--listen-peer-urls", self._peer_url(member),
                "--initial-advertise-peer-urls", self._peer_url(member),
                "--initial-cluster", initial,
                "--initial-cluster-token", self.token,
                "--initial-cluster-state", "new",
                "--snapshot-count", "10000",
                "--quota-backend-bytes", str(256 << 20),
                "--logger", "zap"]

    def status(self, member: str) -> dict:
        """``/v3/maintenance/status`` of ``member`` (its id, the leader's)."""
        resp = requests.post(self.client_url(member)
                             + "/v3/maintenance/status", json={},
                             timeout=HTTP_TIMEOUT)
        resp.raise_for_status()
        return resp.json()

    def member_ready(self, member: str) -> bool:
        url = "http://127.0.0.1:%d" % self.front_port if member == FRONT \
            else self.client_url(member)
        try:
            resp = requests.get(url + "/health",
                                timeout=HTTP_TIMEOUT)
        except requests.RequestException:
            return False
        return resp.status_code == 200 and resp.json()["health"] == "true"

    def cluster_ready(self) -> bool:
        return self.leader() is not None

    def leader(self) -> str | None:
        """The member that leads now, as the live members agree on it
        (None while they do not)."""
        ids, leaders = {}, set()
        for name in self.names:
            if not self.alive(name):
                continue
            try:
                status = self.status(name)
            except requests.RequestException:
                return None
            ids[status["header"]["member_id"]] = name
            leaders.add(status.get("leader"))
        if len(leaders) != 1:
            return None
        return ids.get(leaders.pop())


def main(argv: list[str] | None = None) -> None:
    members.main(argv, __doc__, install, Etcd, lambda cluster: (
        "etcd endpoints: %s, leader %s" % (",".join(cluster.client_urls()),
                                           cluster.leader())))


if __name__ == "__main__":
    main()
