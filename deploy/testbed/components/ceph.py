"""A real single-node Ceph cluster for tests and benchmarks.

``install()`` (``python -m deploy.testbed.components.ceph install``)
installs Debian's Ceph packages when they are missing (root only) and
links the ``rados`` and ``rbd`` bindings into the running interpreter's
site-packages, so a virtualenv (tox's included) imports them.  ``Ceph``
starts one mon, one mgr and one BlueStore OSD on a sparse file, all in a
caller's folder, on loopback ports of its own, without systemd; a pool
(size 1) and a cephx client that may use only that pool are made for
Ashlar.  ``stop()`` kills the daemons; the folder goes with the test run.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

from deploy.testbed import harness
from deploy.testbed.components import debian

PACKAGES = ("ceph-mon", "ceph-mgr", "ceph-osd", "ceph-common",
            "python3-rados", "python3-rbd")
BINDINGS = ("rados", "rbd")
DIST_PACKAGES = Path("/usr/lib/python3/dist-packages")
INSTALL_COMMAND = "python -m deploy.testbed.components.ceph install"
READY_TIMEOUT = 120.0
COMMAND_TIMEOUT = 60


# -- installation ---------------------------------------------------------
def _binding_files() -> list[Path]:
    tag = sysconfig.get_config_var("EXT_SUFFIX")
    return [DIST_PACKAGES / (name + tag) for name in BINDINGS]


def install() -> None:
    """Install the packages (when missing) and link the bindings here."""
    if shutil.which("dpkg-query") and not debian.install(
            "ceph", PACKAGES, INSTALL_COMMAND):
        return
    site = Path(sysconfig.get_paths()["platlib"])
    for source in _binding_files():
        if not source.exists():
            sys.exit("ceph: %s is missing (python3-%s not installed for this "
                     "Python's version?)" % (source, source.name.split(".")[0]))
        target = site / source.name
        if not target.exists():
            target.symlink_to(source)
            print("ceph: linked %s -> %s" % (target, source))
    print("ceph: ready (bindings in %s)" % site)


def available() -> None:
    """Skip the calling test unless Ceph and its bindings are installed
    (fail it in CI)."""
    try:
        import rados  # noqa: F401
        import rbd  # noqa: F401
        for daemon in ("ceph-mon", "ceph-mgr", "ceph-osd", "ceph"):
            if not shutil.which(daemon):
                raise FileNotFoundError("%s not found" % daemon)
    except (ImportError, FileNotFoundError) as exc:
        harness.unavailable("Ceph", FileNotFoundError(
            "%s; install it with `%s`" % (exc, INSTALL_COMMAND)))


# -- the cluster ----------------------------------------------------------
CONFIG = """\
[global]
fsid = {fsid}
mon initial members = a
mon host = {mon_host}
public addr = {address}
cluster addr = {address}
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
keyring = {dir}/$cluster.$name.keyring
run dir = {dir}/run
admin socket = {dir}/run/$cluster-$name.$pid.asok
log file = {dir}/log/$cluster-$name.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mgr stats period = 1
mon data avail warn = 2
mon data avail crit = 1

[mon]
mon data = {dir}/mon/$cluster-$id
keyring = $mon_data/keyring

[mgr]
mgr data = {dir}/mgr/$cluster-$id
keyring = $mgr_data/keyring

[osd]
osd data = {dir}/osd/$cluster-$id
keyring = $osd_data/keyring
osd objectstore = bluestore
bluestore block path = {dir}/osd/$cluster-$id.block
bluestore block create = true
bluestore block size = {osd_bytes}
osd memory target = 536870912
osd max object name len = 256
osd max object namespace len = 64
"""


class Ceph:
    """One throwaway cluster in ``workdir``; also a context manager.

    :ivar conf: ceph.conf path (monitors on this cluster's own ports).
    :ivar pool: The RBD pool made for Ashlar.
    :ivar client: The cephx client name (``client.<client>``) that may use
        only ``pool``; its keyring is :meth:`keyring` ``(client)``.
    """

    def __init__(self, workdir: Path | str, pool: str = "volumes",
                 client: str = "ashlar", osd_gib: int = 10,
                 compute_client: str = "compute",
                 address: str = "127.0.0.1") -> None:
        """:param address: where the daemons listen (loopback; a test of
            hosts in network namespaces gives its veth's host side)."""
        self.dir = Path(workdir)
        self.address = address
        self.pool = pool
        self.client = client
        self.compute_client = compute_client
        self.osd_gib = osd_gib
        self.conf = self.dir / "ceph.conf"
        self.mon_ports = (harness.free_port(), harness.free_port())
        self.procs: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> "Ceph":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def mon_addrs(self) -> str:
        """The monitor's msgr2 and msgr1 addresses, as ceph.conf has them."""
        v2, v1 = self.mon_ports
        return "[v2:%s:%d,v1:%s:%d]" % (self.address, v2, self.address, v1)

    def keyring(self, client: str = "admin") -> Path:
        return self.dir / ("ceph.client.%s.keyring" % client)

    def start(self) -> "Ceph":
        """Make, start and wait for the cluster, pool and client."""
        for sub in ("mon/ceph-a", "mgr/ceph-x", "osd/ceph-0", "run", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(CONFIG.format(
            fsid=uuid.uuid4(), dir=self.dir, osd_bytes=self.osd_gib << 30,
            mon_host=self.mon_addrs, address=self.address))
        try:
            self._start_mon()
            self._start_mgr_and_osd()
            self._make_pool()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_mon(self) -> None:
        mon_keyring = self.dir / "mon.keyring"
        admin = self.keyring()
        self._tool("ceph-authtool", "--create-keyring", mon_keyring,
                   "--gen-key", "-n", "mon.", "--cap", "mon", "allow *")
        self._tool("ceph-authtool", "--create-keyring", admin, "--gen-key",
                   "-n", "client.admin", "--cap", "mon", "allow *",
                   "--cap", "osd", "allow *", "--cap", "mgr", "allow *")
        self._tool("ceph-authtool", mon_keyring, "--import-keyring", admin)
        fsid = next(line.split("=")[1].strip()
                    for line in self.conf.read_text().splitlines()
                    if line.startswith("fsid"))
        self._tool("monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                   self.mon_addrs, self.dir / "monmap")
        self._tool("ceph-mon", "-c", self.conf, "--mkfs", "-i", "a",
                   "--monmap", self.dir / "monmap", "--keyring", mon_keyring)
        self._daemon("mon.a", "ceph-mon", "-i", "a")
        harness.wait_for(lambda: self._ceph_ok("mon", "stat"),
                         timeout=READY_TIMEOUT, what="the Ceph monitor")

    def _start_mgr_and_osd(self) -> None:
        self.ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr",
                  "osd", "allow *", "-o", self.dir / "mgr/ceph-x/keyring")
        self._daemon("mgr.x", "ceph-mgr", "-i", "x")
        osd_uuid = str(uuid.uuid4())
        secret = self._tool("ceph-authtool", "--gen-print-key").strip()
        osd_id = self.ceph("osd", "new", osd_uuid, "-i", "-",
                           stdin=json.dumps({"cephx_secret": secret}))
        assert osd_id.strip() == "0", osd_id
        self._tool("ceph-authtool", "--create-keyring",
                   self.dir / "osd/ceph-0/keyring", "--name", "osd.0",
                   "--add-key", secret)
        self._tool("ceph-osd", "-c", self.conf, "-i", "0", "--mkfs",
                   "--osd-uuid", osd_uuid)
        self._daemon("osd.0", "ceph-osd", "-i", "0")

    def _make_pool(self) -> None:
        self.add_client(self.client)
        self.add_compute_client(self.compute_client)
        self.add_pool(self.pool)

    def add_pool(self, pool: str) -> None:
        """An RBD pool (size 1), once the cluster is clean again."""
        self.ceph("osd", "pool", "create", pool, "8", "8")
        self.ceph("osd", "pool", "set", pool, "size", "1",
                  "--yes-i-really-mean-it")
        self.ceph("osd", "pool", "application", "enable", pool, "rbd")
        harness.wait_for(self._ready, timeout=READY_TIMEOUT,
                         interval=0.25, what="Ceph HEALTH_OK, PGs clean")
        self._tool("rbd", "-c", self.conf, "pool", "init", pool)

    def remove_pool(self, pool: str) -> None:
        self.ceph("osd", "pool", "delete", pool, pool,
                  "--yes-i-really-really-mean-it")

    def add_client(self, name: str, pool: str | None = None,
                   reads: str | None = None) -> Path:
        """A cephx client with Cinder's caps on ``pool`` (default: the
        pool made for Ashlar), read-only ones on ``reads`` if given, plus
        lifting blocklist entries (an unfence); its keyring."""
        pool = pool or self.pool
        osd = "profile rbd pool=%s" % pool
        if reads:
            osd += ", profile rbd-read-only pool=%s" % reads
        keyring = self.keyring(name)
        self.ceph("auth", "get-or-create", "client.%s" % name,
                  "mon", 'profile rbd, allow command "osd blocklist"',
                  "osd", osd, "mgr", "profile rbd pool=%s" % pool,
                  "-o", keyring)
        return keyring

    def add_compute_client(self, name: str) -> Path:
        """A compute host's cephx client, with the caps docs/fencing.md
        recommends: librbd on the pool, and ``profile rbd`` alone on the
        monitors, which may add a blocklist entry (any RBD client may, to
        break a dead client's lock) but never lift one; its keyring."""
        keyring = self.keyring(name)
        self.ceph("auth", "get-or-create", "client.%s" % name,
                  "mon", "profile rbd", "osd", "profile rbd pool=%s"
                  % self.pool, "-o", keyring)
        return keyring

    def ceph_as(self, client: str, *args: object) -> str:
        """Run the ``ceph`` command as ``client.<client>``."""
        return self._tool("ceph", "-c", self.conf, "--connect-timeout", "15",
                          "--id", client, "--keyring", self.keyring(client),
                          *args)

    def blocklist(self) -> set[str]:
        """The addresses on the OSD blocklist now."""
        # NOTE: Ceph 16 prints a newline, the entries, then the (empty)
        # list of range entries: the first JSON value is the one.
        entries, _end = json.JSONDecoder().raw_decode(self.ceph(
            "osd", "blocklist", "ls", "--format", "json").lstrip())
        return {entry["addr"] for entry in entries}

    def _ready(self) -> bool:
        self._check_alive()
        if not self.ceph("health").startswith("HEALTH_OK"):
            return False
        summary = json.loads(self.ceph("pg", "stat", "--format", "json"))
        pgs = summary["pg_summary"]
        clean = sum(state["num"] for state in pgs["num_pg_by_state"]
                    if state["name"] == "active+clean")
        return pgs["num_pgs"] > 0 and clean == pgs["num_pgs"]

    def _check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError("ceph %s exited (%s); see %s" % (
                    name, proc.returncode, self.dir / "log"))

    def _daemon(self, name: str, binary: str, *args: str) -> None:
        with open(self.dir / "log" / ("%s.stdout" % name), "wb") as out:
            self.procs[name] = subprocess.Popen(
                [binary, "-c", str(self.conf), "-f", *args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                start_new_session=True)

    def _tool(self, *argv: object, stdin: str | None = None) -> str:
        result = subprocess.run([str(a) for a in argv], input=stdin,
                                capture_output=True, text=True,
                                timeout=COMMAND_TIMEOUT, check=False)
        if result.returncode:
            raise RuntimeError("%s failed (%d): %s" % (
                " ".join(map(str, argv)), result.returncode,
                result.stderr.strip()))
        return result.stdout

    def ceph(self, *args: object, stdin: str | None = None) -> str:
        """Run the ``ceph`` command as client.admin on this cluster."""
        return self._tool("ceph", "-c", self.conf, "--connect-timeout", "15",
                          *args, stdin=stdin)

    def ceph_rbd(self, *args: object) -> str:
        """Run the ``rbd`` command as client.admin on this cluster."""
        return self._tool("rbd", "-c", self.conf, *args)

    def _ceph_ok(self, *args: str) -> bool:
        self._check_alive()
        try:
            self.ceph(*args)
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        return True

    def stop(self) -> None:
        """Kill the daemons (the cluster is thrown away)."""
        for name in ("osd.0", "mgr.x", "mon.a"):
            proc = self.procs.pop(name, None)
            if proc is None:
                continue
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install Ceph and link its bindings")
    up = sub.add_parser("up", help="start a cluster in DIR until Ctrl-C")
    up.add_argument("dir")
    args = parser.parse_args(argv)
    if args.command == "install":
        install()
        return
    # SIGTERM (a script's kill) stops the daemons too, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Ceph(args.dir) as cluster:
        print("ceph.conf: %s\nclient.%s keyring: %s" % (
            cluster.conf, cluster.client, cluster.keyring(cluster.client)),
            flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
