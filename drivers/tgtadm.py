"""``tgtadm``, the control tool of Debian's userspace iSCSI target ``tgt``.

:class:`TgtAdm` builds the commands Cinder's ``tgtadm`` target helper
sends (a target per volume, LUN 1, a CHAP account bound to it) plus the
ACL and connection commands a fence needs, runs them through a runner it
is given (a fake one in unit tests), and reads ``--op show`` back.  Every
change is idempotent: tgt's "already exists" for a new target, account or
ACL entry and "does not exist" for a removed one count as done, so a
driver can replay its exports after a restart of ``tgtd`` (which forgets
them all) or of itself.
"""

import dataclasses
import subprocess
from collections.abc import Callable

from oslo_log import log as logging

from common import exception

LOG = logging.getLogger(__name__)

#: Runs one command line; answers (exit status, stdout, stderr).
Runner = Callable[[list[str]], tuple[int, str, str]]
TIMEOUT = 30
#: The LUN a volume is (LUN 0 is tgt's controller), as in Cinder.
LUN = 1
#: iSCSI parameters of each target: tgt's defaults (8 KiB segments, 64
#: KiB first burst) halve the rate of 1 MiB writes (docs/backends.md).
TARGET_PARAMS = {"MaxRecvDataSegmentLength": 262144,
                 "MaxXmitDataSegmentLength": 262144,
                 "FirstBurstLength": 1 << 20, "MaxBurstLength": 1 << 20}
_EXISTS = "already exists"
_ABSENT = ("does not exist", "can't find")


def run(argv: list[str]) -> tuple[int, str, str]:
    """The default runner: the command as a child process."""
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    return proc.returncode, proc.stdout, proc.stderr


@dataclasses.dataclass(frozen=True)
class Backing:
    """What a LUN reads and writes: tgt's ``--backing-store``, its
    ``--bstype`` and ``--bsopts``."""

    path: str
    bstype: str = "rdwr"
    bsopts: str | None = None


@dataclasses.dataclass
class Target:
    """One target as ``tgtadm --mode target --op show`` lists it."""

    tid: int
    iqn: str
    luns: set[int] = dataclasses.field(default_factory=set)
    accounts: set[str] = dataclasses.field(default_factory=set)
    acl: set[str] = dataclasses.field(default_factory=set)


def parse_targets(shown: str) -> dict[str, Target]:
    """The targets of a ``--mode target --op show`` output, by IQN."""
    found: dict[str, Target] = {}
    target: Target | None = None
    section = ""
    for line in shown.splitlines():
        text = line.strip()
        if line.startswith("Target "):
            tid, iqn = line[len("Target "):].split(":", 1)
            target = found[iqn.strip()] = Target(int(tid), iqn.strip())
        elif target is None or not text:
            continue
        elif line.startswith("    ") and not line.startswith("     "):
            section = text
        elif section == "LUN information:" and text.startswith("LUN: "):
            target.luns.add(int(text.split()[1]))
        elif section == "Account information:":
            target.accounts.add(text.split()[0])
        elif section == "ACL information:":
            target.acl.add(text)
    return found


def parse_connections(shown: str, initiator: str) -> list[tuple[str, str]]:
    """(session id, connection id) of ``initiator``'s connections in a
    ``--mode conn --op show`` output."""
    found: list[tuple[str, str]] = []
    for block in shown.split("Session: ")[1:]:
        lines = [line.strip() for line in block.splitlines()]
        if "Initiator: %s" % initiator not in lines:
            continue
        sid = lines[0]
        found.extend((sid, line.split()[1]) for line in lines
                     if line.startswith("Connection: "))
    return found


class TgtAdm:
    """tgtadm against one tgtd (``control_port``, its ``-C``)."""

    def __init__(self, control_port: int = 0, runner: Runner = run) -> None:
        self.control_port = control_port
        self._runner = runner

    def admin(self, *args: str, tolerate: tuple[str, ...] = ()) -> str:
        """Run ``tgtadm ... args``; its output.  A failure whose message
        holds one of ``tolerate`` counts as success.

        :raises VolumeBackendAPIException: tgtadm failed otherwise.
        """
        argv = ["tgtadm", "-C", str(self.control_port), "--lld", "iscsi",
                *args]
        try:
            status, out, err = self._runner(argv)
        except (OSError, subprocess.SubprocessError) as exc:
            raise exception.VolumeBackendAPIException(
                data="%s: %s" % (" ".join(argv[5:]), exc)) from exc
        if status and not any(text in err for text in tolerate):
            raise exception.VolumeBackendAPIException(
                data="tgtadm %s: %s" % (" ".join(args), err.strip()
                                        or "exit status %d" % status))
        return out

    # -- reading ------------------------------------------------------------
    def ready(self) -> bool:
        """Whether tgtd answers on the control port."""
        try:
            shown = self.admin("--mode", "system", "--op", "show")
        except exception.VolumeBackendAPIException:
            return False
        return "State: ready" in shown

    def targets(self) -> dict[str, Target]:
        """Every target of this tgtd, by IQN."""
        return parse_targets(self.admin("--mode", "target", "--op", "show"))

    # -- targets and LUNs ---------------------------------------------------
    def new_target(self, tid: int, iqn: str) -> None:
        """A target with tgt's parameters for 1 MiB requests."""
        self.admin("--mode", "target", "--op", "new", "--tid", str(tid),
                   "--targetname", iqn)
        for name, value in TARGET_PARAMS.items():
            self.admin("--mode", "target", "--op", "update", "--tid",
                       str(tid), "--name", name, "--value", str(value))

    def delete_target(self, tid: int) -> None:
        """Delete the target, closing its sessions (``--force``)."""
        self.admin("--mode", "target", "--op", "delete", "--force",
                   "--tid", str(tid), tolerate=_ABSENT)

    def add_lun(self, tid: int, backing: Backing) -> None:
        """LUN 1 of ``tid``: a file through tgt's ``rdwr`` backing store,
        or an RBD image (``pool/image``) through ``rbd`` (tgt-rbd)."""
        options = ("--bsopts", backing.bsopts) if backing.bsopts else ()
        self.admin("--mode", "logicalunit", "--op", "new", "--tid",
                   str(tid), "--lun", str(LUN), "--backing-store",
                   backing.path, "--bstype", backing.bstype, *options,
                   tolerate=(_EXISTS,))

    def delete_lun(self, tid: int) -> None:
        self.admin("--mode", "logicalunit", "--op", "delete", "--tid",
                   str(tid), "--lun", str(LUN), tolerate=_ABSENT)

    # -- CHAP ---------------------------------------------------------------
    def new_account(self, user: str, password: str) -> None:
        self.admin("--mode", "account", "--op", "new", "--user", user,
                   "--password", password, tolerate=(_EXISTS,))

    def bind_account(self, tid: int, user: str) -> None:
        self.admin("--mode", "account", "--op", "bind", "--tid", str(tid),
                   "--user", user, tolerate=(_EXISTS,))

    def delete_account(self, user: str) -> None:
        self.admin("--mode", "account", "--op", "delete", "--user", user,
                   tolerate=_ABSENT)

    # -- ACL and connections ------------------------------------------------
    def bind(self, tid: int, initiator: str) -> None:
        """Let ``initiator`` log in to ``tid``."""
        self.admin("--mode", "target", "--op", "bind", "--tid", str(tid),
                   "--initiator-name", initiator, tolerate=(_EXISTS,))

    def unbind(self, tid: int, initiator: str) -> None:
        """Refuse ``initiator``'s next login to ``tid``."""
        self.admin("--mode", "target", "--op", "unbind", "--tid", str(tid),
                   "--initiator-name", initiator, tolerate=_ABSENT)

    def disconnect(self, tid: int, initiator: str) -> int:
        """Close every connection of ``initiator`` to ``tid``; how many."""
        shown = self.admin("--mode", "conn", "--op", "show", "--tid",
                           str(tid))
        closed = 0
        for sid, cid in parse_connections(shown, initiator):
            self.admin("--mode", "conn", "--op", "delete", "--tid", str(tid),
                       "--sid", sid, "--cid", cid, tolerate=_ABSENT)
            closed += 1
        return closed
