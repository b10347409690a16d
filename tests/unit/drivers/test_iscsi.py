"""The iscsi driver's tgtadm commands, exports and fences, on a fake tgtd
(tests/unit/drivers/fake_tgt.py); tests/functional/test_iscsi.py runs it
on the real one."""

import contextlib
import os
import stat
import uuid

import pytest
from oslo_config import cfg

from common import exception
from common import libiscsi
from drivers import base
from drivers import iscsi
from drivers import iscsi_stores
from drivers import tgtadm
from tests.unit.drivers import fake_tgt

BACKEND = "iscsi1"
HOST = "node1@iscsi1"
FENCER = "iqn.2010-10.org.openstack:fencer.node1-iscsi1"
HOST_A = {"host": "compute-a", "initiator": "iqn.1993-08.org.debian:01:a"}
HOST_B = {"host": "compute-b", "initiator": "iqn.1993-08.org.debian:01:b"}

#: ``tgtadm --mode target --op show`` of tgt 1.0.85 (abridged LUN 0).
REAL_SHOW = """Target 1: iqn.2010-10.org.openstack:volume-x
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
    LUN information:
        LUN: 0
            Type: controller
            Backing store path: None
            Backing store flags: 
        LUN: 1
            Type: disk
            SCSI ID: IET     00010001
            Size: 17 MB, Block size: 512
            Backing store type: rdwr
            Backing store path: /tmp/iscsi-exp/lun.img
            Backing store flags: 
    Account information:
        u1
    ACL information:
        iqn.1993-08.org.debian:01:aaa
        iqn.2010-10.org.openstack:fencer
Target 3: iqn.2010-10.org.openstack:volume-y
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
        I_T nexus: 2
            Initiator: iqn.1993-08.org.debian:01:bbb alias: none
            Connection: 0
                IP Address: 127.0.0.1
    LUN information:
        LUN: 0
            Type: controller
    Account information:
    ACL information:
"""  # noqa: W291
REAL_CONNS = """Session: 2
    Connection: 0
        Initiator: iqn.1993-08.org.debian:01:bbb
        IP Address: 127.0.0.1
Session: 1
    Connection: 0
        Initiator: iqn.1993-08.org.debian:01:aaa
        IP Address: 127.0.0.1
"""


def make_driver(tmp_path, tgt=None, sessions=None, **overrides):
    conf = cfg.ConfigOpts()
    iscsi.IscsiDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    overrides = {"file_volume_dir": str(tmp_path / "volumes"),
                 "iscsi_target_dir": str(tmp_path / "targets"), **overrides}
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    driver = iscsi.IscsiDriver(conf[BACKEND], BACKEND, HOST,
                               runner=tgt or fake_tgt.FakeTgt(),
                               session=sessions or fake_tgt.FakeSessions())
    driver.do_setup()
    return driver


@pytest.fixture
def tgt():
    return fake_tgt.FakeTgt()


@pytest.fixture
def sessions():
    return fake_tgt.FakeSessions()


@pytest.fixture
def driver(tmp_path, tgt, sessions):
    return make_driver(tmp_path, tgt, sessions)


def create(driver):
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_volume(volume)
    return volume


def iqn(volume):
    return "iqn.2010-10.org.openstack:volume-%s" % volume.id


def test_parse_real_show_output():
    targets = tgtadm.parse_targets(REAL_SHOW)
    assert sorted(targets) == ["iqn.2010-10.org.openstack:volume-x",
                               "iqn.2010-10.org.openstack:volume-y"]
    first = targets["iqn.2010-10.org.openstack:volume-x"]
    assert (first.tid, first.luns, first.accounts, first.acl) == (
        1, {0, 1}, {"u1"}, {"iqn.1993-08.org.debian:01:aaa",
                            "iqn.2010-10.org.openstack:fencer"})
    second = targets["iqn.2010-10.org.openstack:volume-y"]
    assert (second.tid, second.luns, second.accounts, second.acl) == (
        3, {0}, set(), set())


def test_parse_real_connections():
    assert tgtadm.parse_connections(
        REAL_CONNS, "iqn.1993-08.org.debian:01:aaa") == [("1", "0")]
    assert tgtadm.parse_connections(REAL_CONNS, "iqn.x:none") == []


def test_create_builds_cinders_target(driver, tgt, tmp_path):
    tgt.commands.clear()
    volume = create(driver)
    export = driver._load(volume.id)
    path = str(tmp_path / "volumes" / ("volume-%s.raw" % volume.id))
    params = [["--mode", "target", "--op", "update", "--tid", "1",
               "--name", name, "--value", str(value)]
              for name, value in tgtadm.TARGET_PARAMS.items()]
    assert tgt.commands == [
        ["--mode", "target", "--op", "show"],
        ["--mode", "target", "--op", "new", "--tid", "1", "--targetname",
         iqn(volume)],
        *params,
        ["--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1",
         "--backing-store", path, "--bstype", "rdwr"],
        ["--mode", "account", "--op", "new", "--user", export.username,
         "--password", export.password],
        ["--mode", "account", "--op", "bind", "--tid", "1", "--user",
         export.username],
        ["--mode", "target", "--op", "bind", "--tid", "1",
         "--initiator-name", FENCER],
    ]
    assert (len(export.username), len(export.password)) == (20, 16)
    state = tmp_path / "targets" / ("volume-%s.json" % volume.id)
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600


def test_each_volume_has_its_target_and_account(driver, tgt):
    first, second = create(driver), create(driver)
    assert [t.iqn for t in tgt.targets.values()] == [iqn(first), iqn(second)]
    assert driver._load(first.id).username != driver._load(
        second.id).username


def test_a_tid_taken_meanwhile_is_skipped(driver, tgt):
    volume = create(driver)
    # another backend of this tgtd makes tid 2 between our show and new
    real_new = tgt._target_new

    def racing(opts):
        if opts["--tid"] == "2" and 2 not in tgt.targets:
            tgt.targets[2] = fake_tgt.FakeTarget("iqn.other:volume")
        return real_new(opts)
    tgt._target_new = racing
    other = create(driver)
    assert tgt.target(iqn(other)) is tgt.targets[3]
    assert tgt.target(iqn(volume)) is tgt.targets[1]


def test_initialize_connection(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt, target_ip_address="fd00::1",
                         target_secondary_ip_addresses=["10.0.0.2"],
                         target_port=3261)
    volume = create(driver)
    info = driver.initialize_connection(volume, HOST_A)
    export = driver._load(volume.id)
    assert info == {"driver_volume_type": "iscsi", "data": {
        "target_discovered": False,
        "target_iqn": iqn(volume),
        "target_iqns": [iqn(volume)] * 2,
        "target_portal": "[fd00::1]:3261",
        "target_portals": ["[fd00::1]:3261", "10.0.0.2:3261"],
        "target_lun": 1, "target_luns": [1, 1],
        "volume_id": volume.id, "auth_method": "CHAP",
        "auth_username": export.username,
        "auth_password": export.password,
        "discard": False, "access_mode": "rw"}}
    assert tgt.target(iqn(volume)).acl == [FENCER, HOST_A["initiator"]]
    assert export.hosts == {"compute-a": HOST_A["initiator"]}


def test_a_moving_volume_is_read_as_the_fence_initiator(driver, tgt):
    """The generic copy's source: the target, read only, logged in to as
    the node's fence initiator (always bound), no host bound for it."""
    volume = create(driver)
    source = driver.copy_source(volume)
    connection = source["connection"]
    export = driver._load(volume.id)
    assert (connection["driver_volume_type"], connection["target_iqn"],
            connection["initiator"], connection["access_mode"],
            connection["auth_password"]) == (
        "iscsi", iqn(volume), FENCER, "ro", export.password)
    assert source["protocol"] == "iSCSI" and source["path"]
    assert tgt.target(iqn(volume)).acl == [FENCER]
    assert export.hosts == {}


def test_initialize_connection_needs_an_initiator(driver):
    volume = create(driver)
    with pytest.raises(exception.InvalidInput):
        driver.initialize_connection(volume, {"host": "compute-a"})
    with pytest.raises(exception.VolumeNotFound):
        driver.initialize_connection(
            base.DriverVolume(id=str(uuid.uuid4()), size=1), HOST_A)


def test_terminate_connection_unbinds_the_host(driver, tgt):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    driver.initialize_connection(volume, HOST_B)
    tgt.commands.clear()
    driver.terminate_connection(volume, HOST_A)
    assert ["--mode", "target", "--op", "unbind", "--tid", "1",
            "--initiator-name", HOST_A["initiator"]] in tgt.commands
    assert tgt.target(iqn(volume)).acl == [FENCER, HOST_B["initiator"]]
    driver.terminate_connection(volume, HOST_A)  # idempotent
    driver.terminate_connection(
        base.DriverVolume(id=str(uuid.uuid4()), size=1), HOST_A)


def test_an_initiator_two_hosts_share_stays_bound(driver, tgt):
    volume = create(driver)
    twin = dict(HOST_B, initiator=HOST_A["initiator"])
    driver.initialize_connection(volume, HOST_A)
    driver.initialize_connection(volume, twin)
    driver.terminate_connection(volume, HOST_A)
    assert HOST_A["initiator"] in tgt.target(iqn(volume)).acl


def test_force_detach_unbinds_and_disconnects_everyone(driver, tgt):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    driver.initialize_connection(volume, HOST_B)
    tgt.connect(iqn(volume), HOST_A["initiator"])
    tgt.connect(iqn(volume), HOST_B["initiator"])
    driver.terminate_connection(volume, None)
    target = tgt.target(iqn(volume))
    assert (target.acl, target.conns) == ([FENCER], [])


def test_extend_re_adds_the_lun(driver, tgt, tmp_path):
    volume = create(driver)
    tgt.commands.clear()
    driver.extend_volume(volume, 3)
    path = str(tmp_path / "volumes" / ("volume-%s.raw" % volume.id))
    assert os.path.getsize(path) == 3 << 30
    assert tgt.commands[-2:] == [
        ["--mode", "logicalunit", "--op", "delete", "--tid", "1", "--lun",
         "1"],
        ["--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1",
         "--backing-store", path, "--bstype", "rdwr"]]


def test_delete_removes_target_account_and_export(driver, tgt, tmp_path):
    volume = create(driver)
    username = driver._load(volume.id).username
    driver.initialize_connection(volume, HOST_A)
    tgt.connect(iqn(volume), HOST_A["initiator"])
    driver.delete_volume(volume)
    assert (tgt.targets, tgt.accounts) == ({}, {})
    assert ["--mode", "account", "--op", "delete", "--user",
            username] in tgt.commands
    assert os.listdir(tmp_path / "targets") == []
    driver.delete_volume(volume)  # idempotent


def test_failed_target_leaves_no_volume(driver, tgt, tmp_path):
    tgt.fail[("logicalunit", "new")] = "invalid request"
    with pytest.raises(exception.VolumeBackendAPIException):
        create(driver)
    assert (tgt.targets, os.listdir(tmp_path / "volumes"),
            os.listdir(tmp_path / "targets")) == ({}, [], [])


def test_snapshot_and_clone_get_targets_of_their_own(driver, tgt):
    volume = create(driver)
    snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                   size=1)
    driver.create_snapshot(snapshot)
    copy = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_volume_from_snapshot(copy, snapshot)
    clone = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_cloned_volume(clone, volume)
    assert sorted(t.iqn for t in tgt.targets.values()) == sorted(
        iqn(v) for v in (volume, copy, clone))
    tgt.commands.clear()
    driver.revert_to_snapshot(volume, snapshot)
    assert tgt.commands[-1][:4] == ["--mode", "logicalunit", "--op", "new"]


# -- fencing ---------------------------------------------------------------
def test_fence_preempts_then_cuts_the_host_off(driver, tgt, sessions):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    driver.initialize_connection(volume, HOST_B)
    tgt.connect(iqn(volume), HOST_A["initiator"])
    tgt.connect(iqn(volume), HOST_B["initiator"])
    export = driver._load(volume.id)
    cut = driver.fence(volume, base.FenceTarget(host="compute-a"))
    assert cut == [HOST_A["initiator"]]
    assert sessions.logins == [("127.0.0.1:3260", iqn(volume), 1, FENCER,
                                (export.username, export.password))]
    own = libiscsi.registration_key(HOST)
    assert sessions.commands == [
        ("register", own),
        ("preempt", own, libiscsi.registration_key("compute-a")),
        ("close",)]
    target = tgt.target(iqn(volume))
    assert target.acl == [FENCER, HOST_B["initiator"]]
    assert [c[2] for c in target.conns] == [HOST_B["initiator"]]
    assert driver._load(volume.id).fenced == [HOST_A["initiator"]]
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="fenced"):
        driver.initialize_connection(volume, HOST_A)


def test_unfence_binds_the_host_again(driver, tgt):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    cut = driver.fence(volume, base.FenceTarget(host="compute-a"))
    driver.unfence(volume, cut)
    assert tgt.target(iqn(volume)).acl == [FENCER, HOST_A["initiator"]]
    assert driver._load(volume.id).fenced == []


def test_unfence_of_a_detached_host_does_not_bind_it(driver, tgt):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    cut = driver.fence(volume, base.FenceTarget(host="compute-a"))
    driver.terminate_connection(volume, HOST_A)
    driver.unfence(volume, cut)
    assert tgt.target(iqn(volume)).acl == [FENCER]


@pytest.mark.parametrize("error, at_login", [
    (libiscsi.ReservationConflict("PR OUT", 0x18, 0, 0, "conflict"), False),
    (libiscsi.Error("login refused"), True),
    (OSError("libiscsi.so.7: cannot open"), True),
])
def test_fence_without_preempt_still_cuts_off(tmp_path, tgt, error,
                                              at_login):
    driver = make_driver(tmp_path, tgt, fake_tgt.FakeSessions(error,
                                                              at_login))
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    tgt.connect(iqn(volume), HOST_A["initiator"])
    assert driver.fence(volume, base.FenceTarget(host="compute-a")) == [
        HOST_A["initiator"]]
    assert tgt.target(iqn(volume)).conns == []


def test_fence_of_an_unknown_host(driver):
    volume = create(driver)
    with pytest.raises(exception.FencingFailed, match="no iSCSI initiator"):
        driver.fence(volume, base.FenceTarget(host="compute-x"))
    assert driver.fence(volume, base.FenceTarget(
        host="compute-x", connected=False)) == []


def test_fence_takes_registered_initiators_only(driver):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    driver.initialize_connection(volume, HOST_B)
    assert driver.fence(volume, base.FenceTarget(
        host="compute-c", clients=(HOST_B["initiator"], "iqn.x:other"))
    ) == [HOST_B["initiator"]]


def test_fence_fails_when_tgtadm_does(driver, tgt):
    volume = create(driver)
    driver.initialize_connection(volume, HOST_A)
    tgt.fail[("target", "unbind")] = "invalid request"
    with pytest.raises(exception.FencingFailed):
        driver.fence(volume, base.FenceTarget(host="compute-a"))


# -- restarts ----------------------------------------------------------------
def test_restart_of_tgtd_and_driver_recreates_the_targets(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    first, second = create(driver), create(driver)
    driver.initialize_connection(second, HOST_A)
    driver.initialize_connection(second, HOST_B)
    driver.fence(second, base.FenceTarget(host="compute-b"))
    before = {t.iqn: (t.luns, t.accounts) for t in tgt.targets.values()}
    restarted = fake_tgt.FakeTgt()
    make_driver(tmp_path, restarted)
    assert {t.iqn: (t.luns, t.accounts)
            for t in restarted.targets.values()} == before
    assert set(restarted.target(iqn(second)).acl) == {FENCER,
                                                      HOST_A["initiator"]}
    assert restarted.target(iqn(first)).acl == [FENCER]
    assert restarted.accounts == tgt.accounts


def test_tids_are_looked_up_after_tgtd_renumbered_them(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    first, second = create(driver), create(driver)
    # tgtd restarted and another driver made second's target first
    tgt.targets = {1: tgt.targets[2], 2: tgt.targets[1]}
    driver.initialize_connection(first, HOST_A)
    assert tgt.targets[2].acl == [FENCER, HOST_A["initiator"]]
    assert tgt.targets[1].acl == [FENCER]
    assert tgt.targets[1].iqn == iqn(second)


def test_a_lost_target_is_made_again_on_use(driver, tgt):
    volume = create(driver)
    tgt.targets.clear()
    driver.initialize_connection(volume, HOST_A)
    assert set(tgt.target(iqn(volume)).acl) == {FENCER, HOST_A["initiator"]}


def test_an_export_without_its_volume_is_removed(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    volume = create(driver)
    os.unlink(driver.store._find(volume.id)[0])
    make_driver(tmp_path, tgt)
    assert (tgt.targets, os.listdir(tmp_path / "targets")) == ({}, [])


def test_one_failed_export_does_not_stop_the_others(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    first, second = create(driver), create(driver)
    (tmp_path / "targets" / ".export-left").write_text("{}")
    restarted = fake_tgt.FakeTgt()
    restarted.fail[("logicalunit", "new")] = "invalid request"
    make_driver(tmp_path, restarted)
    assert sorted(t.iqn for t in restarted.targets.values()) == sorted(
        [iqn(first), iqn(second)])
    assert sorted(os.listdir(tmp_path / "targets")) == sorted(
        "volume-%s.json" % v.id for v in (first, second))


def test_tgtd_down(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    tgt.up = False
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert pool["backend_state"] == "down"
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="control port 0"):
        make_driver(tmp_path, tgt)


def test_stats(driver):
    stats = driver.get_volume_stats(refresh=True)
    pool = stats["pools"][0]
    assert (stats["storage_protocol"], pool["fencing"], pool["multiattach"],
            pool["backend_state"]) == ("iSCSI", True, True, "up")


def test_registration_key():
    assert libiscsi.registration_key("compute-a") == int.from_bytes(
        __import__("hashlib").sha256(b"ashlar-pr:compute-a").digest()[:8],
        "big")
    assert libiscsi.registration_key("compute-a") != (
        libiscsi.registration_key("compute-b"))


def test_an_rbd_lun_is_added_with_its_options():
    """tgt-rbd's LUN: the image as ``pool/image``, bstype rbd, and the
    cluster's conf and cephx user in bsopts."""
    ran = []
    adm = tgtadm.TgtAdm(3260, lambda argv: (ran.append(argv), (0, "", ""))[1])
    adm.add_lun(4, tgtadm.Backing("volumes/volume-x", "rbd",
                                  "conf=/etc/ceph/ceph.conf;id=cinder"))
    assert ran == [["tgtadm", "-C", "3260", "--lld", "iscsi", "--mode",
                    "logicalunit", "--op", "new", "--tid", "4", "--lun", "1",
                    "--backing-store", "volumes/volume-x", "--bstype", "rbd",
                    "--bsopts", "conf=/etc/ceph/ceph.conf;id=cinder"]]


def test_iscsi_backing_rbd_picks_the_rbd_store(tmp_path, monkeypatch):
    """With ``iscsi_backing = rbd`` the volumes are the RBD driver's
    images (not touched here: no cluster), each LUN an rbd one."""
    conf = cfg.ConfigOpts()
    iscsi.IscsiDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    for name, value in {"iscsi_backing": "rbd", "rbd_pool": "ipool",
                        "rbd_user": "iuser", "rbd_ceph_conf": "/etc/c.conf",
                        "iscsi_target_dir": str(tmp_path)}.items():
        conf.set_override(name, value, group=BACKEND)
    driver = iscsi.IscsiDriver(conf[BACKEND], BACKEND, HOST,
                               runner=fake_tgt.FakeTgt())
    assert isinstance(driver.store, iscsi_stores.RbdStore)
    opened = []
    monkeypatch.setattr(iscsi_stores.rbd_clones, "open_image",
                        lambda _rbd, _ioctx, name, read_only: (
                            opened.append((name, read_only)),
                            contextlib.nullcontext())[1])
    driver.store._rbd = driver.store._ioctx = None
    assert driver.store.lun("x") == tgtadm.Backing(
        "ipool/volume-x", "rbd", "conf=/etc/c.conf;id=iuser")
    assert opened == [("volume-x", True)]


def test_stats_are_the_stores_as_an_iscsi_pool(driver, tgt):
    stats = driver.get_volume_stats(refresh=True)
    assert (stats["storage_protocol"], stats["pools"][0]["fencing"],
            stats["pools"][0]["backend_state"]) == ("iSCSI", True, "up")
    assert driver.store.get_volume_stats()["pools"][0]["fencing"] is False
