"""OpenStack Tempest's volume API tests and cinder-tempest-plugin's against
Ashlar in keystone mode (issue 22), through benchmarks/tempest_run.py.

Every failure must be listed in ``known_failures.txt`` and every listed
test must still fail: a regression fails here, and so does a fix until
its line is removed, so the list stays true.  ``tox -e tempest`` installs
Tempest and the plugin; ``ASHLAR_TEMPEST_CONCURRENCY`` sets the workers
(default 2); ``ASHLAR_TEMPEST_WORKDIR=DIR`` keeps the configs, logs and
subunit stream there (pytest's temporary folders rotate);
``ASHLAR_TEMPEST_SUBUNIT=FILE`` checks the list against a stream saved by
an earlier run (``DIR/tempest/results.subunit``) instead of running
Tempest.
"""

import importlib.metadata
import os
from pathlib import Path

import pytest

from benchmarks import tempest_run
from deploy.testbed import harness


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> tempest_run.Outcome:
    """One Tempest run for the module (tens of minutes on two cores)."""
    try:
        tempest_run.versions()
    except importlib.metadata.PackageNotFoundError as exc:
        harness.unavailable("Tempest", FileNotFoundError(
            "%s; install it with `%s`" % (exc, tempest_run.INSTALL_HINT)))
    saved = os.environ.get("ASHLAR_TEMPEST_SUBUNIT")
    if saved:
        return tempest_run.from_subunit(Path(saved))
    concurrency = int(os.environ.get("ASHLAR_TEMPEST_CONCURRENCY", "2"))
    kept = os.environ.get("ASHLAR_TEMPEST_WORKDIR")
    found = tempest_run.run(Path(kept) if kept
                            else tmp_path_factory.mktemp("tempest"),
                            concurrency=concurrency)
    print(found.report())
    return found


def _listing(reasons: dict[str, str], tests: list[str]) -> str:
    return "\n".join("  %s  # %s" % (test, reasons.get(test, ""))
                     for test in tests)


def _where(outcome: tempest_run.Outcome) -> str:
    """Where the run's full report and logs are."""
    return ("\nfull report: %s/report.txt" % outcome.workdir
            if outcome.workdir else "")


def test_run_completes(outcome):
    assert outcome.complete, (
        "Tempest did not complete (exit %s, %d incomplete, %s); stderr:\n%s"
        % (outcome.returncode, len(outcome.incomplete), outcome.summary(),
           outcome.stderr_tail) + _where(outcome))


def test_every_failure_is_known(outcome):
    known = tempest_run.load_known()
    new = sorted(set(outcome.failed) - set(known))
    assert not new, (
        "%d failures not in tests/tempest/known_failures.txt (%s):\n%s"
        % (len(new), outcome.summary(), _listing(outcome.failed, new))
        + _where(outcome))


def test_every_known_failure_still_fails(outcome):
    if not outcome.complete:
        pytest.skip("the run did not complete (test_run_completes)")
    known = tempest_run.load_known()
    fixed = sorted(set(known) - set(outcome.failed))
    how = {test: "passed" for test in outcome.passed}
    how.update({test: "skipped: " + why
                for test, why in outcome.skipped.items()})
    assert not fixed, (
        "%d tests in tests/tempest/known_failures.txt no longer fail: "
        "remove them from the list (%s):\n%s"
        % (len(fixed), outcome.summary(),
           "\n".join("  %s  (%s)" % (test, how.get(test, "not run"))
                     for test in fixed)) + _where(outcome))
