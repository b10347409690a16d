"""Cinder's cluster commands through the unmodified clients: ``cinder
cluster-list/-show/-disable/-enable`` (3.7), ``cinder work-cleanup``
(3.24) and ``openstack block storage cluster list/show/set`` against two
members of one cluster.

The session's deployment has one volume service alone; this module starts
its own, with a cluster (``[DEFAULT] cluster = c1``, the fake driver, the
members' locks in a folder).
"""

import json
import signal
import sys

import pytest

from deploy.testbed import harness
from tests.compat.conftest import PROJECT
from tests.compat.conftest import USER
from tests.compat.conftest import _run
from tests.compat.conftest import properties
from tests.compat.conftest import tables

CLUSTER = "c1@fake"
V37 = ("--os-volume-api-version", "3.7")
V324 = ("--os-volume-api-version", "3.24")


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    vhost, remove_vhost = harness.broker_vhost()
    db_url, drop = harness.database("postgresql")
    tmp = tmp_path_factory.mktemp("compat-clusters")
    dep = harness.Deployment(tmp, vhost, db_url, service_down_time=3)
    dep.db_sync()
    member = ("[DEFAULT]\ncluster = c1\n[coordination]\nbackend_url = "
              "file://%s\n[fake]\nvolume_driver = fake\n" % (
                  tmp / "coordination"))
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("member1", "services.volume", "node1", backends="fake",
                  extra=member)
        dep.start("member2", "services.volume", "node2", backends="fake",
                  extra=member)
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: set(client.pools()) == {
            CLUSTER + "#fake"}, timeout=60, what="the cluster's pool")
        yield dep, "http://127.0.0.1:%d/v3" % dep.port
    finally:
        dep.stop_all()
        drop()
        remove_vhost()


@pytest.fixture(scope="module")
def cinder(clustered):
    def run(*args: str):
        return _run([sys.executable, "-m", "cinderclient.shell", *args], {
            "OS_AUTH_TYPE": "noauth", "OS_USER_ID": USER,
            "OS_PROJECT_ID": PROJECT, "CINDER_ENDPOINT": clustered[1]})
    return run


@pytest.fixture(scope="module")
def openstack(clustered):
    def run(*args: str, parse: bool = True):
        result = _run([sys.executable, "-m", "openstackclient.shell",
                       "--os-auth-type", "none", "--os-endpoint",
                       clustered[1], *args], {})
        if not parse:
            return result
        result.ok()
        return json.loads(result.stdout) if result.stdout.strip() else None
    return run


def test_cinder_lists_shows_disables_and_enables_the_cluster(cinder):
    [row] = tables(cinder(*V37, "cluster-list").ok().stdout)[0]
    assert row == {"Name": CLUSTER, "Binary": "cinder-volume",
                   "State": "up", "Status": "enabled"}
    [row] = tables(cinder(*V37, "cluster-list", "--detailed").ok().stdout)[0]
    assert (row["Num Hosts"], row["Num Down Hosts"]) == ("2", "0")
    shown = properties(cinder(*V37, "cluster-show", CLUSTER).ok().stdout)
    assert (shown["name"], shown["num_hosts"], shown["status"]) == (
        CLUSTER, "2", "enabled")
    shown = properties(cinder(*V37, "cluster-disable", "--reason", "drain",
                              CLUSTER).ok().stdout)
    assert (shown["status"], shown["disabled_reason"]) == ("disabled",
                                                           "drain")
    [row] = tables(cinder(*V37, "cluster-list", "--disabled",
                          "true").ok().stdout)[0]
    assert row["Status"] == "disabled"
    shown = properties(cinder(*V37, "cluster-enable", CLUSTER).ok().stdout)
    assert shown["status"] == "enabled"


def test_cinder_before_3_7_has_no_clusters(cinder):
    assert cinder("--os-volume-api-version", "3.6",
                  "cluster-list").returncode != 0


def test_openstack_lists_shows_and_sets_the_cluster(openstack):
    [row] = openstack(*V37, "block", "storage", "cluster", "list", "--long",
                      "-f", "json")
    assert (row["Name"], row["Num Hosts"], row["Num Down Hosts"]) == (
        CLUSTER, 2, 0)
    shown = openstack(*V37, "block", "storage", "cluster", "show", CLUSTER,
                      "-f", "json")
    assert (shown["Name"], shown["Status"]) == (CLUSTER, "enabled")
    # NOTE: python-openstackclient 10.5's "cluster set" is a Command that
    # returns its table: cliff prints it on stderr and exits 1, against
    # Cinder too.  What it sent is checked by the show after it.
    done = openstack(*V37, "block", "storage", "cluster", "set",
                     "--disable", "--disable-reason", "drain", CLUSTER,
                     parse=False)
    assert "'disabled', 'drain'" in done.stderr, done.stderr
    shown = openstack(*V37, "block", "storage", "cluster", "show", CLUSTER,
                      "-f", "json")
    assert (shown["Status"], shown["Disabled Reason"]) == ("disabled",
                                                           "drain")
    openstack(*V37, "block", "storage", "cluster", "set", "--enable",
              CLUSTER, parse=False)
    shown = openstack(*V37, "block", "storage", "cluster", "show", CLUSTER,
                      "-f", "json")
    assert shown["Status"] == "enabled"


def test_work_cleanup_of_a_dead_member(clustered, cinder):
    dep, _endpoint = clustered
    client = harness.Client(dep.endpoint, version="3.7")
    dep.stop("member1", signal.SIGKILL)
    harness.wait_for(lambda: client.get("/clusters/detail").json()[
        "clusters"][0]["num_down_hosts"] == 1, timeout=30,
        what="member1 seen down")
    out = cinder(*V324, "work-cleanup").ok().stdout
    assert "Following services will be cleaned:" in out
    [row] = tables(out)[0]
    assert (row["Host"], row["Cluster Name"], row["Binary"]) == (
        "node1@fake", CLUSTER, "cinder-volume")
    # NOTE: "openstack block storage cleanup" is not tried: openstacksdk
    # 4.22 sends it as a PUT (Cinder routes a POST only) and with
    # "binary": null (which Cinder's schema refuses).
    out = cinder(*V324, "work-cleanup", "--host", "node2").ok().stdout
    assert "No cleanable services matched cleanup criteria." in out
    harness.wait_for(lambda: "Cleanup of c1@fake requested" in dep.log(
        "member2"), timeout=30, what="member2 running the cleanup")
