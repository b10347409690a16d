"""A backend's capability report (services/volume/capability_report.py):
one report per burst of capacity changes, none after the withdrawal."""

import threading
from unittest import mock


def test_a_burst_of_capacity_changes_makes_one_report(mgr):
    reporter = mgr.reporter
    reported = []
    done = threading.Event()

    def report():
        reported.append(1)
        done.set()
    with mock.patch.object(reporter, "report", side_effect=report):
        for _ in range(20):
            reporter.capacity_changed()
        assert done.wait(5)
    assert reported == [1]
    assert reporter._report_pending is False


def test_stop_withdraws_the_pools_and_no_report_follows(mgr):
    api = mgr.reporter.capabilities_rpcapi
    mgr.report_capabilities()
    [(args, _kw)] = api.update_service_capabilities.call_args_list
    mgr.before_stop()
    api.withdraw_service_capabilities.assert_called_once_with(
        mock.ANY, "node1@b1", mock.ANY)
    withdrawn_at = api.withdraw_service_capabilities.call_args[0][2]
    assert withdrawn_at >= args[3]          # later than the last report
    mgr.report_capabilities()               # a late periodic or timer one
    assert api.update_service_capabilities.call_count == 1
