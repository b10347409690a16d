#!/usr/bin/env python3
"""CPU of one volume read (``volume_get``, what every ``GET /volumes/{id}``
poll, scheduler placement and volume node create does) in this process.

Makes a volume (with no attachment, as most reads find it) in a new
database on the chosen server (``deploy.testbed.harness``), reads it
``--calls`` times per repeat, and prints one JSON line: CPU microseconds
per read (min and median of ``--repeats``) and the statements one read
sends::

    python -m benchmarks.volume_read [--db mysqldb|mysql|postgresql]
"""

import argparse
import json
import os
import statistics
import time

import sqlalchemy as sa

from deploy.testbed import harness


def measure(calls: int, repeats: int) -> dict:
    """Per-read CPU and statements, on the database the unit fixtures use."""
    from common.db.api import engine as db_engine
    from common.db.api import execution
    from common.db.api import volumes as volumes_db
    from tests.unit.db import fixtures
    fixtures.setup()
    fixtures.clean()
    volume = fixtures.make_volume()
    ctxt = fixtures.admin()
    for _ in range(calls // 5):     # warm: pools, statement caches
        volumes_db.volume_get(ctxt, volume.id)
    spent = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(calls):
            volumes_db.volume_get(ctxt, volume.id)
        spent.append((time.process_time() - started) / calls * 1e6)
    seen: list = []
    engine = execution.autocommit_pool() or db_engine.get_engine()
    sa.event.listen(engine, "before_cursor_execute",
                    lambda *args: seen.append(args[2].split()[0]))
    volumes_db.volume_get(ctxt, volume.id)
    fixtures.clean()
    for pool in {engine, db_engine.get_engine()}:   # let the database go
        pool.dispose()
    return {"cpu_us_min": round(min(spent)), "cpu_us_median":
            round(statistics.median(spent)), "statements": seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["mysqldb", "mysql", "postgresql"],
                        default="mysqldb")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    url, drop = harness.database(args.db)
    os.environ["ASHLAR_UNIT_DB_URL"] = url
    try:
        figures = measure(args.calls, args.repeats)
    finally:
        drop()
    print(json.dumps({"volume_read": args.db, "calls": args.calls,
                      "repeats": args.repeats, **figures}))


if __name__ == "__main__":
    main()
