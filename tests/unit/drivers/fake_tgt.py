"""An in-memory tgtd behind a fake ``tgtadm`` runner, and a fake initiator.

``FakeTgt`` answers the tgtadm commands drivers/tgtadm.py sends as tgt
1.0.85 does (same exit status, same messages, the ``show`` layout of
test_iscsi.py's ``REAL_SHOW``, captured from it), and records them.
``FakeSessions`` stands for ``common.libiscsi.Session`` in a fence.
"""

import dataclasses

EINVAL = 22


@dataclasses.dataclass
class FakeTarget:
    iqn: str
    luns: dict[int, str] = dataclasses.field(default_factory=dict)
    accounts: list[str] = dataclasses.field(default_factory=list)
    acl: list[str] = dataclasses.field(default_factory=list)
    params: dict[str, str] = dataclasses.field(default_factory=dict)
    #: (sid, cid, initiator) of the logged-in hosts
    conns: list[tuple[int, int, str]] = dataclasses.field(
        default_factory=list)


class Refused(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


class FakeTgt:
    """``runner(argv)`` of drivers/tgtadm.py over an in-memory tgtd."""

    def __init__(self):
        self.targets: dict[int, FakeTarget] = {}
        self.accounts: dict[str, str] = {}
        self.commands: list[list[str]] = []
        self.up = True
        self.fail: dict[tuple[str, str], str] = {}

    def __call__(self, argv):
        assert argv[:2] == ["tgtadm", "-C"] and argv[3:5] == ["--lld",
                                                              "iscsi"]
        args = argv[5:]
        self.commands.append(args)
        if not self.up:
            return (107, "", "tgtadm: can't send the request to the tgt "
                    "daemon, Transport endpoint is not connected\n")
        flags = [arg for arg in args if arg == "--force"]
        rest = [arg for arg in args if arg != "--force"]
        opts = dict(zip(rest[0::2], rest[1::2], strict=True),
                    **dict.fromkeys(flags, ""))
        key = (opts["--mode"], opts["--op"])
        try:
            if key in self.fail:
                raise Refused(self.fail[key])
            out = getattr(self, "_%s_%s" % key)(opts)
        except Refused as exc:
            return EINVAL, "", "tgtadm: %s\n" % exc.message
        return 0, out or "", ""

    def target(self, iqn):
        return next(t for t in self.targets.values() if t.iqn == iqn)

    def connect(self, iqn, initiator):
        """A host logs in (for the tests: no check)."""
        target = self.target(iqn)
        target.conns.append((len(target.conns) + 1, 0, initiator))

    def _get(self, opts):
        tid = int(opts["--tid"])
        if tid not in self.targets:
            raise Refused("can't find the target")
        return self.targets[tid]

    # -- system, targets ----------------------------------------------------
    def _system_show(self, opts):
        return "System:\n    State: ready\n    debug: off\n"

    def _target_new(self, opts):
        tid, iqn = int(opts["--tid"]), opts["--targetname"]
        if tid in self.targets or any(t.iqn == iqn
                                      for t in self.targets.values()):
            raise Refused("this target already exists")
        self.targets[tid] = FakeTarget(iqn)

    def _target_update(self, opts):
        self._get(opts).params[opts["--name"]] = opts["--value"]

    def _target_delete(self, opts):
        target = self._get(opts)
        if target.conns and "--force" not in opts:
            raise Refused("this target is still active")
        del self.targets[int(opts["--tid"])]

    def _target_bind(self, opts):
        acl = self._get(opts).acl
        if opts["--initiator-name"] in acl:
            raise Refused("this access control rule already exists")
        acl.append(opts["--initiator-name"])

    def _target_unbind(self, opts):
        acl = self._get(opts).acl
        if opts["--initiator-name"] not in acl:
            raise Refused("this access control rule does not exist")
        acl.remove(opts["--initiator-name"])

    def _target_show(self, opts):
        return "".join(self._show(tid, t)
                       for tid, t in sorted(self.targets.items()))

    @staticmethod
    def _show(tid, target):
        lines = ["Target %d: %s" % (tid, target.iqn),
                 "    System information:", "        Driver: iscsi",
                 "        State: ready", "    I_T nexus information:",
                 "    LUN information:", "        LUN: 0",
                 "            Type: controller"]
        for lun, path in sorted(target.luns.items()):
            lines += ["        LUN: %d" % lun, "            Type: disk",
                      "            Backing store path: %s" % path]
        lines.append("    Account information:")
        lines += ["        %s" % user for user in target.accounts]
        lines.append("    ACL information:")
        lines += ["        %s" % name for name in target.acl]
        return "\n".join(lines) + "\n"

    # -- LUNs -----------------------------------------------------------------
    def _logicalunit_new(self, opts):
        target = self._get(opts)
        lun = int(opts["--lun"])
        if lun in target.luns:
            raise Refused("this logical unit number already exists")
        target.luns[lun] = opts["--backing-store"]

    def _logicalunit_delete(self, opts):
        target = self._get(opts)
        if target.luns.pop(int(opts["--lun"]), None) is None:
            raise Refused("can't find the logical unit")

    # -- accounts ---------------------------------------------------------
    def _account_new(self, opts):
        if opts["--user"] in self.accounts:
            raise Refused("this account already exists")
        self.accounts[opts["--user"]] = opts["--password"]

    def _account_bind(self, opts):
        target = self._get(opts)
        if opts["--user"] not in self.accounts:
            raise Refused("can't find the account")
        if opts["--user"] in target.accounts:
            raise Refused("this account already exists")
        target.accounts.append(opts["--user"])

    def _account_delete(self, opts):
        if self.accounts.pop(opts["--user"], None) is None:
            raise Refused("can't find the account")
        for target in self.targets.values():
            if opts["--user"] in target.accounts:
                target.accounts.remove(opts["--user"])

    # -- connections --------------------------------------------------------
    def _conn_show(self, opts):
        return "".join(
            "Session: %d\n    Connection: %d\n        Initiator: %s\n"
            "        IP Address: 127.0.0.1\n" % conn
            for conn in self._get(opts).conns)

    def _conn_delete(self, opts):
        target = self._get(opts)
        sid, cid = int(opts["--sid"]), int(opts["--cid"])
        kept = [c for c in target.conns if c[:2] != (sid, cid)]
        if len(kept) == len(target.conns):
            raise Refused("can't find the session")
        target.conns = kept


class FakeSessions:
    """``session(portal, iqn, lun, initiator, chap=...)`` of a fence:
    records the logins and PR commands; ``error`` is raised by the
    PREEMPT (or by the login when ``at_login``)."""

    def __init__(self, error=None, at_login=False):
        self.logins = []
        self.commands = []
        self.error = error
        self.at_login = at_login

    def __call__(self, portal, iqn, lun, initiator, chap=None):
        self.logins.append((portal, iqn, lun, initiator, chap))
        if self.error is not None and self.at_login:
            raise self.error
        return _FakeSession(self)


class _FakeSession:
    def __init__(self, owner):
        self._owner = owner

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._owner.commands.append(("close",))

    def register(self, key):
        self._owner.commands.append(("register", key))

    def preempt(self, key, victim):
        self._owner.commands.append(("preempt", key, victim))
        if self._owner.error is not None:
            raise self._owner.error
