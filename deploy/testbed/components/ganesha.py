"""A real userspace NFS server (Debian's nfs-ganesha, VFS backend).

``install()`` (``python -m deploy.testbed.components.ganesha install``)
installs Debian's ``nfs-ganesha``, ``nfs-ganesha-vfs``, ``rpcbind`` and
``libnfs13`` (the client common/libnfs.py loads) when they are missing
(root only).  ``Ganesha`` exports one folder of a caller's over NFSv3 and
NFSv4 on loopback ports of its own, its configuration, log, pid file and
recovery folder in that folder, without systemd and without /etc/ganesha.

NOTE(ashlar): ganesha 4.3 stops (a fatal log) when it cannot register
NFSv3 and MOUNT with rpcbind, whose socket is ``/run/rpcbind.sock`` and
port 111, one per machine.  So a private ``rpcbind`` runs in network and
mount namespaces of its own with ``/run`` bound to ``<dir>/run``, and
ganesha runs in a mount namespace of its own with the same ``/run``: it
registers there, and nothing on this machine's rpcbind (if any) changes.
Clients give the ports in the URL (``nfsport``/``mountport``, libnfs's
options) and never ask a portmapper.  Needs root and util-linux's
``unshare``.
"""

import os
import shutil
from pathlib import Path

from deploy.testbed import harness
from deploy.testbed.components import debian
from deploy.testbed.components import members

PACKAGES = ("nfs-ganesha", "nfs-ganesha-vfs", "rpcbind", "libnfs13")
INSTALL_COMMAND = "python -m deploy.testbed.components.ganesha install"

CONFIG = """\
NFS_CORE_PARAM {{
    Bind_addr = 127.0.0.1;
    NFS_Port = {nfs_port};
    MNT_Port = {mount_port};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
    Protocols = 3, 4;
}}
NFS_KRB5 {{ Active_krb5 = false; }}
NFSv4 {{
    Graceless = true;
    RecoveryBackend = fs;
    RecoveryRoot = {dir}/recovery;
}}
EXPORT {{
    Export_Id = 1;
    Path = {export};
    Pseudo = /export;
    Access_Type = RW;
    Squash = No_Root_Squash;
    Protocols = 3, 4;
    Transports = TCP;
    SecType = sys;
    FSAL {{ Name = VFS; }}
}}
"""


def install() -> None:
    """Install ganesha, its VFS backend, rpcbind and libnfs when missing."""
    if shutil.which("dpkg-query") and debian.install(
            "ganesha", PACKAGES, INSTALL_COMMAND):
        print("ganesha: ready")


def available() -> None:
    """Skip the calling test unless ganesha and libnfs are installed (fail
    it in CI)."""
    from common import libnfs
    try:
        if os.geteuid() != 0:
            raise PermissionError("namespaces for rpcbind need root")
        for tool in ("ganesha.nfsd", "rpcbind", "unshare"):
            if not shutil.which(tool):
                raise FileNotFoundError("%s not found" % tool)
        libnfs.library()
    except OSError as exc:
        harness.unavailable("nfs-ganesha", FileNotFoundError(
            "%s; install it with `%s`" % (exc, INSTALL_COMMAND)))


class Ganesha(members.Members):
    """``rpcbind`` then ``ganesha``; ``url`` is the export's NFSv3 URL
    for libnfs, ``export`` the folder it serves."""

    label = "nfs-ganesha"

    def __init__(self, workdir: Path | str) -> None:
        super().__init__(workdir, size=0)
        self.names = ["rpcbind", "ganesha"]
        self.nfs_port, self.mount_port = members.ports(2)
        self.export = self.dir / "export"
        self.url = "nfs://127.0.0.1%s?nfsport=%d&mountport=%d" % (
            self.export, self.nfs_port, self.mount_port)
        #: The same export over NFSv4 (libnfs 4.0's v4 is partial:
        #: docs/backends.md).
        self.url_v4 = "nfs://127.0.0.1/export?version=4&nfsport=%d" % (
            self.nfs_port)

    def prepare(self) -> None:
        for sub in ("run", "recovery", "export"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "ganesha.conf").write_text(CONFIG.format(
            nfs_port=self.nfs_port, mount_port=self.mount_port,
            dir=self.dir, export=self.export))

    def command(self, member: str) -> list[str]:
        bind_run = "mount --bind %s /run && exec " % (self.dir / "run")
        if member == "rpcbind":
            return ["unshare", "--net", "--mount", "sh", "-c",
                    bind_run + "rpcbind -f"]
        return ["unshare", "--mount", "sh", "-c", bind_run + (
            "ganesha.nfsd -F -f %(d)s/ganesha.conf -L %(d)s/log/ganesha.log "
            "-p %(d)s/ganesha.pid -N NIV_EVENT" % {"d": self.dir})]

    def start_all(self) -> None:
        """rpcbind first: ganesha registers with it as it starts."""
        for name in self.names:
            self.start(name)

    def member_ready(self, member: str) -> bool:
        if member == "rpcbind":
            return (self.dir / "run" / "rpcbind.sock").exists()
        from common import libnfs
        try:
            libnfs.Share(self.url, timeout_ms=2000).close()
        except libnfs.Error:
            return False
        return True


def main(argv: list[str] | None = None) -> None:
    members.main(argv, __doc__, install, Ganesha, lambda server: (
        "nfs-ganesha export %s: %s" % (server.export, server.url)))


if __name__ == "__main__":
    main()
