"""A test host of its own: a network namespace joined to this one by a
veth pair, for tests of what tells hosts apart by address (a fence by a
hypervisor's IP).  Both ends are private addresses of this machine's own
sandbox; nothing leaves it.  Needs root and iproute2 (``ip``)."""

import os
import shutil
import subprocess
import uuid

from deploy.testbed import harness


def available() -> None:
    """Skip the calling test unless namespaces can be made (fail in CI)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        harness.unavailable("network namespaces", FileNotFoundError(
            "root and iproute2's `ip` are needed (Debian: iproute2)"))


class Host:
    """A namespace with one veth; ``address`` is its side, ``gateway``
    this side (where a service the host reaches listens)."""

    def __init__(self, subnet: int = 213) -> None:
        tag = uuid.uuid4().hex[:6]
        self.name = "ashlar-%s" % tag
        self._here, self._there = "ash%sh" % tag, "ash%sn" % tag
        self.gateway = "10.%d.0.1" % subnet
        self.address = "10.%d.0.2" % subnet

    def __enter__(self) -> "Host":
        try:
            self._ip("netns", "add", self.name)
            self._ip("link", "add", self._here, "type", "veth", "peer",
                     "name", self._there)
            self._ip("link", "set", self._there, "netns", self.name)
            self._ip("addr", "add", self.gateway + "/30", "dev", self._here)
            self._ip("link", "set", self._here, "up")
            for argv in (("addr", "add", self.address + "/30", "dev",
                          self._there), ("link", "set", self._there, "up"),
                         ("link", "set", "lo", "up")):
                self._ip("netns", "exec", self.name, "ip", *argv)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        subprocess.run(["ip", "netns", "del", self.name], check=False,
                       capture_output=True)
        subprocess.run(["ip", "link", "del", self._here], check=False,
                       capture_output=True)

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    @staticmethod
    def _ip(*argv: str) -> None:
        subprocess.run(["ip", *argv], check=True, capture_output=True,
                       timeout=30)
