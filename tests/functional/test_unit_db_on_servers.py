"""The unit tests that use a database, run on PostgreSQL and MariaDB.

The unit run uses SQLite, which serialises writers: there the races of
``tests/unit/db/test_attachments_db.py`` (racing reservations, limits,
removals on one host) pass whatever the locking does.  Here the same tests
run in a process of their own (oslo.db's transaction context is configured
once per process) against an empty server database, through the driver the
deployments use.
"""

import os
import subprocess
import sys

import pytest

from deploy.testbed import harness

#: The unit test folders whose tests run on ``tests/unit/db/fixtures.py``.
DATABASE_BACKED = ["tests/unit/db", "tests/unit/api", "tests/unit/volume"]


@pytest.mark.parametrize("kind", ["postgresql", "mysql", "mysqldb"])
def test_database_unit_tests_pass_on_a_server_database(kind):
    url, drop = harness.database(kind)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             *DATABASE_BACKED],
            cwd=harness.REPO, env=dict(os.environ, ASHLAR_UNIT_DB_URL=url),
            capture_output=True, text=True, timeout=600)
    finally:
        drop()
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " skipped" not in run.stdout, \
        run.stdout[-2000:]
