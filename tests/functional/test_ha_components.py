"""The HA engines of deploy/ha/README.md, started, used and broken.

Each cluster (deploy/testbed/components: etcd, rabbit_cluster, galera)
is started once for the module, on its own loopback ports and folders;
a test kills one member with ``kill -9`` and measures what a client sees.
The figures (start time, Pss, failover gaps) are printed (``pytest -s``)
and bounded by generous limits, so a loaded machine does not fail them.
Skipped with the install command when an engine is missing (failed under
``CI=true``).
"""

import json
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from deploy.testbed import harness
from deploy.testbed.components import etcd as etcd_component
from deploy.testbed.components import galera as galera_component
from deploy.testbed.components import rabbit_cluster

#: Seconds a client may take to go on after a member's kill -9; what it
#: took is printed.
FAILOVER_LIMIT = 20.0
#: Seconds the RPC child goes on sending after the kill.
RPC_SECONDS = 5
#: Writes through haproxy after the kill, before the test stops.
WRITES_AFTER = 20
WRITE_LIMIT = 60.0
#: Seconds between two failed writes (haproxy refuses at once while the
#: dead writer is not yet marked down).
WRITE_RETRY = 0.05


def report(what: str, **figures: object) -> None:
    print("\nHA %s: %s" % (what, json.dumps(figures, default=str)))


def _started(component, cluster_class, tmp_path_factory):
    """A module fixture's cluster: started (its cost printed), then
    killed."""
    component.available()
    with cluster_class(tmp_path_factory.mktemp(cluster_class.label)
                       ) as cluster:
        report("%s up" % cluster.label, seconds=round(
            cluster.start_seconds, 1), pss_mib=cluster.pss_mib(),
            members={name: cluster.pss_mib(name) for name in cluster.procs})
        yield cluster


@pytest.fixture(scope="module")
def etcd(tmp_path_factory):
    yield from _started(etcd_component, etcd_component.Etcd,
                        tmp_path_factory)


@pytest.fixture(scope="module")
def rabbit(tmp_path_factory):
    yield from _started(rabbit_cluster, rabbit_cluster.RabbitCluster,
                        tmp_path_factory)


@pytest.fixture(scope="module")
def galera(tmp_path_factory):
    yield from _started(galera_component, galera_component.Galera,
                        tmp_path_factory)


# -- etcd ---------------------------------------------------------------------
def test_tooz_lock_survives_the_leaders_kill(etcd):
    """A tooz lock through etcd3gw on a follower; the leader's kill -9
    elects another, and locks go on through the same follower."""
    from tooz import coordination
    leader = etcd.leader()
    follower = next(name for name in etcd.names if name != leader)
    coordinator = coordination.get_coordinator(etcd.tooz_url(follower),
                                               b"ha-test")
    coordinator.start()
    try:
        held = coordinator.get_lock(b"ha-lock")
        assert held.acquire(blocking=False)
        other = coordination.get_coordinator(etcd.tooz_url(follower),
                                             b"ha-other")
        other.start()
        assert not other.get_lock(b"ha-lock").acquire(blocking=False)
        killed = time.monotonic()
        etcd.kill(leader)
        etcd.wait(lambda: etcd.leader() not in (None, leader),
                  "a new etcd leader", timeout=FAILOVER_LIMIT)
        report("etcd leader moved", seconds=round(
            time.monotonic() - killed, 2), old=leader, new=etcd.leader())
        assert not other.get_lock(b"ha-lock").acquire(blocking=False)
        held.release()
        assert other.get_lock(b"ha-lock").acquire(blocking=False)
        other.stop()
    finally:
        coordinator.stop()
        etcd.start(leader)
    etcd.wait(etcd.cluster_ready, "etcd with three members")


# -- RabbitMQ -----------------------------------------------------------------
RPC_OPTIONS = {
    # Quorum queues for the topic queues; replies and fanouts too, so a
    # reply on its way survives the node its queue led on.
    "rabbit_quorum_queue": "true",
    "rabbit_transient_quorum_queue": "true",
}


def _rpc_config(rabbit, tmp_path) -> str:
    path = tmp_path / "rpc.conf"
    lines = ["[DEFAULT]", "transport_url = %s" % rabbit.transport_url(),
             "[oslo_messaging_rabbit]"]
    lines += ["%s = %s" % item for item in RPC_OPTIONS.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _busiest(rabbit, process: str) -> str:
    """The member most of ``process``'s connections are on (waiting for
    the cluster to list them: a busy node may list none at first)."""
    def members_of_process() -> list[str]:
        return [member for name, member in rabbit.connections(
            rabbit.names[0]).items() if name.startswith(process)]
    on = rabbit.wait(members_of_process, "connections of %s" % process)
    return max(set(on), key=on.count)


def test_rpc_survives_the_kill_of_its_node(rabbit, tmp_path):
    """Casts and calls before, during and after the kill -9 of the node
    the client is connected to: none lost, none twice."""
    with open(tmp_path / "rpc_traffic.err", "w") as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "deploy.testbed.components.rpc_traffic",
             _rpc_config(rabbit, tmp_path), str(RPC_SECONDS)],
            cwd=harness.REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=err, text=True)
    try:
        assert child.stdout.readline().strip() == "ready", (
            tmp_path / "rpc_traffic.err").read_text()[-3000:]
        victim = _busiest(rabbit, "rpc_traffic.py:%d:" % child.pid)
        rabbit.kill(victim)
        child.stdin.write("killed %s\n" % victim)
        child.stdin.flush()
        result = json.loads(child.stdout.readline())
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
        child.stdin.close()
        child.stdout.close()
    sent = result["sent"]
    for kind in ("casts", "calls"):
        got = result[kind]
        assert sorted(int(n) for n in got) == list(range(sent)), kind
        assert {n: count for n, count in got.items() if count > 1} == {}
    assert result["errors"] == {}
    report("RabbitMQ failover", killed=victim, rounds=sent,
           longest_send=result["longest"])
    assert result["longest"]["seconds"] < FAILOVER_LIMIT
    started = time.monotonic()
    rabbit.start(victim)
    rabbit.wait(rabbit.cluster_ready, "%s to rejoin" % victim)
    report("RabbitMQ node back", seconds=round(time.monotonic() - started, 1))


# -- Galera behind haproxy ------------------------------------------------------
def _insert(engine, n: int) -> bool:
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("INSERT INTO writes VALUES (%d)" % n)
    except sa.exc.DBAPIError:
        return False
    return True


def test_writes_resume_on_the_next_writer(galera):
    """kill -9 of the writer: haproxy sends new connections to the first
    backup and writes resume; every acknowledged write is there."""
    engine = sa.create_engine(galera.url(), isolation_level="AUTOCOMMIT",
                              pool_pre_ping=True)
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE TABLE writes (n INT PRIMARY KEY)")
    writer = galera.writer()
    assert writer == galera.names[0]
    done = [n for n in range(WRITES_AFTER) if _insert(engine, n)]
    assert done == list(range(WRITES_AFTER))
    killed = time.monotonic()
    galera.kill(writer)
    n, failed, resumed = WRITES_AFTER, [], None
    deadline = killed + WRITE_LIMIT
    while len(done) < 2 * WRITES_AFTER and time.monotonic() < deadline:
        if _insert(engine, n):
            done.append(n)
            resumed = resumed or time.monotonic()
        else:
            failed.append(n)
            time.sleep(WRITE_RETRY)
        n += 1
    assert resumed is not None, "no write went through after the kill"
    with engine.connect() as conn:
        stored = set(conn.exec_driver_sql("SELECT n FROM writes").scalars())
    engine.dispose()
    report("Galera failover", killed=writer, new_writer=galera.writer(),
           gap_seconds=round(resumed - killed, 2), failed_writes=len(failed),
           backends=galera.backends())
    assert set(done) <= stored
    assert galera.writer() == galera.names[1]
    assert resumed - killed < FAILOVER_LIMIT
