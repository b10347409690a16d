"""benchmarks/backend_scenarios.py: its pure helpers (the scenarios
themselves run with ``python -m benchmarks.backend_scenarios``)."""

import argparse

import pytest

from benchmarks import backend_scenarios


def test_backends_are_parsed_in_the_given_order():
    assert backend_scenarios.parse_backends("nfs, file,rbd") == [
        "nfs", "file", "rbd"]


@pytest.mark.parametrize("text", ["", "file,ceph", "file,file", ","])
def test_unknown_repeated_or_no_backends_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="distinct names"):
        backend_scenarios.parse_backends(text)


def test_the_type_is_multiattach_on_its_backend():
    assert backend_scenarios.specs("iscsi") == {
        "multiattach": "<is> True", "volume_backend_name": "iscsi"}


def _records():
    s2 = {"scenario": "S2", "concurrency": 1, "volumes_per_s": 4.5,
          "available_ms": {"n": 2, "p50_ms": 100.0, "p95_ms": 150.0},
          "gone_ms": {"n": 0}}
    s3 = {"scenario": "S3", "concurrency": 8, "cycles_per_s": 12.0,
          "cycle_ms": {"n": 5, "p50_ms": 300.0, "p95_ms": 400.0},
          "refused": {"409": 2}, "final_state_ok": True}
    s4 = {"scenario": "S4", "hosts": 16, "first_try_successes": 15,
          "all_attached_ms": None, "after_attach_ok": True,
          "after_detach_ok": False}
    return ([{"backend": "file", **s2}, {"backend": "file", **s3},
             {"backend": "file", **s4}, {"backend": "nfs", **s2}])


def test_the_table_has_a_column_per_backend_and_a_row_per_figure():
    lines = backend_scenarios.table(_records()).splitlines()
    assert lines[0] == "| figure | file | nfs |"
    assert lines[1] == "|---|---|---|"
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:]
            for line in lines[2:]}
    assert rows["S2 c=1 avail p50/p95 ms"] == ["100.0/150.0", "100.0/150.0 |"]
    assert rows["S2 c=1 gone p50 ms"] == ["-", "- |"]
    assert rows["S3 c=8 refused, end ok"] == ["2, True", "- |"]
    assert rows["S4 first try"] == ["15/16", "- |"]
    assert rows["S4 states ok"] == ["False", "- |"]
