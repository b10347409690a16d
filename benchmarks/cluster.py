#!/usr/bin/env python3
"""Start Ashlar as separate processes on RabbitMQ + PostgreSQL for a benchmark.

Prints the endpoint, then runs until Ctrl-C / SIGTERM and removes its vhost,
database and processes.  Reuses the functional-test harness so benchmarks and
tests start the very same deployment::

    python benchmarks/cluster.py --port 8780 --db postgresql --volume-nodes 1
"""

import argparse
import pathlib
import signal
import tempfile
import threading

from deploy.testbed import harness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8780)
    parser.add_argument("--db", default="postgresql",
                        choices=["postgresql", "mysql"])
    parser.add_argument("--volume-nodes", type=int, default=1)
    parser.add_argument("--api-workers", type=int, default=2)
    parser.add_argument("--backends", default="file",
                        help="enabled_backends of every volume node")
    parser.add_argument("--extra", default="",
                        help="extra config text (e.g. backend sections)")
    args = parser.parse_args()
    vhost, remove_vhost = harness.broker_vhost()
    db_url, drop_db = harness.database(args.db)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ashlar-bench-"))
    dep = harness.Deployment(tmp, vhost, db_url, api_workers=args.api_workers,
                             report_interval=5, service_down_time=30,
                             polling_interval=10)
    dep.port = args.port
    dep.endpoint = "http://127.0.0.1:%d/v3/%s" % (
        args.port, "ba5eba11ba5eba11ba5eba11ba5eba11")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        dep.db_sync()
        dep.start("scheduler", "services.scheduler", "bench")
        for i in range(args.volume_nodes):
            dep.start("volume%d" % i, "services.volume", "node%d" % i,
                      backends=args.backends, extra=args.extra)
        dep.start("api", "services.api", "bench")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: len(client.pools()) >= args.volume_nodes,
                         timeout=60, what="pools")
        print("endpoint %s logs %s" % (dep.endpoint, tmp), flush=True)
        stop.wait()
    finally:
        dep.stop_all()
        drop_db()
        remove_vhost()


if __name__ == "__main__":
    main()
