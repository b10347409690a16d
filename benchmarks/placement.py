#!/usr/bin/env python3
"""Scheduler placement time with 1,000 and 10,000 reported pools.

Two ways, each printing p50/p95/max per placement and placements/s:

``inproc``  the scheduler's own store and placer, filled with simulated
            reports (``--pools-per-backend`` pools per backend, one backend
            in five multiattach, capacities at random).  Placements
            alternate with fresh reports (``--reports-per-placement``), so
            the weight index is re-sorted as it would be under live traffic.
``bus``     a ``SchedulerManager`` in this process, listening on the real
            RabbitMQ fanout, with a services table on a real database
            holding one heartbeating row per simulated backend; simulated
            reporters cast every backend's report over the bus; then
            ``_place`` (up-hosts from the table, filters, weigher, charge)
            is timed.

Cases: a multiattach type (one backend in five), the default type, a type
pinned to one backend (``volume_backend_name``), and a type no pool
satisfies.

    python -m benchmarks.placement inproc --pools 1000,10000
    python -m benchmarks.placement bus --pools 1000,10000 --db postgresql
"""

import argparse
import json
import os
import random
import time
import uuid

from benchmarks.common import summarize
from common import exception
from services.scheduler import placement
from services.scheduler.filters import PlacementRequest

CASES = {
    "multiattach": {"multiattach": "<is> True"},
    "default": {},
    "one_backend": {"volume_backend_name": "b7"},
    "unsatisfiable": {"multiattach": "<is> True",
                      "volume_backend_name": "nowhere"},
}


def backend_report(rng: random.Random, index: int, pools: int) -> dict:
    multiattach = index % 5 == 0
    return {
        "volume_backend_name": "b%d" % index, "vendor_name": "Sim",
        "driver_version": "1.0", "storage_protocol": "iSCSI",
        "availability_zone": "nova",
        "pools": [{
            "pool_name": "p%d" % p,
            "total_capacity_gb": (total := rng.choice([1024, 4096, 16384])),
            "free_capacity_gb": rng.randint(total // 10, total),
            "allocated_capacity_gb": 0,
            "provisioned_capacity_gb": rng.randint(0, total),
            "reserved_percentage": rng.choice([0, 5]),
            "max_over_subscription_ratio": 20.0,
            "thin_provisioning_support": True,
            "thick_provisioning_support": False, "multiattach": multiattach,
            "backend_state": "up", "total_volumes": 0}
            for p in range(pools)]}


def time_placements(place, specs: dict, count: int, between=None) -> dict:
    request = PlacementRequest(size_gb=1, extra_specs=specs,
                               availability_zones=None)
    durations, failures = [], 0
    started = time.perf_counter()
    for i in range(count):
        if between is not None:
            between(i)
        t0 = time.perf_counter()
        try:
            place(request)
        except exception.NoValidBackend:
            failures += 1
        durations.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    return dict(summarize(durations), no_valid_backend=failures,
                placements_per_s=round(count / elapsed, 1))


def inproc(args: argparse.Namespace) -> None:
    for total in args.pools:
        _inproc(args, total)


def _inproc(args: argparse.Namespace, total: int) -> None:
    rng = random.Random(total)
    store = placement.new_store(3600)
    placer = placement.Placer(store)
    backends = total // args.pools_per_backend
    reports = [backend_report(rng, i, args.pools_per_backend)
               for i in range(backends)]
    started = time.perf_counter()
    for i, report in enumerate(reports):
        store.update("h%d@b%d" % (i, i), report, time.time())
    fill = time.perf_counter() - started
    clock = [time.time()]

    def churn(_i: int) -> None:
        for _k in range(args.reports_per_placement):
            j = rng.randrange(backends)
            clock[0] += 1e-3
            store.update("h%d@b%d" % (j, j), reports[j], clock[0])
    for case, specs in CASES.items():
        count = args.count if case != "unsatisfiable" else args.count // 4
        result = time_placements(placer.choose, specs, count, churn)
        print(json.dumps(dict(result, mode="inproc", pools=total,
                              backends=backends, case=case,
                              reports_between_placements=
                              args.reports_per_placement,
                              store_fill_s=round(fill, 3))), flush=True)


def bus(args: argparse.Namespace) -> None:
    import multiprocessing

    from common import context as ashlar_context
    from common import rpc
    from common import service
    from common.db.api import engine as db_engine
    from common.db import migrations
    from common.db import models
    from common.db.api import services as services_db
    from common.db.api.engine import writer
    from deploy.testbed import harness
    from services.scheduler import launcher

    vhost, drop_vhost = harness.broker_vhost()
    db_url, drop_db = harness.database(args.db)
    conf_path = "/tmp/ashlar-bench-placement-%d.conf" % os.getpid()
    with open(conf_path, "w") as conf_file:
        conf_file.write("[DEFAULT]\nhost = bench\ntransport_url = %s\n"
                        "service_down_time = 3600\nreport_interval = 60\n"
                        "backend_stats_polling_interval = 1800\n"
                        "[database]\nconnection = %s\n" % (vhost, db_url))
    try:
        conf = service.prepare_process(["--config-file", conf_path])
        migrations.upgrade(db_engine.get_engine())
        svc = launcher.build_service(conf)
        svc.start()
        manager = svc.manager
        ctxt = ashlar_context.get_admin_context()

        @writer
        def add_services(context, hosts):
            context.session.execute(models.Service.__table__.insert(), [
                {"uuid": str(uuid.uuid4()), "host": host,
                 "binary": "ashlar-volume", "topic": "ashlar-volume",
                 "availability_zone": "nova", "disabled": False,
                 "heartbeat_at": services_db.utcnow()} for host in hosts])
        for total in args.pools:
            backends = total // args.pools_per_backend
            hosts = ["s%d-h%d@b%d" % (total, i, i) for i in range(backends)]
            add_services(ctxt, hosts)
            started = time.perf_counter()
            spawn = multiprocessing.get_context("spawn")
            senders = [spawn.Process(
                target=_send_reports,
                args=(conf_path, hosts[k::args.reporters], total,
                      args.pools_per_backend))
                for k in range(args.reporters)]
            for proc in senders:
                proc.start()
            wanted = set(hosts)
            harness.wait_for(
                lambda w=wanted: w <= manager.store.fresh_backends(),
                timeout=300, interval=0.05,
                what="%d backends reported over the bus" % backends)
            absorbed = time.perf_counter() - started
            for proc in senders:
                proc.join()
            for case, specs in CASES.items():
                count = (args.count if case != "unsatisfiable"
                         else args.count // 4)
                result = time_placements(manager._place, specs, count)
                print(json.dumps(dict(
                    result, mode="bus", pools=total, backends=backends,
                    pools_held=manager.store.pool_count(), case=case,
                    db=args.db, reports_absorbed_s=round(absorbed, 2))),
                    flush=True)
        svc.stop()
        rpc.cleanup()
        db_engine.get_engine().dispose()
    finally:
        os.unlink(conf_path)
        drop_db()
        drop_vhost()


def _send_reports(conf_path: str, hosts: list[str], total: int,
                  pools: int) -> None:
    from common import context as ashlar_context
    from common import service
    from services.scheduler import rpcapi

    conf = service.prepare_process(["--config-file", conf_path])
    client = rpcapi.CapabilitiesAPI(conf)
    ctxt = ashlar_context.get_admin_context()
    rng = random.Random(total)
    for host in hosts:
        index = int(host.rsplit("@b", 1)[1])
        client.update_service_capabilities(
            ctxt, host, backend_report(rng, index, pools), time.time())
    # NOTE: let the casts leave before the process exits.
    from common import rpc
    rpc.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["inproc", "bus"])
    parser.add_argument("--pools", default="1000,10000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--pools-per-backend", type=int, default=10)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--reports-per-placement", type=int, default=1)
    parser.add_argument("--reporters", type=int, default=4)
    parser.add_argument("--db", choices=["mysql", "postgresql"],
                        default="postgresql")
    args = parser.parse_args()
    inproc(args) if args.mode == "inproc" else bus(args)


if __name__ == "__main__":
    main()
