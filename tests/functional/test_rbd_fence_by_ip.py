"""Fencing by a host's address on a real Ceph: a hypervisor that opens
an image itself in librbd and registers no client instances is found by
its connector's ``ip`` (every watcher of the image at that address).

Addresses on loopback are every host's, so the hypervisor runs in a
network namespace of its own (components/netns.py), and this module's
Ceph listens on the host side of the namespace's veth.
"""

import json
import subprocess
import sys
import uuid

import pytest

from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from deploy.testbed.components import netns
from tests.functional.test_rbd import MA_TYPE
from tests.functional.test_rbd import _agent
from tests.functional.test_rbd import _backend_section
from tests.functional.test_rbd import _ok
from tests.functional.test_rbd import _volume


@pytest.fixture(scope="module")
def host():
    netns.available()
    with netns.Host() as made:
        yield made


@pytest.fixture(scope="module")
def ceph(tmp_path_factory, host):
    ceph_component.available()
    with ceph_component.Ceph(tmp_path_factory.mktemp("ceph-ns"),
                             address=host.gateway) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, ceph, host):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("rbd-ns"), vhost,
                             db_url)
    dep.db_sync()
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "cephnode", backends="ceph",
                  extra=_backend_section(ceph))
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the RBD pool's report")
        assert client.post("/types", MA_TYPE).status_code == 200
        yield dep, client, host
    finally:
        dep.stop_all()
        drop()


#: A hypervisor that opens the image itself in librbd and registers no
#: client instances; one write per line of stdin, each answered.
HYPERVISOR = r"""
import sys, rados, rbd
conf, keyring, user, pool, name = sys.argv[1:6]
cluster = rados.Rados(conffile=conf, rados_id=user,
                      conf={"keyring": keyring})
cluster.connect(timeout=15)
image = rbd.Image(cluster.open_ioctx(pool), name)
print(cluster.get_addrs(), flush=True)
for line in sys.stdin:
    try:
        image.write(line.strip().encode(), 0)
        image.flush()
        print("written", flush=True)
    except Exception as exc:
        print(type(exc).__name__, flush=True)
"""


def test_a_hypervisor_that_registers_nothing_is_fenced_by_its_ip(deployment,
                                                                 ceph):
    """A host found by its connector's ``ip``: every watcher of the image
    at that address is blocklisted, its next write fails, and nothing of it
    lands."""
    dep, client, host = deployment
    vid = _volume(client, "rbd-shared")
    connector = dict(harness.connector("hv-1"), ip=host.address)
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": vid, "instance_uuid": str(uuid.uuid4()),
        "connector": connector}})
    assert resp.status_code == 200, resp.text
    att = resp.json()["attachment"]["id"]
    assert client.post("/attachments/%s/action" % att,
                       {"os-complete": None}).status_code == 204
    hv = subprocess.Popen(
        host.command(sys.executable, "-c", HYPERVISOR, str(ceph.conf),
                     str(ceph.keyring(ceph.compute_client)),
                     ceph.compute_client, ceph.pool, "volume-%s" % vid),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        addr = hv.stdout.readline().strip()
        assert addr.startswith(host.address + ":"), addr
        hv.stdin.write("before\n")
        assert hv.stdout.readline().strip() == "written"
        answer = client.post("/attachments/%s/action" % att,
                             {"ashlar-fence": {}})
        assert answer.status_code == 200, answer.text
        assert addr in ceph.blocklist()
        hv.stdin.write("after\n")
        assert hv.stdout.readline().strip() == "ConnectionShutdown"
    finally:
        hv.kill()
        hv.communicate(timeout=30)
    assert client.delete("/attachments/%s" % att).status_code == 200
    reader = _agent(dep, ceph, "compute-b")
    seen = json.loads(_ok(reader("attach", vid, "--mode", "ro")))
    assert _ok(reader("read", seen["id"], "--length", "6")) == b"before"
    _ok(reader("detach", seen["id"]))
    client.wait_status(vid, "available")
