"""An Ashlar deployment shaped like the Cinder RBD anchor, served until
Ctrl-C: one Ceph RBD backend (multiattach) and one plain backend.

It is ``ma_cluster.Cluster`` (the functional tests' processes: scheduler,
API under gunicorn with ``--workers``, volume nodes, on a fresh RabbitMQ
vhost and a fresh MariaDB or PostgreSQL database) with other volume nodes:
``node1@rbd`` (``volume_driver = rbd`` on an existing cluster; the only
multiattach pool, so bench.py's multiattach type lands there) and
``node2@plain`` (qcow2 files, never multiattach: bench.py's S1/S5 backend).
``--file`` adds ``node3@file`` (raw files, not multiattach) for the
snapshot benchmark; leave it out for bench.py, whose plain backend is the
first one that is not multiattach.  Snapshot quotas are lifted too::

    python -m benchmarks.rbd_cluster serve --ceph-conf /tmp/ceph-anchor/ceph.conf \\
        --keyring /tmp/ceph-anchor/ceph.client.cinder.keyring [--db mysql] [--file]

It prints "Ashlar ready in S s at ENDPOINT" once every pool is listed.
"""

import argparse
import signal
import threading
import time

from benchmarks.ma_cluster import PLAIN
from benchmarks.ma_cluster import Cluster
from deploy.testbed import harness

QUOTAS = "[DEFAULT]\nquota_snapshots = -1\n"
FILE = "[file]\nvolume_driver = file\nfile_volume_format = raw\n" \
    "file_multiattach = false\n"


def rbd_section(args: argparse.Namespace) -> str:
    return ("[rbd]\nvolume_driver = rbd\nrbd_pool = %s\nrbd_user = %s\n"
            "rbd_ceph_conf = %s\nrbd_keyring = %s\n"
            % (args.pool, args.user, args.ceph_conf, args.keyring))


class RbdCluster(Cluster):
    """Scheduler, API, node1@rbd, node2@plain and optionally node3@file."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args.db, args.workers)
        self.rbd = rbd_section(args)
        self.with_file = args.file

    def start(self) -> float:
        started = time.monotonic()
        self.dep.db_sync()
        nodes = [("node1", "rbd", self.rbd), ("node2", "plain", PLAIN)]
        if self.with_file:
            nodes.append(("node3", "file", FILE))
        self.dep.start("scheduler", "services.scheduler", "sched")
        for host, backend, section in nodes:
            self.dep.start(host, "services.volume", host, backends=backend,
                           extra=QUOTAS + section)
        self.dep.start("api", "services.api", "api", extra=QUOTAS)
        wanted = sorted("%s@%s#%s" % (h, b, b) for h, b, _s in nodes)
        harness.wait_for(lambda: sorted(self.client.pools()) == wanted,
                         timeout=120, what="pools %s" % wanted)
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--ceph-conf", required=True)
    parser.add_argument("--keyring", required=True)
    parser.add_argument("--user", default="cinder")
    parser.add_argument("--pool", default="volumes")
    parser.add_argument("--db", choices=["mysql", "postgresql"],
                        default="mysql")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--file", action="store_true",
                        help="also node3@file (raw files, not multiattach)")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    cluster = RbdCluster(args)
    try:
        ready = cluster.start()
        print("Ashlar ready in %.2f s at %s" % (ready, cluster.dep.endpoint))
        print("State and logs: %s" % cluster.folder, flush=True)
        stop.wait()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
