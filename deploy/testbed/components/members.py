"""What the three-member HA clusters of functional tests share.

``Members`` runs one daemon per member, each in a session of its own (so
``kill(member)`` is a ``kill -9`` of that member's whole process group,
what a crashed host does to it), with its log in the cluster's folder; a
subclass says how a member is started (``command``, ``environ``) and when
it is healthy (``member_ready``, ``cluster_ready``).  ``start_seconds``
and ``pss_mib()`` are what the HA deployment costs (deploy/ha/README.md).
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import procmem
from deploy.testbed import harness

MEMBER_TIMEOUT = 120.0
STOP_TIMEOUT = 30


class Members:
    """Three (``size``) members of one cluster, named ``<prefix>1`` ...;
    also a context manager that starts them all and kills them all.

    :ivar start_seconds: how long ``__enter__`` took to have a healthy
        cluster (set once it has).
    """

    label = "cluster"
    prefix = "m"

    def __init__(self, workdir: Path | str, size: int = 3) -> None:
        self.dir = Path(workdir)
        self.names = ["%s%d" % (self.prefix, i) for i in range(1, size + 1)]
        self.procs: dict[str, subprocess.Popen] = {}
        self.start_seconds: float | None = None

    # -- what a subclass says -----------------------------------------------
    def command(self, member: str) -> list[str]:
        raise NotImplementedError

    def environ(self, member: str) -> dict[str, str]:
        """The member's environment (default: this process's)."""
        return dict(os.environ)

    def prepare(self) -> None:
        """Write what every member needs before the first one starts."""

    def member_ready(self, member: str) -> bool:
        """Whether ``member`` answers (polled after its start)."""
        raise NotImplementedError

    def cluster_ready(self) -> bool:
        """Whether the members form one healthy cluster."""
        return True

    def form(self) -> None:
        """Join the started members into a cluster, when that is a step
        of its own (RabbitMQ's ``join_cluster``)."""

    # -- the cluster ----------------------------------------------------------
    def __enter__(self):
        started = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            self.prepare()
            self.start_all()
            self.form()
            self.wait(self.cluster_ready, "%s to form" % self.label)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start_all(self) -> None:
        """Start every member at once, then wait for each to answer."""
        for name in self.names:
            self.spawn(name)
        for name in self.names:
            self.wait_member(name)

    def start(self, member: str) -> None:
        """(Re)start ``member`` on its data and wait until it answers."""
        self.spawn(member)
        self.wait_member(member)

    def spawn(self, member: str) -> None:
        """Start ``member``'s daemon without waiting for it (in the
        cluster's folder, where a crash dump would go)."""
        (self.dir / "log").mkdir(parents=True, exist_ok=True)
        with open(self.log_path(member), "ab") as out:
            self.procs[member] = subprocess.Popen(
                self.command(member), env=self.environ(member),
                cwd=self.dir, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)

    def wait_member(self, member: str) -> None:
        self.wait(lambda: self.member_ready(member),
                  "%s member %s" % (self.label, member))

    def wait(self, predicate, what: str,
             timeout: float = MEMBER_TIMEOUT):
        """Poll ``predicate`` until it holds; its value.  Fail at once if
        a member that was started (and not killed) exits meanwhile."""
        found = harness.wait_for(lambda: self._exited() or predicate(),
                                 timeout=timeout, interval=0.1, what=what)
        exited = self._exited()
        if not exited:
            return found
        raise RuntimeError("%s member %s exited (%s) waiting for %s: %s" % (
            self.label, exited, self.procs[exited].returncode, what,
            self.log(exited)[-3000:]))

    def _exited(self) -> str | None:
        return next((name for name, proc in self.procs.items()
                     if proc.poll() is not None), None)

    def alive(self, member: str) -> bool:
        proc = self.procs.get(member)
        return proc is not None and proc.poll() is None

    def kill(self, member: str) -> None:
        """``kill -9`` every process of ``member``, as a crash would."""
        proc = self.procs.pop(member, None)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=STOP_TIMEOUT)

    def stop(self) -> None:
        """Kill every member (the cluster is thrown away with its folder)."""
        for name in list(self.procs):
            self.kill(name)

    # -- what it costs --------------------------------------------------------
    def pss_mib(self, member: str | None = None) -> float:
        """Proportional set size of ``member``'s processes (all members'
        when None), in MiB (benchmarks/procmem.py's count)."""
        groups = [proc.pid for name, proc in self.procs.items()
                  if member in (None, name) and proc.poll() is None]
        return procmem.group_usage({"all": groups})["all"]["pss_mib"]

    # -- logs -----------------------------------------------------------------
    def log_path(self, member: str) -> Path:
        return self.dir / "log" / ("%s.out" % member)

    def log(self, member: str) -> str:
        path = self.log_path(member)
        return path.read_text(errors="replace") if path.exists() else ""


def ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports."""
    found: list[int] = []
    while len(found) < count:
        port = harness.free_port()
        if port not in found:
            found.append(port)
    return found


def port_maps(names: list[str], kinds: int) -> list[dict[str, int]]:
    """``kinds`` maps of a distinct free loopback port per member."""
    free = ports(kinds * len(names))
    size = len(names)
    return [dict(zip(names, free[i * size:(i + 1) * size], strict=True))
            for i in range(kinds)]


def main(argv: list[str] | None, doc: str, install, make, describe) -> None:
    """A component's command line: ``install`` (Debian's packages), or
    ``up DIR`` (a cluster in DIR until Ctrl-C or SIGTERM, ``describe``
    printing what a client needs)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install what the cluster needs")
    up = sub.add_parser("up", help="start a cluster in DIR until Ctrl-C")
    up.add_argument("dir")
    args = parser.parse_args(argv)
    if args.command == "install":
        install()
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with make(args.dir) as cluster:
        print("%s (up in %.1fs, Pss %.0f MiB)" % (
            describe(cluster), cluster.start_seconds, cluster.pss_mib()),
            flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
