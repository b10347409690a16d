"""common.tested_versions: which releases a fast path was tested with, and
the one line that says which path runs."""

from importlib import metadata

import pytest

from common import tested_versions

RANGE = tested_versions.ReleaseRange("SomeLib", "2.0.43", "2.2")


def _installed(monkeypatch, version):
    def version_of(name):
        assert name == "SomeLib"
        if version is None:
            raise metadata.PackageNotFoundError(name)
        return version
    monkeypatch.setattr(metadata, "version", version_of)


@pytest.mark.parametrize("version,holds", [
    ("2.0.43", True), ("2.1.9", True), ("2.1.10.post1", True),
    ("2.0.42", False),            # older than setup.cfg's lowest
    ("2.2", False), ("2.2.0", False), ("3.0.1", False),
    ("2.2.0b1", False),           # a pre-release counts as its release
    (None, False),                # not installed
])
def test_a_release_is_in_the_range_from_lowest_to_below(monkeypatch, version,
                                                         holds):
    _installed(monkeypatch, version)
    assert RANGE.holds() is holds


def test_which_path_runs_is_logged_once_per_library(monkeypatch):
    _installed(monkeypatch, "2.2.0")
    monkeypatch.setattr(tested_versions, "_ANNOUNCED", set())
    lines = []

    def log(message, values):
        lines.append(message % values)
    for _ in range(2):
        tested_versions.announce(RANGE, False, "fast", "public", log=log)
    assert lines == ["SomeLib 2.2.0 is outside the tested range "
                     ">=2.0.43,<2.2: public"]
    other = tested_versions.ReleaseRange("Other", "1.0", "2")
    monkeypatch.setattr(metadata, "version", lambda _name: "1.5")
    tested_versions.announce(other, True, "fast", "public", log=log)
    assert lines[1:] == ["Other 1.5 is in the tested range >=1.0,<2: fast"]


def test_each_fast_path_follows_its_range_as_installed():
    """Each module took its path from its range when it was imported."""
    from common import rpc
    from common.db.api import direct
    from services.api import keepalive
    found = {tested.distribution: tested.holds() for tested in (
        direct.TESTED, keepalive.TESTED, rpc.MESSAGING_TESTED)}
    assert found == {"SQLAlchemy": direct.PLANS, "gunicorn": keepalive.LINGERS,
                     "oslo.messaging": rpc.POLL_FLOOR_RAISED}
