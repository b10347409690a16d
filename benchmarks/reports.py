#!/usr/bin/env python3
"""Capability reports absorbed per second by one API worker and one scheduler.

The consumer is the real endpoint (the API worker's ``CapabilityCache`` or a
``SchedulerManager``) behind an oslo.messaging server on the real RabbitMQ
fanout topic, in this process, with the threading executor the services
use.  Simulated volume services in other processes cast ``--reports``
reports (``--backends`` distinct backends of ``--pools`` pools each) while
the consumer holds its first message, so the queue fills; then the consumer
is released and the time to absorb them all is measured.  That gives the
drain rate of one consumer, undisturbed by the senders sharing the CPU.
The store alone (no bus) is measured too, as the ceiling.

    python benchmarks/reports.py --reports 20000 --pools 1,10
"""

import argparse
import itertools
import json
import multiprocessing
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

import oslo_messaging as messaging  # noqa: E402

from benchmarks.placement import backend_report  # noqa: E402
from common import capabilities  # noqa: E402
from common import constants  # noqa: E402
from common import rpc  # noqa: E402
from common import service  # noqa: E402
from services.scheduler import placement  # noqa: E402
from deploy.testbed import harness  # noqa: E402


class Gate:
    """Hold every report until released; count those absorbed."""

    target = messaging.Target(version="1.0")

    def __init__(self, inner) -> None:
        self.inner = inner
        self.open = threading.Event()
        self.counter = itertools.count(1)
        self.absorbed = 0
        self.first = threading.Event()

    @messaging.expose
    def update_service_capabilities(self, ctxt, **kwargs) -> None:
        self.first.set()
        self.open.wait()
        self.inner.update_service_capabilities(ctxt, **kwargs)
        self.absorbed = next(self.counter)


def make_consumer(kind: str, conf):
    if kind == "api":
        from services.api import capability_cache
        from services.scheduler import rpcapi
        return capability_cache.CapabilityCache(conf,
                                                rpcapi.SchedulerAPI(conf))
    from services.scheduler import manager
    return manager.SchedulerManager(conf)


def over_the_bus(kind: str, conf, conf_path: str, args, pools: int) -> dict:
    consumer = make_consumer(kind, conf)
    gate = Gate(consumer)
    server = rpc.get_server(messaging.Target(
        topic=constants.CAPABILITIES_TOPIC,
        server="bench-%s-%d" % (kind, os.getpid())), [gate])
    server.start()
    try:
        spawn = multiprocessing.get_context("spawn")
        per_sender = args.reports // args.senders
        senders = [spawn.Process(target=_send, args=(
            conf_path, k, args.senders, per_sender, args.backends, pools))
            for k in range(args.senders)]
        sent_at = time.perf_counter()
        for proc in senders:
            proc.start()
        for proc in senders:
            proc.join()
        send_s = time.perf_counter() - sent_at
        total = per_sender * args.senders
        harness.wait_for(gate.first.is_set, timeout=60,
                         what="the first report")
        started = time.perf_counter()
        gate.open.set()
        harness.wait_for(lambda: gate.absorbed >= total, timeout=600,
                         interval=0.01, what="%d reports absorbed" % total)
        elapsed = time.perf_counter() - started
    finally:
        server.stop()
        server.wait()
    return {"consumer": kind, "via": "rabbitmq", "pools_per_report": pools,
            "reports": total, "absorbed_per_s": round(total / elapsed),
            "pools_per_s": round(total * pools / elapsed),
            "senders_cast_per_s": round(total / send_s)}


def _send(conf_path: str, k: int, step: int, count: int, backends: int,
          pools: int) -> None:
    import random

    from common import context as ashlar_context
    from services.scheduler import rpcapi

    conf = service.prepare_process(["--config-file", conf_path])
    client = rpcapi.CapabilitiesAPI(conf)
    ctxt = ashlar_context.get_admin_context()
    rng = random.Random(k)
    reports = [backend_report(rng, i, pools) for i in range(k, backends,
                                                            step)]
    for i in range(count):
        index = k + (i % len(reports)) * step
        client.update_service_capabilities(
            ctxt, "h%d@b%d" % (index, index), reports[i % len(reports)],
            time.time())
    rpc.cleanup()


def store_only(kind: str, args, pools: int) -> dict:
    import random
    rng = random.Random(0)
    store = (capabilities.CapabilityStore(3600) if kind == "api"
             else placement.new_store(3600))
    reports = [backend_report(rng, i, pools) for i in range(args.backends)]
    total = args.reports
    started = time.perf_counter()
    for i in range(total):
        store.update("h%d@b%d" % (i % args.backends, i % args.backends),
                     reports[i % args.backends], float(i))
    elapsed = time.perf_counter() - started
    return {"consumer": kind, "via": "store only", "pools_per_report": pools,
            "reports": total, "absorbed_per_s": round(total / elapsed),
            "pools_per_s": round(total * pools / elapsed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reports", type=int, default=20000)
    parser.add_argument("--backends", type=int, default=1000)
    parser.add_argument("--pools", default="1,10")
    parser.add_argument("--senders", type=int, default=4)
    args = parser.parse_args()
    vhost, drop_vhost = harness.broker_vhost()
    conf_path = "/tmp/ashlar-bench-reports-%d.conf" % os.getpid()
    with open(conf_path, "w") as conf_file:
        conf_file.write("[DEFAULT]\nhost = bench\ntransport_url = %s\n"
                        "[database]\nconnection = sqlite://\n" % vhost)
    try:
        conf = service.prepare_process(["--config-file", conf_path])
        for pools in [int(p) for p in args.pools.split(",")]:
            for kind in ("api", "scheduler"):
                print(json.dumps(store_only(kind, args, pools)), flush=True)
                print(json.dumps(over_the_bus(kind, conf, conf_path, args,
                                              pools)), flush=True)
        rpc.cleanup()
    finally:
        os.unlink(conf_path)
        drop_vhost()


if __name__ == "__main__":
    main()
