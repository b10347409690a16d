#!/usr/bin/env python3
"""OpenStack Tempest's volume API tests against Ashlar (issue 22).

Starts a real Keystone (``deploy/testbed/components/keystone.py``) and
Ashlar in keystone mode as separate processes (api under gunicorn,
scheduler, one volume node with two file backends) on a PostgreSQL
database and a RabbitMQ vhost of their own (``deploy/testbed/harness.py``),
puts Ashlar in Keystone's catalog (``block-storage`` and ``volumev3``),
writes a tempest.conf that says what Ashlar offers, and runs::

    tempest run --regex '^(tempest\\.api\\.volume|cinder_tempest_plugin\\.api\\.volume)'

Then it prints ``passed N failed N skipped N``, the failing test ids grouped
by the first line of their failure reason (most frequent first), the
skips by reason, and the wall time::

    python -m benchmarks.tempest_run [--concurrency 2] [--workdir DIR]
        [--write-known-failures tests/tempest/known_failures.txt]

``--anchor ANCHOR_DIR`` runs the same suite with the same tempest.conf
against the real Cinder of the anchor in that folder (not part of this
repository; its venv in ``--anchor-home``, by default ``$ANCHOR_HOME``:
``benchmarks/tempest_anchor.py``) instead; ``--setup`` makes that venv
first if it is not whole, and ``--sides`` runs against Ashlar and then
against the anchor in one command and prints both sides' pass, fail and
skip counts per class and the tests Cinder passes and Ashlar does not::

    python -m benchmarks.tempest_run --anchor ANCHOR_DIR \\
        --anchor-home ANCHOR_HOME --setup --sides [--backups]

It needs what ``tox -e tempest`` installs (tempest and
cinder-tempest-plugin in this interpreter's environment) and Keystone
(``python -m deploy.testbed.components.keystone install``).
``--from-subunit FILE`` reports on a stream saved by an earlier run
(``WORKDIR/tempest/results.subunit``) without starting anything.
"""

import argparse
import collections
import configparser
import contextlib
import dataclasses
import difflib
import importlib.metadata
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import tempest_anchor
from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component

REGEX = r"^(tempest\.api\.volume|cinder_tempest_plugin\.api\.volume)"
#: The tests of ``REGEX`` that take backups (``--backups``): the classes
#: named for them, and the one snapshot test that skips without them.
BACKUP_REGEX = (REGEX + r"\.(.*[Bb]ackup|test_volumes_snapshots\."
                r"VolumesSnapshotTestJSON\.test_snapshot_backup)")
DISTRIBUTIONS = ("tempest", "cinder-tempest-plugin")
INSTALL_HINT = "tox -e tempest (or pip install tempest cinder-tempest-plugin)"
#: The file backends of the volume node, each its own backend name, so
#: Tempest's multi-backend tests have the two names they need.
BACKENDS = ("file1", "file2")
#: The backup service's host (``ashlar-backup``, POSIX driver).
BACKUP_HOST = "tempest-backup"
KNOWN_FAILURES = Path(__file__).resolve().parent.parent / "tests" / \
    "tempest" / "known_failures.txt"
#: Patches to the installed Tempest, applied by ``apply_patches`` (each
#: file says why; docs/testing.md, "Tempest").
PATCHES = KNOWN_FAILURES.parent / "patches"
RUN_TIMEOUT = 3600.0
#: Tempest's own per-test guard (fixtures.Timeout), seconds.
TEST_TIMEOUT = 600
#: Test outcomes in a subunit stream that count as failures.
FAILED = ("fail", "uxsuccess")
SKIPPED = ("skip",)
PASSED = ("success", "xfail")


# -- results --------------------------------------------------------------
@dataclasses.dataclass
class Outcome:
    """What one Tempest run gave, by test id (attributes stripped)."""

    passed: list[str] = dataclasses.field(default_factory=list)
    #: Failing test id -> the first line of its failure reason.
    failed: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Skipped test id -> why.
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Tests that started and never ended (a worker died).
    incomplete: list[str] = dataclasses.field(default_factory=list)
    returncode: int | None = None
    seconds: float = 0.0
    tempest_seconds: float = 0.0
    versions: dict[str, str] = dataclasses.field(default_factory=dict)
    stderr_tail: str = ""
    workdir: Path | None = None

    @property
    def complete(self) -> bool:
        """Tempest ended by itself, ran tests and left none half done."""
        return (self.returncode in (0, 1) and not self.incomplete
                and bool(self.passed or self.failed or self.skipped))

    def summary(self) -> str:
        """The one line: ``passed N failed N skipped N``."""
        return "passed %d failed %d skipped %d" % (
            len(self.passed), len(self.failed), len(self.skipped))

    def report(self) -> str:
        """Summary, failures by reason, skips by reason, times."""
        lines = [", ".join("%s %s" % kv for kv in self.versions.items()),
                 self.summary()]
        if self.incomplete:
            lines.append("incomplete (started, never ended): %d"
                         % len(self.incomplete))
            lines += ["    " + test for test in sorted(self.incomplete)]
        lines += group_lines("failed", self.failed)
        lines += group_lines("skipped", self.skipped, ids=False)
        lines.append("wall time %.0fs (tempest %.0fs), tempest exit %s%s" % (
            self.seconds, self.tempest_seconds, self.returncode,
            ", files in %s" % self.workdir if self.workdir else ""))
        return "\n".join(lines)


def group_lines(title: str, reasons: dict[str, str],
                ids: bool = True) -> list[str]:
    """``reasons`` grouped by reason, most frequent first: a count and
    the reason, then (``ids``) the test ids under it."""
    if not reasons:
        return []
    groups = collections.defaultdict(list)
    for test, reason in reasons.items():
        groups[reason].append(test)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = ["%s, by reason:" % title]
    for reason, tests in ordered:
        lines.append("%4d  %s" % (len(tests), reason))
        if ids:
            lines += ["        " + test for test in sorted(tests)]
    return lines


def plain_id(raw: str) -> str:
    """A subunit test id without Tempest's ``[id-...,smoke]`` attributes."""
    return re.sub(r"\[[^\]]*\]$", "", raw)


_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?"
                   r"[0-9a-f]{12}", re.I)
_RAND_NAME = re.compile(r"tempest-[\w-]*?-\d{5,}")
_WHERE = re.compile(r"\(\w+:\w+\) ")
_NUMBER = re.compile(r"\b\d{5,}(?:\.\d+)?\b|\b0x[0-9a-f]+\b")
_CLASS_PATH = re.compile(r"^(?:[a-z_][\w]*\.)+(?=[A-Z]\w*(?::|$))")
MAX_REASON = 240


_REQUEST = re.compile(r"Request \([^)]*\): (\d{3}) ([A-Z]+) https?://[^/\s]+"
                      r"(\S*)")
_PROJECT = re.compile(r"^/v3/[0-9a-f]{32}(?=/|$)")


def first_request(log: str, status: str) -> str:
    """``METHOD /path`` of the first request in a test's Tempest log that
    got ``status``, project and ids elided, or ""."""
    for match in _REQUEST.finditer(log):
        if match.group(1) == status:
            path = _PROJECT.sub("/v3", match.group(3))
            return "%s %s" % (match.group(2), _UUID.sub("<id>", path))
    return ""


def reason_of(text: str, log: str = "") -> str:
    """The first line of a failure: the last traceback's exception line
    (for Tempest's exceptions, their class and ``Details:`` line), with
    ids, numbers and Tempest's random names replaced so that equal causes
    group together.  A 404 names the first request that got one in the
    test's ``log``, as Cinder's "could not be found" does not."""
    lines = text.strip().splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.startswith("Traceback (most recent call last)")]
    rest = lines[starts[-1] + 1:] if starts else lines
    reason, details = "", ""
    for i, line in enumerate(rest):
        if line.strip() and not line.startswith((" ", "\t")):
            reason = line.strip()
            details = next((m.strip() for m in rest[i + 1:]
                            if m.startswith("Details:")), "")
            if reason.endswith(":"):  # e.g. testtools' "!=:", then values
                reason = " ".join([reason] + [m.strip() for m in
                                              rest[i + 1:i + 9] if m.strip()])
            break
    if not reason:
        reason = next((line.strip() for line in lines if line.strip()),
                      "(no reason given)")
    reason = _CLASS_PATH.sub("", reason)
    if details:
        # NOTE: a Tempest exception's message only restates its class.
        reason = "%s: %s" % (reason.split(":", 1)[0],
                             details.removeprefix("Details:").strip())
    if reason.startswith("NotFound:") and first_request(log, "404"):
        reason = "NotFound: %s: %s" % (first_request(log, "404"),
                                       reason.split(":", 1)[1].strip())
    for pattern, replacement in ((_UUID, "<id>"), (_RAND_NAME, "<name>"),
                                 (_NUMBER, "<n>"), (_WHERE, "")):
        reason = pattern.sub(replacement, reason)
    return reason[:MAX_REASON]


def parse_subunit(stream: bytes) -> Outcome:
    """Outcomes of a subunit v2 stream (``tempest run --subunit``)."""
    import subunit
    import testtools

    outcome = Outcome()

    def on_test(test: dict) -> None:
        name, status = plain_id(test["id"]), test["status"]
        details = test.get("details") or {}

        def text(key: str) -> str:
            content = details.get(key)
            return "".join(content.iter_text()) if content else ""
        if status in PASSED:
            outcome.passed.append(name)
        elif status in FAILED:
            outcome.failed[name] = reason_of(
                text("traceback") or text("reason"), text("pythonlogging:''"))
        elif status in SKIPPED:
            outcome.skipped[name] = (text("reason").strip().splitlines()
                                     or ["(no reason given)"])[0][:MAX_REASON]
        elif status in ("inprogress", None):
            outcome.incomplete.append(name)

    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    try:
        subunit.ByteStreamToStreamResult(
            io.BytesIO(stream), non_subunit_name="stdout").run(result)
    finally:
        result.stopTestRun()
    return outcome


def from_subunit(path: Path) -> Outcome:
    """The outcome of a stream saved by an earlier run."""
    outcome = parse_subunit(path.read_bytes())
    outcome.returncode = 0
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        outcome.versions = {**versions(), "stream": str(path)}
    return outcome


# -- two sides ------------------------------------------------------------
_SETUP_CLASS = re.compile(r"^\w+ \((?P<cls>[\w.]+)\)$")
#: Test id prefixes left out of the class names of ``by_class``.
_PREFIXES = (("tempest.api.volume.", ""),
             ("cinder_tempest_plugin.api.volume.", "plugin:"))


def class_of(test: str) -> str:
    """A test id's class, shortened: ``admin.test_x.XTest`` for Tempest's,
    ``plugin:test_x.XTest`` for the plugin's (a ``setUpClass (...)`` error
    counts for its class)."""
    match = _SETUP_CLASS.match(test)
    name = match.group("cls") if match else test.rsplit(".", 1)[0]
    for prefix, short in _PREFIXES:
        if name.startswith(prefix):
            return short + name[len(prefix):]
    return name


def status_of(outcome: Outcome) -> dict[str, str]:
    """Test id -> ``pass``, ``fail`` or ``skip``."""
    found = {test: "skip" for test in outcome.skipped}
    found.update({test: "fail" for test in outcome.failed})
    found.update({test: "pass" for test in outcome.passed})
    return found


def by_class(outcome: Outcome) -> dict[str, collections.Counter]:
    """Class -> its tests' counts by status."""
    counts: dict[str, collections.Counter] = collections.defaultdict(
        collections.Counter)
    for test, status in status_of(outcome).items():
        counts[class_of(test)][status] += 1
    return counts


def compare(ashlar: Outcome, cinder: Outcome) -> str:
    """Both sides' pass/fail/skip counts per class, the totals, then the
    tests Cinder passes and Ashlar does not (with Ashlar's reason), and
    the number Ashlar passes and Cinder does not."""
    sides = by_class(ashlar), by_class(cinder)
    width = max(len(c) for c in set(sides[0]) | set(sides[1]) | {"class"})
    row = "%-*s  %5s %5s %5s   %5s %5s %5s"
    lines = [row % (width, "", "Ashlar", "", "", "Cinder", "", ""),
             row % (width, "class", "pass", "fail", "skip", "pass", "fail",
                    "skip")]
    for name in sorted(set(sides[0]) | set(sides[1])):
        lines.append(row % (width, name, *(
            side[name][status] for side in sides
            for status in ("pass", "fail", "skip"))))
    lines.append(row % (width, "total", *(
        sum(c[status] for c in side.values()) for side in sides
        for status in ("pass", "fail", "skip"))))
    mine, theirs = status_of(ashlar), status_of(cinder)
    behind = sorted(t for t, s in theirs.items()
                    if s == "pass" and mine.get(t) != "pass")
    ahead = sorted(t for t, s in mine.items()
                   if s == "pass" and theirs.get(t) != "pass")
    lines.append("Cinder passes, Ashlar does not: %d" % len(behind))
    for test in behind:
        reason = (ashlar.failed.get(test) or ashlar.skipped.get(test)
                  or "not run")
        lines.append("    %s  # %s: %s" % (test, mine.get(test, "absent"),
                                          reason))
    lines.append("Ashlar passes, Cinder does not: %d" % len(ahead))
    for test in ahead:
        reason = (cinder.failed.get(test) or cinder.skipped.get(test)
                  or "not run")
        lines.append("    %s  # %s: %s" % (test, theirs.get(test, "absent"),
                                          reason))
    return "\n".join(lines)


def conf_diff(ashlar: Path, cinder: Path) -> list[str]:
    """The lines in which the two sides' tempest.conf differ."""
    return [line for line in difflib.unified_diff(
        ashlar.read_text().splitlines(), cinder.read_text().splitlines(),
        "ashlar", "cinder", n=0, lineterm="")
        if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def run_sides(workdir: Path, anchor: tempest_anchor.Anchor,
              **options: Any) -> tuple[Outcome, Outcome, str]:
    """``run`` against Ashlar (in ``workdir/ashlar-side``), then against
    the anchor (``workdir/cinder-side``), with the same selection and
    options; both outcomes and the comparison (also ``workdir/sides.txt``)
    with the tempest.conf lines that differ."""
    started = time.monotonic()
    ashlar = run(workdir / "ashlar-side", **options)
    cinder = run(workdir / "cinder-side", anchor=anchor, **options)
    diff = conf_diff(*(workdir / side / "tempest" / "tempest.conf"
                       for side in ("ashlar-side", "cinder-side")))
    text = "\n".join([
        "Ashlar: " + ashlar.summary(), "Cinder: " + cinder.summary(),
        compare(ashlar, cinder),
        "tempest.conf differs only in:", *("    " + d for d in diff),
        "both sides: %.0fs (Ashlar %.0fs, Cinder %.0fs)" % (
            time.monotonic() - started, ashlar.seconds, cinder.seconds)])
    (workdir / "sides.txt").write_text(text + "\n")
    return ashlar, cinder, text


# -- known failures -------------------------------------------------------
def load_known(path: Path = KNOWN_FAILURES) -> dict[str, str]:
    """Test id -> the ``# reason`` comment of ``known_failures.txt``."""
    known = {}
    for line in path.read_text().splitlines():
        entry, _, comment = line.partition("#")
        if entry.strip():
            known[plain_id(entry.strip())] = comment.strip()
    return known


def write_known(outcome: Outcome, path: Path = KNOWN_FAILURES) -> None:
    """Write the run's failures as ``known_failures.txt``."""
    header = [
        "# Tempest tests that fail against Ashlar today (issue 22), one id",
        "# a line with the first line of its failure as a comment.",
        "# tests/tempest/test_tempest.py fails on a failure not listed here",
        "# and on a listed id that no longer fails: remove it then.",
        "# Made by python -m benchmarks.tempest_run --write-known-failures",
        "# (%s; %s)." % (", ".join("%s %s" % (name, outcome.versions[name])
                                   for name in DISTRIBUTIONS
                                   if name in outcome.versions),
                         outcome.summary()),
    ]
    body = ["%s  # %s" % (test, outcome.failed[test][:160])
            for test in sorted(outcome.failed)]
    path.write_text("\n".join(header + body) + "\n")


# -- tempest.conf ---------------------------------------------------------
def versions() -> dict[str, str]:
    """Installed versions of Tempest and the plugin; raises
    PackageNotFoundError when either is missing."""
    return {name: importlib.metadata.version(name) for name in DISTRIBUTIONS}


def microversions() -> tuple[str, str]:
    """The lowest and highest microversion Ashlar serves."""
    from services.api import microversion
    return str(microversion.MIN_VERSION), str(microversion.MAX_VERSION)


def _manage_refs(storage_protocol: str) -> dict[str, str]:
    """What names an unmanaged volume's (snapshot's) storage: Tempest's
    defaults (LVM's names), but for the file backend, whose snapshot is
    the file ``snapshot-<id>.<format>`` (``drivers/file_manage.py``)."""
    from drivers import file as file_driver

    if storage_protocol != file_driver.FileDriver.STORAGE_PROTOCOL:
        return {}
    return {"manage_volume_ref": "source-name,volume-%s",
            "manage_snapshot_ref": "source-name,snapshot-%s"}


def tempest_conf(workdir: Path, auth_url: str, admin: keystone_component.User,
                 backends: Iterable[str] = BACKENDS,
                 build_timeout: int = 60, vendor_name: str | None = None,
                 storage_protocol: str | None = None,
                 backup: bool = True) -> str:
    """tempest.conf for Ashlar as it is: Cinder's volume API with
    snapshots, clones, reverts, manage, backups, several backends and
    multiattach; no images, compute, network or object storage; no
    replication, consistency groups or encryption.  ``backends``,
    ``vendor_name``, ``storage_protocol`` and ``backup`` (a backup service
    runs) are the deployment's (default: Ashlar's file backends and
    ashlar-backup)."""
    from drivers import base as driver_base
    from drivers import file as file_driver

    vendor_name = vendor_name or driver_base.VENDOR_NAME
    storage_protocol = (storage_protocol
                        or file_driver.FileDriver.STORAGE_PROTOCOL)
    low, high = microversions()
    sections: dict[str, dict[str, object]] = {
        "DEFAULT": {"log_dir": workdir, "log_file": "tempest.log",
                    "debug": True, "use_stderr": False},
        "oslo_concurrency": {"lock_path": workdir / "locks"},
        "auth": {
            "use_dynamic_credentials": True,
            "admin_username": admin.name, "admin_password": admin.password,
            "admin_project_name": admin.project,
            "admin_domain_name": keystone_component.DOMAIN,
            # NOTE: Tempest makes its projects and users with the bootstrap
            # admin's system-scoped token, as Keystone's defaults want.
            "admin_system": "all",
            "create_isolated_networks": False},
        "identity": {"uri_v3": auth_url, "auth_version": "v3",
                     "region": keystone_component.REGION},
        "identity-feature-enabled": {"api_v2": False, "api_v3": True},
        "service_available": {
            "cinder": True, "nova": False, "neutron": False,
            "glance": False, "swift": False, "horizon": False,
            "barbican": False},
        "volume": {
            "catalog_type": "block-storage",
            "endpoint_type": "publicURL",
            "min_microversion": low, "max_microversion": high,
            "backend_names": ",".join(backends),
            "vendor_name": vendor_name,
            "storage_protocol": storage_protocol,
            "volume_size": 1, "volume_size_extend": 1,
            **_manage_refs(storage_protocol),
            # Tempest's name for the backup driver; only "swift" changes
            # what a test sends (a container name).
            "backup_driver": "posix",
            "build_interval": 1, "build_timeout": build_timeout},
        "volume-feature-enabled": {
            "snapshot": True, "clone": True, "multi_backend": True,
            "extend_volume_with_snapshot": True,
            # cinder-tempest-plugin's: revert to snapshot (3.40) is served.
            "volume_revert": True, "consistency_group": False,
            # Cinder's standard extensions (os-hosts, ...) are Cinder's,
            # not optional: a deployment of Cinder says "all".
            "api_extensions": "all",
            # Backups through ashlar-backup's POSIX driver (``backup``:
            # the deployment runs a backup service).  Not offered: images
            # (deliberately), replication; extending attached volumes
            # needs Nova.
            "backup": backup, "enable_volume_image_dep_tests": False,
            "manage_volume": True, "manage_snapshot": True,
            "replication": False, "extend_attached_volume": False,
            "extend_attached_encrypted_volume": False},
        # NOTE: no Nova, so no compute feature; the one a volume test reads
        # (retype to and from a multiattach type) is the volume side's.
        "compute-feature-enabled": {"volume_multiattach": True,
                                    "attach_encrypted_volume": False},
        "image-feature-enabled": {"api_v2": False},
        "validation": {"run_validation": False},
        # Readers read, members change, admins do anything, and a token
        # without a project gets no project's data: Cinder's new defaults
        # with scope enforced.  (Then VolumesGetTest and VolumesNegativeTest
        # ask for the reader's image client, which Tempest 47 makes without
        # Glance only with tests/tempest/patches/: apply_patches.)
        "enforce_scope": {"cinder": True},
    }
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep option names as written
    for section, options in sections.items():
        target = parser.defaults() if section == "DEFAULT" else None
        if target is None:
            parser.add_section(section)
            target = parser[section]
        for key, value in options.items():
            target[key] = (str(value).lower() if isinstance(value, bool)
                           else str(value))
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


# -- patches to Tempest ---------------------------------------------------
def _patch(site: Path, patch: Path, *flags: str) -> bool:
    """``patch -p1`` of ``patch`` in ``site`` with ``flags``; it applied."""
    argv = ["patch", "-p1", "--force", "--silent", "--no-backup-if-mismatch",
            "-d", str(site), "-i", str(patch), *flags]
    return subprocess.run(argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def tempest_site() -> Path:
    """The folder that holds the installed ``tempest`` package.

    Found through the distribution's metadata, not ``import tempest``:
    under pytest, ``tests/tempest`` (a package) may shadow the real one."""
    init = importlib.metadata.distribution("tempest").locate_file(
        "tempest/__init__.py")
    return Path(str(init)).resolve().parent.parent


def apply_patches(site: Path | None = None, patches: Path = PATCHES
                  ) -> list[str]:
    """Apply each ``patches/*.patch`` not yet applied to the Tempest in
    ``site`` (default: this interpreter's); the names applied now.  A
    patch that neither applies nor is applied (another Tempest) raises
    RuntimeError; a missing ``patch`` program ``harness.Unavailable``."""
    if shutil.which("patch") is None:
        harness.unavailable("patch", FileNotFoundError(
            "the patch program, to patch Tempest with %s" % patches))
    site = site or tempest_site()
    applied = []
    for patch in sorted(patches.glob("*.patch")):
        if _patch(site, patch, "--reverse", "--dry-run"):
            continue  # applied by an earlier run
        if not (_patch(site, patch, "--dry-run") and _patch(site, patch)):
            raise RuntimeError("%s does not apply to the Tempest in %s"
                               % (patch, site))
        applied.append(patch.name)
    return applied


# -- the deployment -------------------------------------------------------
def _service_user(keystone: keystone_component.Keystone, name: str = "ashlar"
                  ) -> keystone_component.User:
    """The user keystonemiddleware logs in as: role service on project
    service (what Keystone's validate_token asks)."""
    keystone.create_project("service")
    user = keystone.create_user(name)
    keystone.grant(user, "service", "service")
    return user


def _backend_sections(tmp: Path) -> str:
    """The volume node's backend sections: file backends, a folder each."""
    return "".join("[%s]\nvolume_driver = file\nfile_volume_dir = %s\n"
                   % (name, tmp / ("volumes-" + name)) for name in BACKENDS)


def start_ashlar(stack: contextlib.ExitStack, tmp: Path,
                 keystone: keystone_component.Keystone,
                 debug: bool = False) -> harness.Deployment:
    """Scheduler, one volume node with ``BACKENDS``, a backup service
    (POSIX driver, Cinder's default chunk size) and the api in keystone
    mode, in the catalog; returns once both pools are reported and the
    backup service is up."""
    vhost, remove_vhost = harness.broker_vhost()
    stack.callback(remove_vhost)
    db_url, drop = harness.database("postgresql")
    stack.callback(drop)
    # NOTE: Cinder's default quotas and timings, not the functional
    # tests' fast ones: two Tempest workers keep both cores busy.
    dep = harness.Deployment(tmp, vhost, db_url, quota_volumes=10,
                             quota_gigabytes=1000, report_interval=10,
                             service_down_time=60, polling_interval=10,
                             debug=debug)
    stack.callback(dep.stop_all)
    dep.db_sync()
    keystone.register_service("http://127.0.0.1:%d/v3/%%(project_id)s"
                              % dep.port)
    dep.start("scheduler", "services.scheduler", "tempest-sched")
    dep.start("volume", "services.volume", "tempest-node",
              backends=",".join(BACKENDS), extra=_backend_sections(tmp))
    dep.start_backup(BACKUP_HOST)
    dep.start("api", "services.api", "tempest-api", extra=(
        "[api]\nauth_strategy = keystone\n"
        + keystone.authtoken_section(_service_user(keystone))))
    admin = harness.Client("http://127.0.0.1:%d/v3/%s" % (
        dep.port, keystone.project_id(keystone.admin.project)),
        token=keystone.project_token(keystone.admin))
    harness.wait_for(lambda: len(admin.pools()) == len(BACKENDS),
                     timeout=90, what="both backends' pools, through "
                     "keystone auth (logs in %s)" % tmp)
    harness.wait_for(lambda: admin.services_up().get(
        ("cinder-backup", BACKUP_HOST)) == "up", timeout=90,
        what="the backup service (logs in %s)" % tmp)
    return dep


def run_tempest(tmp: Path, conf: Path, concurrency: int, regex: str,
                timeout: float) -> tuple[int | None, bytes, str]:
    """``tempest run --subunit`` in ``tmp``; its exit status (None: timed
    out), its subunit stream and the tail of its stderr."""
    tempest = Path(sys.executable).parent / "tempest"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["OS_TEST_TIMEOUT"] = str(TEST_TIMEOUT)
    stream, errors = tmp / "results.subunit", tmp / "tempest.stderr"
    argv = [str(tempest), "run", "--config-file", str(conf), "--regex",
            regex, "--concurrency", str(concurrency), "--subunit"]
    with open(stream, "wb") as out, open(errors, "wb") as err:
        proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=out,
                                stderr=err, start_new_session=True)
        try:
            returncode: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return (returncode, stream.read_bytes(),
            errors.read_text(errors="replace")[-3000:])


def run(workdir: Path, concurrency: int = 2, regex: str = REGEX,
        build_timeout: int = 60, timeout: float = RUN_TIMEOUT,
        debug: bool = False, anchor: tempest_anchor.Anchor | None = None
        ) -> Outcome:
    """Start Keystone and Ashlar (``anchor``: the Cinder anchor), run
    Tempest, stop them; the outcome.  ``workdir`` gets ``keystone/``,
    ``ashlar/`` (or ``cinder/``) and ``tempest/`` (an earlier run's are
    removed first), and ``report.txt``.

    Missing Tempest raises PackageNotFoundError; a missing Keystone,
    broker or database ``harness.Unavailable``, which skips the test
    (fails it under CI=true) as in the functional tests.
    """
    started = time.monotonic()
    found = versions()
    apply_patches()
    server = "cinder" if anchor else "ashlar"
    for part in ("keystone", "ashlar", "cinder", "tempest"):  # earlier runs'
        shutil.rmtree(workdir / part, ignore_errors=True)
    (workdir / "tempest" / "locks").mkdir(parents=True)
    (workdir / server).mkdir()
    keystone_component.available()
    if anchor:
        found["server"] = tempest_anchor.available(anchor)
    with contextlib.ExitStack() as stack:
        # NOTE: one worker: Keystone's SQLite database takes one writer at
        # a time, and two workers' concurrent writes (Tempest's users and
        # projects, last_active_at at each login) got "database is
        # locked", a 500.
        keystone = stack.enter_context(
            keystone_component.Keystone(workdir / "keystone", workers=1))
        if anchor:
            facts = tempest_anchor.start_cinder(
                anchor, stack, workdir / server, keystone,
                _service_user(keystone, "cinder"), debug=debug)
        else:
            start_ashlar(stack, workdir / server, keystone, debug=debug)
            facts = {}
        conf = workdir / "tempest" / "tempest.conf"
        conf.write_text(tempest_conf(workdir / "tempest", keystone.auth_url,
                                     keystone.admin,
                                     build_timeout=build_timeout, **facts))
        tempest_started = time.monotonic()
        returncode, stream, stderr = run_tempest(
            workdir / "tempest", conf, concurrency, regex, timeout)
        tempest_seconds = time.monotonic() - tempest_started
    outcome = parse_subunit(stream)
    outcome.returncode, outcome.stderr_tail = returncode, stderr
    outcome.versions = {**found, "microversions": "%s-%s" % microversions(),
                        "concurrency": str(concurrency)}
    outcome.tempest_seconds = tempest_seconds
    outcome.seconds = time.monotonic() - started
    outcome.workdir = workdir
    (workdir / "report.txt").write_text(outcome.report() + "\n")
    return outcome


def main(argv: list[str] | None = None) -> int:
    """Run (or re-read) once, print the report; 0 when the run completed."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=2,
                        help="Tempest workers (default 2: two cores)")
    parser.add_argument("--regex", default=REGEX,
                        help="the tests to run (default: %(default)s)")
    parser.add_argument("--backups", dest="regex", action="store_const",
                        const=BACKUP_REGEX,
                        help="only the backup tests: --regex '%s'"
                        % BACKUP_REGEX.replace("%", "%%"))
    parser.add_argument("--build-timeout", type=int, default=60,
                        help="[volume] build_timeout: seconds a test waits "
                        "for a status")
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT,
                        help="seconds before the whole run is stopped")
    parser.add_argument("--workdir", type=Path,
                        help="where configs, logs and the subunit stream "
                        "go (default: a new temporary folder, kept)")
    parser.add_argument("--debug", action="store_true",
                        help="debug logs from Ashlar's (or Cinder's) "
                        "processes")
    parser.add_argument("--anchor", type=Path, metavar="ANCHOR_DIR",
                        help="run against the Cinder anchor of this folder "
                        "instead of Ashlar (benchmarks/tempest_anchor.py)")
    parser.add_argument("--anchor-home", type=Path,
                        default=os.environ.get("ANCHOR_HOME"),
                        help="the anchor's venv and state (default: "
                        "$ANCHOR_HOME, else ANCHOR_DIR/.work)")
    parser.add_argument("--setup", action="store_true",
                        help="with --anchor: first make the anchor's venv "
                        "if it is not whole (tempest_anchor.setup)")
    parser.add_argument("--sides", action="store_true",
                        help="with --anchor: run against Ashlar, then "
                        "against the anchor, and compare them per class")
    parser.add_argument("--from-subunit", type=Path, metavar="FILE",
                        help="only report on a saved subunit stream")
    parser.add_argument("--write-known-failures", type=Path, nargs="?",
                        const=KNOWN_FAILURES, metavar="PATH",
                        help="write the failures as the known-failures "
                        "list (default %s)" % KNOWN_FAILURES)
    args = parser.parse_args(argv)
    if args.anchor and args.write_known_failures:
        parser.error("--write-known-failures lists Ashlar's failures, "
                     "not the anchor's")
    if (args.setup or args.sides) and not args.anchor:
        parser.error("--setup and --sides need --anchor")
    if args.from_subunit:
        outcome = from_subunit(args.from_subunit)
    else:
        try:
            versions()
            workdir = args.workdir or Path(tempfile.mkdtemp(
                prefix="ashlar-tempest-"))
            anchor = (tempest_anchor.Anchor(
                args.anchor, args.anchor_home or args.anchor / ".work")
                if args.anchor else None)
            if anchor and args.setup:
                print(tempest_anchor.setup(anchor), "in", anchor.venv,
                      flush=True)
            options = {"concurrency": args.concurrency, "regex": args.regex,
                       "build_timeout": args.build_timeout,
                       "timeout": args.timeout, "debug": args.debug}
            if anchor and args.sides:
                return _sides(workdir, anchor, options)
            outcome = run(workdir, anchor=anchor, **options)
        except importlib.metadata.PackageNotFoundError as exc:
            print("%s; install it with `%s`" % (exc, INSTALL_HINT),
                  file=sys.stderr)
            return 2
        except harness.Unavailable as exc:
            print(exc, file=sys.stderr)
            return 2
    print(outcome.report())
    if not outcome.complete:
        print("the run did not complete: tempest exit %s\n%s"
              % (outcome.returncode, outcome.stderr_tail), file=sys.stderr)
        return 1
    if args.write_known_failures:
        write_known(outcome, args.write_known_failures)
        print("wrote %d ids to %s" % (len(outcome.failed),
                                      args.write_known_failures))
    return 0


def _sides(workdir: Path, anchor: tempest_anchor.Anchor,
           options: dict[str, Any]) -> int:
    """``--sides``: both runs, each side's report, then the comparison;
    0 when both completed."""
    ashlar, cinder, text = run_sides(workdir, anchor, **options)
    for name, outcome in (("Ashlar", ashlar), ("Cinder", cinder)):
        print("== %s\n%s" % (name, outcome.report()))
    print("== side by side\n" + text)
    incomplete = [name for name, outcome in (("Ashlar", ashlar),
                                             ("Cinder", cinder))
                  if not outcome.complete]
    for name in incomplete:
        print("the %s run did not complete" % name, file=sys.stderr)
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
