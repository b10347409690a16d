"""benchmarks/cinder_cluster.py: the config files it gives Cinder's
processes (the processes themselves: ``python -m
benchmarks.cinder_failover``, which needs the anchor)."""

import configparser

import pytest

from benchmarks import cinder_cluster

ANCHOR_RBD = """\
[DEFAULT]
auth_strategy = noauth
quota_volumes = -1
[rbd_ma]
volume_driver = cinder.volume.drivers.rbd.RBDDriver
volume_backend_name = anchor_ma
rbd_pool = volumes
rbd_user = cinder
rbd_ceph_conf = /tmp/ceph-anchor/ceph.conf
rbd_secret_uuid = 5a1f0c2e-6a42-4c5b-9d55-0a9c1e7d0a11
"""
CEPH_CONF = """\
[global]
mon host = [v2:127.0.0.1:3300,v1:127.0.0.1:6789]
keyring = /elsewhere/$cluster.$name.keyring
"""


def _read(path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return parser


@pytest.fixture
def cluster(tmp_path):
    (tmp_path / "anchor" / "rbd").mkdir(parents=True)
    (tmp_path / "anchor" / "rbd" / "cinder-rbd.conf").write_text(ANCHOR_RBD)
    (tmp_path / "ceph.conf").write_text(CEPH_CONF)
    work = tmp_path / "work"
    work.mkdir()
    made = cinder_cluster.CinderCluster(
        tmp_path / "anchor", tmp_path / "home", work,
        ceph_conf=tmp_path / "ceph.conf", ceph_keyring="/k/ring",
        ceph_user="ashlar", ceph_pool="pool1",
        coordination_url="etcd3+http://127.0.0.1:2379", members=3,
        service_down_time=15, report_interval=2,
        transport_url="rabbit://guest:guest@127.0.0.1:5672/v",
        db_url="mysql+pymysql://root@127.0.0.1/db")
    made.write_configs()
    return made


def test_shared_config(cluster):
    conf = _read(cluster.conf)
    default = conf["DEFAULT"]
    assert default["auth_strategy"] == "noauth"
    assert (default["service_down_time"], default["report_interval"]) == (
        "15", "2")
    assert default["quota_volumes"] == default["quota_gigabytes"] == "-1"
    assert default["enabled_backends"] == "rbd"
    assert default["osapi_volume_listen_port"] == str(cluster.port)
    assert conf["coordination"]["backend_url"] == \
        "etcd3+http://127.0.0.1:2379"
    assert conf["database"]["connection"] == \
        "mysql+pymysql://root@127.0.0.1/db"


def test_rbd_backend_from_the_anchor_on_the_given_ceph(cluster):
    rbd = _read(cluster.conf)["rbd"]
    assert rbd["volume_driver"] == "cinder.volume.drivers.rbd.RBDDriver"
    assert rbd["rbd_secret_uuid"] == "5a1f0c2e-6a42-4c5b-9d55-0a9c1e7d0a11"
    assert (rbd["rbd_pool"], rbd["rbd_user"]) == ("pool1", "ashlar")
    ceph = _read(rbd["rbd_ceph_conf"])
    assert ceph["client.ashlar"]["keyring"] == "/k/ring"
    assert ceph["global"]["mon host"] == \
        "[v2:127.0.0.1:3300,v1:127.0.0.1:6789]"


def test_each_member_its_host_in_one_cluster(cluster):
    members = [_read(cluster.dir / ("member%d.conf" % i))["DEFAULT"]
               for i in range(3)]
    assert [m["host"] for m in members] == ["member0", "member1", "member2"]
    assert {m["cluster"] for m in members} == {"c1"}
    assert "cluster" not in _read(cluster.conf)["DEFAULT"]
