"""The RBD backend on a real Ceph cluster (components/ceph.py).

The driver alone against the cluster, then a deployment (api, scheduler, a
volume node with the ``rbd`` backend, PostgreSQL, RabbitMQ) driven over
HTTP, and two ``ashlar-agent`` hosts that read and write the volumes in
librbd with their own keyring.
"""

import json
import uuid

import pytest

from common import exception
from common.conf import opts as conf_opts  # noqa: F401 - registers options
from deploy.testbed import failover_story
from deploy.testbed import harness
from deploy.testbed.failover_story import Held
from drivers import base
from drivers import rbd as rbd_driver
from tests.functional import storage_story

MA_TYPE = {"volume_type": {"name": "rbd-shared", "extra_specs": {
    "multiattach": "<is> True", "volume_backend_name": "ceph"}}}
PLAIN_TYPE = {"volume_type": {"name": "rbd-plain", "extra_specs": {
    "volume_backend_name": "ceph"}}}
LOCK_FEATURES = {"exclusive-lock", "object-map", "fast-diff", "journaling"}


def _backend_section(ceph) -> str:
    return ("[ceph]\nvolume_driver = rbd\nrbd_pool = %s\nrbd_user = %s\n"
            "rbd_ceph_conf = %s\nrbd_keyring = %s\n" % (
                ceph.pool, ceph.client, ceph.conf,
                ceph.keyring(ceph.client)))


def _features(ceph, volume_id: str) -> set[str]:
    info = json.loads(ceph.ceph_rbd("info", "--format", "json",
                                    "%s/volume-%s" % (ceph.pool, volume_id)))
    return set(info["features"])


def _image_exists(ceph, volume_id: str) -> bool:
    return ("volume-%s" % volume_id) in ceph.ceph_rbd("ls", ceph.pool).split()


# -- the driver alone -----------------------------------------------------
def _driver(ceph, pool: str, client: str) -> rbd_driver.RBDDriver:
    from oslo_config import cfg

    conf = cfg.ConfigOpts()
    rbd_driver.RBDDriver.register_opts(conf, "ceph")
    conf([], default_config_files=[])
    for key, value in (("rbd_pool", pool), ("rbd_user", client),
                       ("rbd_ceph_conf", str(ceph.conf)),
                       ("rbd_keyring", str(ceph.keyring(client)))):
        conf.set_override(key, value, group="ceph")
    drv = rbd_driver.RBDDriver(conf.ceph, "ceph", "node@ceph")
    drv.do_setup()
    drv.check_for_setup_error()
    return drv


@pytest.fixture
def driver(ceph):
    # NOTE(ashlar): closed after each test: an unclosed rados client keeps
    # its threads and sessions for the rest of the worker's life.
    made = _driver(ceph, ceph.pool, ceph.client)
    yield made
    made.close()


def test_a_closed_driver_lets_its_cluster_connection_go(ceph):
    made = _driver(ceph, ceph.pool, ceph.client)
    made.close()
    made.close()  # twice: nothing more to do
    assert made._client.state == "shutdown"
    with pytest.raises(exception.DriverNotInitialized):
        made.check_for_setup_error()


@pytest.fixture
def other_pool(ceph):
    """A second pool, ``moved``, and a driver on it whose user may read
    (only read) the first pool."""
    ceph.add_pool("moved")
    ceph.add_client("mover", pool="moved", reads=ceph.pool)
    made = _driver(ceph, "moved", "mover")
    yield made
    made.close()
    ceph.remove_pool("moved")


def test_driver_copies_a_moving_volume_from_another_pool(driver, other_pool,
                                                         ceph):
    """A volume moving between RBD backends of one cluster: the second
    pool's driver copies the first's image, data and all, as a flat
    image with the features of its sharing; it refuses what it cannot
    read and leaves an image already there alone."""
    volume = base.DriverVolume(str(uuid.uuid4()), 1, multiattach=True)
    driver.create_volume(volume)
    name = "volume-%s" % volume.id
    with driver._image(name) as image:
        image.write(b"moving data", 4096)
    source = driver.copy_source(volume)
    assert (source["protocol"], source["pool"], source["image"]) == (
        "ceph", ceph.pool, name)
    assert other_pool.create_volume_from_copy(volume, source) == {
        "provider_location": "moved/%s" % name}
    with other_pool._image(name) as image:
        assert image.read(4096, 11) == b"moving data"
    info = json.loads(ceph.ceph_rbd("info", "--format", "json",
                                    "moved/%s" % name))
    assert "parent" not in info and not LOCK_FEATURES & set(info["features"])
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="already exists"):
        other_pool.create_volume_from_copy(volume, source)
    for wrong in (dict(source, fsid="another cluster"),
                  dict(source, pool="moved"), dict(source, image="x")):
        with pytest.raises(exception.VolumeBackendAPIException):
            other_pool.create_volume_from_copy(volume, wrong)
    other_pool.delete_volume(volume)
    driver.delete_volume(volume)


def test_driver_makes_shared_images_without_the_lock_features(driver, ceph):
    shared = base.DriverVolume(str(uuid.uuid4()), 1, multiattach=True)
    plain = base.DriverVolume(str(uuid.uuid4()), 2)
    assert driver.create_volume(shared) == {
        "provider_location": "%s/volume-%s" % (ceph.pool, shared.id)}
    driver.create_volume(plain)
    assert _features(ceph, shared.id) == {"layering", "deep-flatten"}
    assert _features(ceph, plain.id) >= {"layering", "exclusive-lock",
                                         "object-map", "fast-diff"}
    with driver._image("volume-%s" % shared.id) as image:
        image.write(b"kept", 0)
    # a resumed create adopts the image, data and all
    assert driver.create_volume(shared) == {
        "provider_location": "%s/volume-%s" % (ceph.pool, shared.id)}
    with driver._image("volume-%s" % shared.id) as image:
        assert image.read(0, 4) == b"kept"
    assert driver.volume_locations()[shared.id] == "%s/volume-%s" % (
        ceph.pool, shared.id)
    # retype both ways on an available volume
    driver.retype(plain, True)
    assert not _features(ceph, plain.id) & LOCK_FEATURES
    driver.retype(shared, False)
    assert _features(ceph, shared.id) >= {"exclusive-lock", "object-map",
                                          "fast-diff"}
    for volume in (shared, plain):
        driver.delete_volume(volume)
        driver.delete_volume(volume)  # idempotent
        assert not _image_exists(ceph, volume.id)


def test_driver_extends_and_reports_the_pool(driver, ceph):
    volume = base.DriverVolume(str(uuid.uuid4()), 1, multiattach=True)
    driver.create_volume(volume)
    stats = driver.get_volume_stats(refresh=True)
    pool = stats["pools"][0]
    assert stats["storage_protocol"] == "ceph"
    assert pool["backend_state"] == "up" and pool["multiattach"] is True
    assert 0 < pool["free_capacity_gb"] <= pool["total_capacity_gb"] <= 10
    assert pool["provisioned_capacity_gb"] >= 1
    driver.extend_volume(volume, 3)
    info = json.loads(ceph.ceph_rbd("info", "--format", "json",
                                    "%s/volume-%s" % (ceph.pool, volume.id)))
    assert info["size"] == 3 << 30
    grown = driver.get_volume_stats(refresh=True)["pools"][0]
    assert grown["provisioned_capacity_gb"] == pool[
        "provisioned_capacity_gb"] + 2
    connection = driver.initialize_connection(volume, {"host": "h1"})
    data = connection["data"]
    assert connection["driver_volume_type"] == "rbd"
    assert data["name"] == "%s/volume-%s" % (ceph.pool, volume.id)
    assert data["hosts"] == ["127.0.0.1"]
    assert data["ports"] == [str(ceph.mon_ports[1])]
    assert data["auth_username"] == ceph.client and "keyring" not in data
    driver.delete_volume(volume)


# -- a deployment ---------------------------------------------------------
def start_on_ceph(dep, ceph, client, api_extra: str = "") -> None:
    """A scheduler, a volume node with the ``ceph`` backend and the api;
    wait until ``client`` sees the pool."""
    dep.start("scheduler", "services.scheduler", "sched")
    dep.start("volume1", "services.volume", "cephnode", backends="ceph",
              extra=_backend_section(ceph))
    dep.start("api", "services.api", "api", extra=api_extra)
    harness.wait_for(lambda: client.pools(), timeout=60,
                     what="the RBD pool's report")


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, ceph):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("rbd"), vhost, db_url)
    dep.db_sync()
    try:
        client = harness.Client(dep.endpoint)
        start_on_ceph(dep, ceph, client)
        for body in (MA_TYPE, PLAIN_TYPE):
            assert client.post("/types", body).status_code == 200
        yield dep, client
    finally:
        dep.stop_all()
        drop()


def _volume(client, type_name: str, size: int = 1) -> str:
    volume = client.create_volume(size=size, volume_type=type_name)
    client.wait_status(volume["id"], "available")
    return volume["id"]


def _agent_section(ceph) -> str:
    """A compute host's [agent]: its own cephx user, not the volume
    service's (which may lift blocklist entries)."""
    return "[agent]\nrbd_keyring_dir = %s\nrbd_user = %s\n" % (
        ceph.dir, ceph.compute_client)


def _agent(dep, ceph, host: str):
    return storage_story.agent(dep, host, extra=_agent_section(ceph))


_ok = storage_story.ok


def test_volume_lifecycle_makes_and_removes_the_image(deployment, ceph):
    _dep, client = deployment
    pool = next(iter(client.pools().values()))
    assert pool["storage_protocol"] == "ceph" and pool["multiattach"] is True
    vid = _volume(client, "rbd-shared")
    assert _features(ceph, vid) == {"layering", "deep-flatten"}
    plain = _volume(client, "rbd-plain")
    assert "exclusive-lock" in _features(ceph, plain)
    assert client.post("/volumes/%s/action" % vid,
                       {"os-extend": {"new_size": 2}}).status_code == 202
    harness.wait_for(lambda: client.get("/volumes/%s" % vid).json()[
        "volume"]["size"] == 2, what="the extend")
    for volume_id in (vid, plain):
        assert client.delete("/volumes/%s" % volume_id).status_code == 202
        client.wait_status(volume_id, None)
        assert not _image_exists(ceph, volume_id)


def test_retype_of_an_available_volume_changes_the_features(deployment, ceph):
    _dep, client = deployment
    vid = _volume(client, "rbd-plain")
    answer = client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "rbd-shared", "migration_policy": "never"}})
    assert answer.status_code == 202, answer.text
    harness.wait_for(lambda: client.get("/volumes/%s" % vid).json()[
        "volume"]["volume_type"] == "rbd-shared", what="the retype")
    assert not _features(ceph, vid) & LOCK_FEATURES
    assert client.delete("/volumes/%s" % vid).status_code == 202


def test_bytes_written_on_one_host_are_read_on_another(deployment, ceph):
    dep, client = deployment
    vid = _volume(client, "rbd-shared")
    host_a, host_b = _agent(dep, ceph, "compute-a"), _agent(dep, ceph,
                                                            "compute-b")
    att_a = json.loads(_ok(host_a("attach", vid)))
    att_b = json.loads(_ok(host_b("attach", vid, "--mode", "ro")))
    assert att_a["device"] == {"type": "librbd",
                               "name": "%s/volume-%s" % (ceph.pool, vid)}
    payload = b"written on compute-a " + uuid.uuid4().bytes
    written = json.loads(_ok(host_a("write", att_a["id"], "--offset", "4096",
                                    stdin=payload)))
    assert written["written"] == len(payload)
    read = _ok(host_b("read", att_b["id"], "--offset", "4096",
                      "--length", str(len(payload))))
    assert read == payload
    # the read-only attachment's handle refuses the write (librbd)
    code, _out, err = host_b("write", att_b["id"], stdin=b"not allowed")
    assert code != 0 and "read-only" in err and "ReadOnlyImage" in err
    assert _ok(host_a("read", att_a["id"], "--length", "11")) == bytes(11)
    for run, att in ((host_a, att_a), (host_b, att_b)):
        _ok(run("detach", att["id"]))
    client.wait_status(vid, "available")


def test_a_plain_volume_refuses_the_second_host(deployment, ceph):
    dep, client = deployment
    vid = _volume(client, "rbd-plain")
    host_a, host_b = _agent(dep, ceph, "compute-a"), _agent(dep, ceph,
                                                            "compute-b")
    att_a = json.loads(_ok(host_a("attach", vid)))
    code, _out, err = host_b("attach", vid)
    assert code != 0 and "multiattach" in err.lower(), err[-1000:]
    _ok(host_a("write", att_a["id"], stdin=b"only one host"))
    assert _ok(host_a("read", att_a["id"], "--length", "13")) == b"only one host"
    _ok(host_a("detach", att_a["id"]))
    client.wait_status(vid, "available")


def test_snapshot_story_on_rbd(deployment, ceph):
    dep, client = deployment
    storage_story.tell(client, _agent(dep, ceph, "compute-a"), "rbd-shared")
    storage_story.tell(client, _agent(dep, ceph, "compute-a"), "rbd-plain")


def test_a_clone_its_source_pool_cannot_take_is_refused_at_once(deployment):
    _dep, client = deployment
    assert client.post("/types", {"volume_type": {
        "name": "elsewhere", "extra_specs": {
            "volume_backend_name": "nowhere"}}}).status_code == 200
    source = _volume(client, "rbd-plain")
    resp = client.post("/volumes", {"volume": {
        "source_volid": source, "volume_type": "elsewhere"}})
    assert resp.status_code == 400, resp.text
    message = resp.json()["badRequest"]["message"]
    assert "volume %s" % source in message
    assert "volume_backend_name=nowhere" in message
    assert client.delete("/volumes/%s" % source).status_code == 202


# -- fencing and takeover (the survey's failover story) --------------------
def _held(dep, ceph, host: str, volume_id: str, mode: str = "ro",
          attachment_id: str | None = None) -> Held:
    config = dep.config("agent-%s" % host, host, extra=_agent_section(ceph))
    return Held(config, volume_id, mode, attachment_id=attachment_id)


def test_the_pool_reports_fencing(deployment):
    _dep, client = deployment
    pool = next(iter(client.pools().values()))
    assert pool["fencing"] is True


def test_takeover_fences_the_old_writer_at_the_storage_layer(deployment,
                                                              ceph):
    dep, client = deployment
    failover_story.failover_type(client, "rbd-failover", "ceph")
    vid = _volume(client, "rbd-failover")
    active = _held(dep, ceph, "compute-a", vid, "rw")
    # the project's consent: an attachment it made for compute-b (REST)
    passive = _held(dep, ceph, "compute-b", vid,
                    attachment_id=failover_story.reserve(client, vid))
    try:
        assert active.write(0, b"A before") == {"written": 8}
        assert passive.read(0, 8) == b"A before"
        # one writer only: a second read/write attachment is refused at once
        code, _out, err = _agent(dep, ceph, "compute-c")("attach", vid)
        assert code != 0 and "only one read/write" in err, err[-1000:]

        assert active.clients and passive.clients
        assert passive.attachment["attach_mode"] == "ro"
        failover_story.takeover(active, passive)
        assert set(active.clients) <= ceph.blocklist()
        assert not set(passive.clients) & ceph.blocklist()
        error, _seconds = failover_story.fenced_write_error(active)
        assert "ConnectionShutdown" in error, error
        assert passive.write(0, b"B writes") == {"written": 8}
        assert passive.read(0, 8) == b"B writes"
        assert passive.read(8192, 15) == bytes(15)  # nothing A wrote after
        shown = client.get("/attachments/%s" % active.attachment["id"]).json()
        assert "ashlar-fencing:fenced_at" in shown["attachment"]
        assert client.get("/volumes/%s" % vid).json()["volume"][
            "status"] == "in-use"

        # A comes back: it may not attach anew while fenced, detaches, and
        # attaches again read-only
        code, _out, err = _agent(dep, ceph, "compute-a")("attach", vid)
        assert code != 0 and "fenced" in err, err[-1000:]
        failover_story.comes_back(active, passive, lambda: _held(
            dep, ceph, "compute-a", vid, "ro"))
    finally:
        active.close()
        passive.close()
    client.wait_status(vid, "available")


def test_an_unfence_lifts_the_blocklist_entries(deployment, ceph):
    dep, client = deployment
    vid = _volume(client, "rbd-shared")
    held = _held(dep, ceph, "compute-a", vid, "rw")
    try:
        att = held.attachment["id"]
        answer = client.post("/attachments/%s/action" % att,
                             {"ashlar-fence": {}})
        assert answer.status_code == 200, answer.text
        assert "ConnectionShutdown" in held.write(0, b"fenced").get("error")
        assert held.clients and set(held.clients) <= ceph.blocklist()
        answer = client.post("/attachments/%s/action" % att,
                             {"ashlar-unfence": {}})
        assert answer.status_code == 200, answer.text
        assert "ashlar-fencing:fenced_at" not in answer.json()["attachment"]
        assert not set(held.clients) & ceph.blocklist()
        # librbd keeps a fenced handle shut: the host reopens, and the
        # attachment takes its new instance
        assert "error" not in held.ask("reopen")
        assert held.write(0, b"back") == {"written": 4}
        assert held.read(0, 4) == b"back"
        assert "error" not in held.ask("detach")
    finally:
        held.close()
    client.wait_status(vid, "available")


def test_a_fenced_host_cannot_lift_its_own_entry(deployment, ceph):
    """Compute hosts use a cephx user of their own ('profile rbd' on the
    monitors): the fenced host's attempt to take itself off the blocklist
    is refused by Ceph, and the entry stays."""
    dep, client = deployment
    vid = _volume(client, "rbd-shared")
    held = _held(dep, ceph, "compute-a", vid, "rw")
    try:
        answer = client.post("/attachments/%s/action" % held.attachment[
            "id"], {"ashlar-fence": {}})
        assert answer.status_code == 200, answer.text
        assert held.clients and set(held.clients) <= ceph.blocklist()
        for addr in held.clients:
            with pytest.raises(RuntimeError, match="EACCES|denied"):
                ceph.ceph_as(ceph.compute_client, "osd", "blocklist", "rm",
                             addr)
        assert set(held.clients) <= ceph.blocklist()
        assert "ConnectionShutdown" in held.write(0, b"still").get("error")
        answer = held.ask("detach")
        assert "error" not in answer, answer
    finally:
        held.close()
    client.wait_status(vid, "available")
