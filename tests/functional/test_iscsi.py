"""The iscsi driver on a real tgtd, its volumes used as hosts use them.

The driver object is the real one (drivers/iscsi.py, real ``tgtadm``);
tgtd is the testbed's (deploy/testbed/components/tgt.py); the hosts are
``common/libiscsi.py`` sessions logging in as their initiators with the
CHAP account the connection_info gives, then the agent's data path
(services/agent/volume_io.py).  Last, a deployment (api, scheduler, a
volume node with the ``iscsi`` backend, PostgreSQL, RabbitMQ) with two
``ashlar-agent`` hosts: the snapshot story and a takeover.  The fence
latency is printed (``pytest -s``).  Skipped with the install command
when tgt or libiscsi is missing (failed under ``CI=true``).
"""

import threading
import uuid

import pytest
from oslo_config import cfg
from oslo_utils import units

from common import conf as ashlar_conf
from common import exception
from common import libiscsi
from deploy.testbed import failover_story
from drivers import base
from drivers import iscsi
from services.agent import iscsi_io
from services.agent import volume_io
from services.volume import attach as volume_attach
from tests.functional import iscsi_hosts
from tests.functional import storage_story

BACKEND = "iscsi1"
NODE = "node1@iscsi1"
HOST_A, HOST_B = iscsi_hosts.HOST_A, iscsi_hosts.HOST_B
attach, login = iscsi_hosts.attach, iscsi_hosts.login


def report(what, **figures):
    iscsi_hosts.report("iscsi", what, **figures)


def make_driver(tmp_path, tgt):
    """A driver as the volume service builds it (do_setup included)."""
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt("state_path", default=str(tmp_path)))
    iscsi.IscsiDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    for name, value in {"file_volume_dir": str(tmp_path / "volumes"),
                        "target_port": tgt.port,
                        "tgtadm_control_port": tgt.control_port}.items():
        conf.set_override(name, value, group=BACKEND)
    driver = iscsi.IscsiDriver(conf[BACKEND], BACKEND, NODE)
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


@pytest.fixture
def driver(tmp_path, tgt):
    made = make_driver(tmp_path, tgt)
    yield made
    for volume_id in made.volume_locations():
        made.delete_volume(base.DriverVolume(id=volume_id, size=1))


def new_volume(driver, size=1, multiattach=True):
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=size,
                               multiattach=multiattach)
    driver.create_volume(volume)
    return volume


def test_attach_binds_the_host_with_chap(driver, tgt):
    volume = new_volume(driver)
    info = driver.initialize_connection(volume, HOST_A)
    data = info["data"]
    assert info["driver_volume_type"] == "iscsi"
    assert data["target_iqn"] == ("iqn.2010-10.org.openstack:volume-%s"
                                  % volume.id)
    assert data["target_portal"] == tgt.portal
    assert data["target_portals"] == [tgt.portal]
    assert (data["target_lun"], data["auth_method"], data["volume_id"],
            data["access_mode"]) == (1, "CHAP", volume.id, "rw")
    with pytest.raises(libiscsi.Error, match="Authentication"):
        login(info, HOST_A, chap=False)
    with pytest.raises(libiscsi.Error, match="refused"):
        login(info, HOST_B)
    with login(info, HOST_A) as host_a:
        assert host_a.blocks * host_a.block_size == units.Gi
        host_a.write(units.Mi, b"a" * 4096)
        assert host_a.read(units.Mi, 4096) == b"a" * 4096
    driver.terminate_connection(volume, HOST_A)
    with pytest.raises(libiscsi.Error, match="refused"):
        login(info, HOST_A)


def test_extend_is_seen_by_a_logged_in_host(driver):
    volume = new_volume(driver)
    _info, host_a = attach(driver, volume, HOST_A)
    with host_a:
        host_a.write(0, b"x" * 512)
        driver.extend_volume(volume, 2)
        assert host_a.capacity() == (2 * units.Gi // 512, 512)
        assert host_a.read(0, 512) == b"x" * 512
        host_a.write(2 * units.Gi - 512, b"e" * 512)


def test_fence_a_writing_host_of_a_multiattach_volume(driver):
    """A and B write; A is fenced while it writes: its next write fails
    and it cannot log in again; B writes on; unfenced, A logs in again."""
    volume = new_volume(driver)
    info_a, host_a = attach(driver, volume, HOST_A)
    _info_b, host_b = attach(driver, volume, HOST_B)
    host_a.reserve(libiscsi.registration_key(HOST_A["host"]))
    failed: list[Exception] = []
    writes = {"before": 0, "after": 0}
    writing, fenced = threading.Event(), threading.Event()

    def write_until_refused():
        while True:
            try:
                host_a.write(0, b"A" * 4096)
            except libiscsi.Error as exc:
                failed.append(exc)
                writing.set()
                return
            writes["after" if fenced.is_set() else "before"] += 1
            if writes["before"] == 10:
                writing.set()
    writer = threading.Thread(target=write_until_refused)
    writer.start()
    assert writing.wait(10) and not failed
    cut = driver.fence(volume, base.FenceTarget(host=HOST_A["host"]))
    fenced.set()
    writer.join(10)
    assert not writer.is_alive()
    assert cut == [HOST_A["initiator"]]
    # NOTE: one write may have been in flight when fence() returned
    assert writes["after"] <= 1, writes
    assert isinstance(failed[0], libiscsi.Error)
    with pytest.raises(libiscsi.Error, match="refused"):
        login(info_a, HOST_A)
    host_b.write(4096, b"B" * 4096)
    assert host_b.read(4096, 4096) == b"B" * 4096
    host_a.close()
    driver.unfence(volume, cut)
    with login(info_a, HOST_A) as again:
        again.register(libiscsi.registration_key(HOST_A["host"]))
        again.write(0, b"a" * 512)
    host_b.close()
    report("fence while writing", error=type(failed[0]).__name__,
           writes_before=writes["before"], writes_after=writes["after"])


def test_each_fence_refuses_the_old_writer(driver):
    assert iscsi_hosts.fence_latency(driver, new_volume(driver), "iscsi") \
        == iscsi_hosts.FENCE_RUNS


def test_snapshot_clone_revert_delete(driver, tgt):
    volume = new_volume(driver)
    info, host_a = attach(driver, volume, HOST_A)
    with host_a:
        host_a.write(0, b"s" * 512)
        snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                       size=1)
        driver.create_snapshot(snapshot)
        host_a.write(0, b"t" * 512)
    from_snap = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    driver.create_volume_from_snapshot(from_snap, snapshot)
    clone = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_cloned_volume(clone, volume)
    for made, expected in ((from_snap, b"s"), (clone, b"t")):
        _made_info, host = attach(driver, made, HOST_A)
        with host:
            assert host.read(0, 512) == expected * 512
    driver.terminate_connection(volume, HOST_A)
    driver.revert_to_snapshot(volume, snapshot)
    _info, host_a = attach(driver, volume, HOST_A)
    with host_a:
        assert host_a.read(0, 512) == b"s" * 512
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert info["data"]["target_iqn"] not in tgt.admin(
        "--mode", "target", "--op", "show")
    assert info["data"]["auth_username"] not in tgt.admin(
        "--mode", "account", "--op", "show")
    with pytest.raises(libiscsi.Error):
        login(info, HOST_A)


def test_tgtd_and_driver_restart_recreate_the_targets(tmp_path, tgt):
    driver = make_driver(tmp_path, tgt)
    volume = new_volume(driver)
    info, host_a = attach(driver, volume, HOST_A)
    with host_a:
        host_a.write(0, b"r" * 512)
    driver.fence(volume, base.FenceTarget(host=HOST_A["host"]))
    driver.unfence(volume, [HOST_A["initiator"]])
    driver.initialize_connection(volume, HOST_B)
    driver.fence(volume, base.FenceTarget(host=HOST_B["host"]))
    tgt.kill(tgt.names[0])
    tgt.start(tgt.names[0])
    assert info["data"]["target_iqn"] not in tgt.admin(
        "--mode", "target", "--op", "show")
    again = make_driver(tmp_path, tgt)
    with login(info, HOST_A) as host_a:
        assert host_a.read(0, 512) == b"r" * 512
    with pytest.raises(libiscsi.Error, match="refused"):
        login(info, HOST_B)
    # the first driver object (still running) finds its target again too
    driver.terminate_connection(volume, HOST_A)
    with pytest.raises(libiscsi.Error, match="refused"):
        login(info, HOST_A)
    again.delete_volume(volume)


def test_connector_without_initiator_is_refused(driver):
    volume = new_volume(driver)
    with pytest.raises(exception.InvalidInput):
        driver.initialize_connection(volume, {"host": "compute-c"})


def test_stats(driver):
    stats = driver.get_volume_stats(refresh=True)
    pool = stats["pools"][0]
    assert stats["storage_protocol"] == "iSCSI"
    assert (pool["fencing"], pool["multiattach"], pool["backend_state"]) == (
        True, True, "up")


def agent_conf(host):
    """A compute host's configuration: its name and its IQN."""
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("host", host)
    conf.set_override("iscsi_initiator", iscsi_hosts.IQN + host,
                      group="agent")
    return conf


class _Row:
    """What connection_info() reads of an attachment and its volume."""

    id = "att-1"
    readonly = encrypted = False
    front_end_qos = None
    size = 1


def attachment(driver, volume, conf, mode="rw"):
    """The attachment view a host's agent gets: the driver's answer to
    its connector, flattened by the volume service."""
    connector = {"host": conf.host,
                 "initiator": iscsi_io.initiator_name(conf)}
    info = driver.initialize_connection(volume, connector)
    return {"id": "att-%s" % conf.host, "connection_info":
            volume_attach.connection_info(info, _Row(), _Row(), connector,
                                          mode)}


def test_agent_data_path(driver):
    """The agent's volume_io on an iscsi attachment: a writer registers
    its host's key and reserves; a reader cannot write; a fence stops the
    writer's open handle and its next login."""
    volume = new_volume(driver)
    conf_a, conf_b = agent_conf("compute-a"), agent_conf("compute-b")
    as_a = attachment(driver, volume, conf_a)
    as_b = attachment(driver, volume, conf_b, mode="ro")
    key_a = libiscsi.registration_key("compute-a")
    with volume_io.open_volume(conf_a, as_a) as writer, \
            volume_io.open_volume(conf_b, as_b) as reader:
        assert writer.clients == []
        assert writer.write(1000, b"bytes of A") == 10
        assert reader.read(1000, 10) == b"bytes of A"
        with pytest.raises(volume_io.ReadOnlyAttachment):
            reader.write(0, b"no")
        with login(driver.initialize_connection(volume, HOST_B),
                   HOST_B) as probe:
            assert key_a in probe.read_keys()
            assert probe.read_reservation() == (
                key_a, libiscsi.WRITE_EXCLUSIVE_REGISTRANTS_ONLY)
        driver.fence(volume, base.FenceTarget(host="compute-a"))
        with pytest.raises(libiscsi.Error):
            writer.write(0, b"after the fence")
        assert reader.read(0, 15) == bytes(15)
    with pytest.raises(libiscsi.Error, match="refused"):
        with volume_io.open_volume(conf_a, as_a):
            pass


# -- a deployment ----------------------------------------------------------
@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, tgt):
    with iscsi_hosts.deployment(
            tmp_path_factory.mktemp("iscsi"), vhost,
            "target_port = %d\ntgtadm_control_port = %d\n"
            % (tgt.port, tgt.control_port),
            ("iscsi-shared", "iscsi-failover")) as deployed:
        yield deployed


def test_the_pool_reports_iscsi_and_fencing(deployment):
    _dep, client = deployment
    pool = next(iter(client.pools().values()))
    assert (pool["storage_protocol"], pool["fencing"],
            pool["multiattach"]) == ("iSCSI", True, True)


def test_snapshot_story_on_iscsi(deployment):
    dep, client = deployment
    storage_story.tell(client, storage_story.agent(dep, "compute-a"),
                       "iscsi-shared")


def test_takeover_fences_the_old_writer(deployment):
    dep, client = deployment
    with iscsi_hosts.taken_over(dep, client, "iscsi-failover",
                                "iscsi") as (vid, config, active, passive):
        code, _out, err = storage_story.agent(dep, "compute-a")("attach",
                                                                vid)
        assert code != 0 and "fenced" in err, err[-1000:]
        failover_story.comes_back(active, passive, lambda: (
            failover_story.Held(config["compute-a"], vid, "ro")))
    client.wait_status(vid, "available")


def test_backup_and_restore_read_and_write_through_iscsi(deployment):
    """The backup service reads and writes the volume as a host does: its
    connector's initiator is let in, and out again."""
    dep, client = deployment
    storage_story.backup_and_restore(dep, client, "iscsi-shared",
                                     b"backed up through iSCSI" * 100)
