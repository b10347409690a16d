"""A real userspace iSCSI target (Debian's tgt) on a loopback port.

``install()`` (``python -m deploy.testbed.components.tgt install``)
installs Debian's ``tgt`` and ``tgt-rbd`` (its RBD backing store) and
``libiscsi7`` (the initiator common/libiscsi.py loads) when they are
missing (root only).  ``Tgt`` starts one ``tgtd`` in a caller's folder on
a loopback portal and a control port of its own, without systemd and
without /etc/tgt: targets are made through ``tgtadm``.  tgt implements
SCSI-3 persistent reservations (PREEMPT, not PREEMPT AND ABORT: see
docs/backends.md).

NOTE(ashlar): tgtd's control socket is ``/var/run/tgtd/socket.<port>``
whatever its folder; a control port no other tgtd uses is picked, and
its socket files are removed at stop.  tgtd ignores SIGTERM: ``stop``
deletes the targets, asks tgtd to exit, then kills what is left.
"""

import os
import random
import shutil
import subprocess
from pathlib import Path

from deploy.testbed import harness
from deploy.testbed.components import debian
from deploy.testbed.components import members
from drivers import tgtadm

PACKAGES = ("tgt", "tgt-rbd", "libiscsi7")
INSTALL_COMMAND = "python -m deploy.testbed.components.tgt install"
SOCKET_DIR = Path("/var/run/tgtd")
COMMAND_TIMEOUT = 30
#: tgtd's worker threads per backing store (its default is 16 a LUN).
IO_THREADS = 2
#: iSCSI parameters of each target, the iscsi driver's: tgt's defaults
#: (8 KiB segments, 64 KiB first burst) halve the write rate of 1 MiB
#: requests here (68 to 160 MiB/s, docs/backends.md).
TARGET_PARAMS = tgtadm.TARGET_PARAMS


def install() -> None:
    """Install tgt, its RBD backing store and libiscsi when missing."""
    if shutil.which("dpkg-query") and debian.install(
            "tgt", PACKAGES, INSTALL_COMMAND):
        print("tgt: ready")


def available() -> None:
    """Skip the calling test unless tgt and libiscsi are installed (fail
    it in CI)."""
    from common import libiscsi
    try:
        if os.geteuid() != 0:
            raise PermissionError("tgtd runs as root")
        for tool in ("tgtd", "tgtadm"):
            if not shutil.which(tool):
                raise FileNotFoundError("%s not found" % tool)
        libiscsi.library()
    except OSError as exc:
        harness.unavailable("tgt", FileNotFoundError(
            "%s; install it with `%s`" % (exc, INSTALL_COMMAND)))


def _control_port() -> int:
    """A tgtd control port whose socket no tgtd has made."""
    while True:
        port = random.randint(20000, 32000)
        if not (SOCKET_DIR / ("socket.%d" % port)).exists():
            return port


class Tgt(members.Members):
    """One ``tgtd``; ``portal`` is where initiators log in."""

    label = "tgt"
    prefix = "tgtd"

    def __init__(self, workdir: Path | str) -> None:
        super().__init__(workdir, size=1)
        self.port = members.ports(1)[0]
        self.control_port = _control_port()
        self.portal = "127.0.0.1:%d" % self.port
        self._tids: set[int] = set()

    def command(self, member: str) -> list[str]:
        return ["tgtd", "-f", "-C", str(self.control_port),
                "-t", str(IO_THREADS), "--iscsi", "portal=%s" % self.portal]

    def member_ready(self, member: str) -> bool:
        return "State: ready" in self.admin("--mode", "system", "--op",
                                            "show", check=False)

    def admin(self, *args: str, check: bool = True) -> str:
        """``tgtadm`` against this tgtd; its output."""
        proc = subprocess.run(
            ["tgtadm", "-C", str(self.control_port), "--lld", "iscsi",
             *args], capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
            check=False)
        if check and proc.returncode:
            raise RuntimeError("tgtadm %s: %s" % (" ".join(args),
                                                  proc.stderr.strip()))
        return proc.stdout

    def backing_stores(self) -> list[str]:
        """The backing-store types this tgtd offers (``rbd`` with tgt-rbd)."""
        shown = self.admin("--mode", "system", "--op", "show")
        section = shown.split("Backing stores:")[1].split("Device types:")[0]
        return [line.split()[0] for line in section.splitlines()
                if line.strip()]

    def add_target(self, iqn: str, backing: str, initiators: list[str],
                   bstype: str = "rdwr", lun: int = 1,
                   bsopts: str | None = None) -> int:
        """A target with one LUN that only ``initiators`` may log in to;
        its tid.  An RBD LUN: ``bstype="rbd"``, ``backing`` ``pool/image``,
        ``bsopts`` ``conf=<ceph.conf>;id=<cephx user>``."""
        tid = max(self._tids, default=0) + 1
        self.admin("--mode", "target", "--op", "new", "--tid", str(tid),
                   "--targetname", iqn)
        self._tids.add(tid)
        for name, value in TARGET_PARAMS.items():
            self.admin("--mode", "target", "--op", "update", "--tid",
                       str(tid), "--name", name, "--value", str(value))
        options = ("--bsopts", bsopts) if bsopts else ()
        self.admin("--mode", "logicalunit", "--op", "new", "--tid", str(tid),
                   "--lun", str(lun), "--backing-store", backing,
                   "--bstype", bstype, *options)
        for initiator in initiators:
            self.bind(tid, initiator)
        return tid

    def bind(self, tid: int, initiator: str) -> None:
        self.admin("--mode", "target", "--op", "bind", "--tid", str(tid),
                   "--initiator-name", initiator)

    def unbind(self, tid: int, initiator: str) -> None:
        self.admin("--mode", "target", "--op", "unbind", "--tid", str(tid),
                   "--initiator-name", initiator)

    def disconnect(self, tid: int, initiator: str) -> int:
        """Close every connection of ``initiator`` to target ``tid``;
        how many."""
        shown = self.admin("--mode", "conn", "--op", "show", "--tid",
                           str(tid))
        found = tgtadm.parse_connections(shown, initiator)
        for sid, cid in found:
            self.admin("--mode", "conn", "--op", "delete", "--tid",
                       str(tid), "--sid", sid, "--cid", cid)
        return len(found)

    def delete_target(self, tid: int) -> None:
        self.admin("--mode", "target", "--op", "delete", "--force",
                   "--tid", str(tid))
        self._tids.discard(tid)

    def stop(self) -> None:
        """Delete the targets and let tgtd exit; kill what is left."""
        if any(self.alive(name) for name in self.names):
            for tid in list(self._tids):
                self.delete_target(tid)
            self.admin("--mode", "system", "--op", "delete", check=False)
        super().stop()
        for suffix in ("", ".lock"):
            path = SOCKET_DIR / ("socket.%d%s" % (self.control_port, suffix))
            path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    members.main(argv, __doc__, install, Tgt, lambda target: (
        "tgt portal %s, tgtadm -C %d, backing stores %s" % (
            target.portal, target.control_port,
            ",".join(target.backing_stores()))))


if __name__ == "__main__":
    main()
