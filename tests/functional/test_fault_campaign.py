"""The fault campaign of issue 20, short: nothing stuck, lost or leaked.

``benchmarks/fault_campaign.py`` with a few seconds of load per fault: the
attach cycle at concurrency 8 (and one thread creating and deleting
volumes) while a volume node is killed, the campaign's own RabbitMQ node
is killed and started again, the campaign's own PostgreSQL restarts and
an api worker is killed.  Without a private server (initdb, pg_ctl) the
database fault terminates every connection to the shared one instead.
After each fault, within the recovery window: cycles succeed again; the
server itself ends everything it had in flight (before the client deletes
what it holds); every row the client holds exists, every backend file has
its row; no row is left that no client knows of (volumes and attachments:
a create that got no answer is found by the client, by its instance or
name, and each such create leaves at most one row); the client saw only
errors it would retry (never a 500, never a delete ending
``error_deleting``).  The eight threads take turns on every volume of the
pool, so faults land on contention for shared volumes; a killed volume
node stays dead until the api shows it down.  The machine's broker and
database, which other tests use meanwhile, are never touched.
"""

import json

import pytest

from benchmarks import fault_campaign

SETTINGS = dict(concurrency=8, pool=8, churn=1, load_seconds=1.0,
                min_cycles=10, outage=6.0, window=30.0, rpc_call_timeout=3,
                transition_timeout=5, check_interval=1, lease=5)
COUNTS = ("lost", "leaked", "drift")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, dict]:
    """One short campaign for the module: its report per fault."""
    settings = fault_campaign.Settings(
        faults=fault_campaign.chosen_faults(",".join(fault_campaign.FAULTS)),
        **SETTINGS)
    with fault_campaign.Campaign(tmp_path_factory.mktemp("campaign"),
                                 settings) as campaign:
        return {r["fault"]: r for r in campaign.run()}


def _report(results: dict[str, dict], fault: str) -> tuple[dict, str]:
    """The fault's report, and the same as text for a failure message."""
    report = results[fault]
    return report, json.dumps({k: v for k, v in report.items()
                               if not k.startswith("_")}, indent=1)


@pytest.mark.parametrize("fault", fault_campaign.FAULTS)
def test_recovers_with_nothing_lost_or_leaked(results, fault):
    """Cycles succeed again; the server ends what it had in flight;
    nothing lost, leaked, stuck or orphaned; the client saw only
    retryable errors."""
    report, shown = _report(results, fault)
    assert report["recovery_s"] is not None, shown
    assert report["load_reached"], shown
    assert report["cycles_after_recovery"] >= SETTINGS["min_cycles"], shown
    assert {k: report[k] for k in COUNTS} == dict.fromkeys(COUNTS, 0), shown
    assert report["left_by_server"] == [], shown
    assert report["stuck"] == 0, shown
    assert report["orphaned_rows"] == [], shown
    assert report["found_by_instance"] <= report["unanswered_creates"], shown
    assert report["settle_s"] is not None, shown
    assert report["non_retryable"] == {}, shown
