"""A real three-member etcd cluster (Debian's etcd-server 3.4) on loopback.

``install()`` (``python -m deploy.testbed.components.etcd install``)
installs Debian's ``etcd-server`` when it is missing (root only).  ``Etcd``
starts three members on ports of their own, their data in a caller's
folder, without systemd; tooz reaches it through etcd's gRPC gateway
(``etcd3+http://`` URLs, tooz's etcd3gw driver: ``pip install
'ashlar[ha]'``).  ``kill(member)`` is a ``kill -9``; ``start(member)``
brings it back on its data.
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
        if not shutil.which("etcd"):
            raise FileNotFoundError("etcd not found")
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

    def client_url(self, member: str) -> str:
        return "http://127.0.0.1:%d" % self.client_ports[member]

    def client_urls(self) -> list[str]:
        """Every member's client URL (etcdctl's ``--endpoints``)."""
        return [self.client_url(name) for name in self.names]

    def tooz_url(self, member: str) -> str:
        """tooz's etcd3gw URL of ``member``.  NOTE(ashlar): the driver
        takes one endpoint; a client that must outlive its member needs
        a front that moves (deploy/ha/README.md)."""
        return "etcd3+http://127.0.0.1:%d" % self.client_ports[member]

    def _peer_url(self, member: str) -> str:
        return "http://127.0.0.1:%d" % self.peer_ports[member]

    def command(self, member: str) -> list[str]:
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
        try:
            resp = requests.get(self.client_url(member) + "/health",
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
