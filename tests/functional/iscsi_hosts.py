"""What the iSCSI tests of both LUN stores share (``test_iscsi.py`` on
files, ``test_iscsi_rbd.py`` on RBD images): compute hosts' libiscsi
sessions from a driver's connection_info, the fence latency, a deployment
with one ``iscsi`` backend, and a takeover through it."""

import contextlib
import json
import statistics
import time

import pytest

from common import libiscsi
from deploy.testbed import failover_story
from deploy.testbed import harness
from drivers import base

IQN = "iqn.1993-08.org.debian:01:"
HOST_A = {"host": "compute-a", "initiator": IQN + "compute-a"}
HOST_B = {"host": "compute-b", "initiator": IQN + "compute-b"}
FENCE_RUNS = 20


def report(label, what, **figures):
    print("\n%s %s: %s" % (label, what, json.dumps(figures)))


def login(info, connector, chap=True):
    """A host's session from the connection_info it was given."""
    data = info["data"]
    return libiscsi.Session(
        data["target_portal"], data["target_iqn"], data["target_lun"],
        connector["initiator"], chap=(data["auth_username"],
                                      data["auth_password"]) if chap else None)


def attach(driver, volume, connector):
    """initialize_connection, then a logged-in, registered session."""
    info = driver.initialize_connection(volume, connector)
    session = login(info, connector)
    session.register(libiscsi.registration_key(connector["host"]))
    return info, session


def fence_latency(driver, volume, label):
    """``FENCE_RUNS`` fences of host A while host B stays: each refuses A's
    next write and B's goes on; the p50, p95 and max are printed
    (``label``), figures only: ``benchmarks.storage_userspace`` is their
    benchmark.  Returns the runs that ended with A refused."""
    _info_b, host_b = attach(driver, volume, HOST_B)
    took, refused = [], 0
    with host_b:
        for _ in range(FENCE_RUNS):
            _info, host_a = attach(driver, volume, HOST_A)
            with host_a:
                host_a.write(0, b"a" * 512)
                started = time.perf_counter()
                cut = driver.fence(volume, base.FenceTarget(
                    host=HOST_A["host"]))
                took.append(time.perf_counter() - started)
                with pytest.raises(libiscsi.Error):
                    host_a.write(0, b"A" * 512)
                refused += 1
            driver.unfence(volume, cut)
            host_b.write(0, b"b" * 512)
            assert host_b.read(0, 512) == b"b" * 512
    took.sort()
    report(label, "fence (PREEMPT + ACL + connections)", runs=FENCE_RUNS,
           p50_ms=round(statistics.median(took) * 1e3, 2),
           p95_ms=round(took[int(0.95 * (FENCE_RUNS - 1))] * 1e3, 2),
           max_ms=round(took[-1] * 1e3, 2))
    return refused


@contextlib.contextmanager
def deployment(folder, vhost, section, types):
    """A scheduler, an api and one volume node whose ``[iscsi]`` backend
    has the options ``section``; ``types``: the names of a multiattach
    type and of a failover type made on it. Yields (deployment, client).
    """
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(folder, vhost, db_url)
    dep.db_sync()
    try:
        client = harness.Client(dep.endpoint)
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "iscsinode",
                  backends="iscsi",
                  extra="[iscsi]\nvolume_driver = iscsi\n" + section)
        dep.start("api", "services.api", "api")
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the iSCSI pool's report")
        shared, failover = types
        assert client.post("/types", {"volume_type": {
            "name": shared, "extra_specs": {
                "multiattach": "<is> True", "volume_backend_name": "iscsi"}}}
        ).status_code == 200
        failover_story.failover_type(client, failover, "iscsi")
        yield dep, client
    finally:
        dep.stop_all()
        drop()


@contextlib.contextmanager
def taken_over(dep, client, failover, label):
    """A volume of type ``failover`` held read/write by compute-a and
    reserved by compute-b; b takes over: a's next write is refused at the
    target, b's goes through. Yields (volume id, the hosts' configs, a's
    and b's holds), then closes both."""
    vid = client.create_volume(volume_type=failover)["id"]
    client.wait_status(vid, "available")
    config = {host: dep.config("agent-" + host, host)
              for host in ("compute-a", "compute-b")}
    active = failover_story.Held(config["compute-a"], vid, "rw")
    passive = failover_story.Held(config["compute-b"], vid,
                                  attachment_id=failover_story.reserve(
                                      client, vid))
    try:
        assert active.clients == []
        assert active.write(0, b"A before") == {"written": 8}
        assert passive.read(0, 8) == b"A before"
        answer = failover_story.takeover(active, passive)
        error, seconds = failover_story.fenced_write_error(active)
        assert error.startswith(("ReservationConflict", "Error")), error
        assert passive.write(0, b"B writes") == {"written": 8}
        assert passive.read(8192, 15) == bytes(15)
        report(label, "takeover",
               takeover_ms=round(answer["seconds"] * 1e3, 1),
               refused_write_ms=round(seconds * 1e3, 1), error=error[:60])
        yield vid, config, active, passive
    finally:
        active.close()
        passive.close()
