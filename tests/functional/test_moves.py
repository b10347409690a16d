"""A volume moves across the four kinds of backend of one volume node.

One deployment (api, scheduler, PostgreSQL, RabbitMQ) whose volume node
has a ``file``, an ``iscsi`` (the testbed's tgtd), an ``nfs`` (the
testbed's nfs-ganesha) and a ``ceph`` (the testbed's Ceph) backend.  A
volume written through an agent moves file -> iscsi -> nfs -> ceph ->
file by retypes: each move is the generic copy (the destination reads the
source through the hosts' data path: the file, libiscsi, libnfs, librbd),
so each reader and each writer runs once.  After each move the bytes on
the destination's storage (sha256 of the whole volume) are the ones
written, its holes were not written, the source's copy is gone, and the
volume is ``available`` on the destination's pool.  Skipped with the
install command when a component is missing (failed under ``CI=true``).
"""

import hashlib
import json
import os
import subprocess

import pytest
from oslo_utils import units

from deploy.testbed import harness
from tests.functional import storage_story
from tests.functional import test_rbd

NODE = "mover"
#: What the agent writes: the first block, one in the middle, the last.
WRITES = {0: b"first block of the moving volume",
          300 * units.Mi + 17: b"in the middle",
          units.Gi - 4096: b"the last block"}
#: The moves, by backend: every data path reads once and writes once.
ROUTE = ["iscsi", "nfs", "ceph", "file"]


def _sections(work, tgt, ganesha, ceph) -> str:
    """The four backends (the file stores in folders of their own) and
    the node's ``[agent]``: how it reads an RBD source."""
    (work / "nfs_shares").write_text(ganesha.url + "\n")
    return (
        "[file]\nvolume_driver = file\nfile_volume_dir = %s\n"
        "[iscsi]\nvolume_driver = iscsi\nfile_volume_dir = %s\n"
        "target_port = %d\ntgtadm_control_port = %d\n"
        "[nfs]\nvolume_driver = nfs\nnfs_shares_config = %s\n"
        "%s[agent]\nrbd_keyring_dir = %s\n" % (
            work / "file", work / "iscsi", tgt.port, tgt.control_port,
            work / "nfs_shares", test_rbd._backend_section(ceph), ceph.dir))


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, tgt, ganesha, ceph):
    work = tmp_path_factory.mktemp("moves")
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(work, vhost, db_url)
    dep.db_sync()
    try:
        client = harness.Client(dep.endpoint)
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", NODE,
                  backends="file,iscsi,nfs,ceph",
                  extra=_sections(work, tgt, ganesha, ceph))
        dep.start("api", "services.api", "api")
        harness.wait_for(lambda: len(client.pools()) == 4, timeout=90,
                         what="the four pools' reports")
        for backend in ROUTE:  # it ends on file
            assert client.post("/types", {"volume_type": {
                "name": "on-" + backend, "extra_specs": {
                    "volume_backend_name": backend}}}).status_code == 200
        yield dep, client, work
    finally:
        dep.stop_all()
        drop()


def _expected() -> str:
    """sha256 of a 1 GiB volume holding :data:`WRITES`, zeros elsewhere."""
    image = hashlib.sha256()
    at = 0
    for offset, data in sorted(WRITES.items()):
        _zeros(image, offset - at)
        image.update(data)
        at = offset + len(data)
    _zeros(image, units.Gi - at)
    return image.hexdigest()


def _zeros(image, count: int) -> None:
    chunk = bytes(units.Mi)
    while count > 0:
        image.update(chunk[:min(count, units.Mi)])
        count -= units.Mi


def _file_sha(path) -> str:
    image = hashlib.sha256()
    with open(path, "rb") as volume:
        while chunk := volume.read(8 * units.Mi):
            image.update(chunk)
    return image.hexdigest()


def _rbd_sha(ceph, name: str) -> str:
    image = hashlib.sha256()
    with subprocess.Popen(["rbd", "-c", str(ceph.conf), "export", name, "-"],
                          stdout=subprocess.PIPE) as export:
        while chunk := export.stdout.read(8 * units.Mi):
            image.update(chunk)
    assert export.returncode == 0
    return image.hexdigest()


def _stored(work, ganesha, ceph, backend: str, vid: str):
    """Where the backend keeps the volume (a path, or the image's name),
    and whether it is there."""
    if backend == "ceph":
        name = "%s/volume-%s" % (ceph.pool, vid)
        return name, ("volume-%s" % vid) in ceph.ceph_rbd(
            "ls", ceph.pool).split()
    folder = ganesha.export if backend == "nfs" else work / backend
    path = folder / ("volume-%s.raw" % vid)
    return path, path.exists()


def _allocated(ceph, backend: str, where) -> int:
    """Bytes the backend allocated to the volume (RBD: its objects)."""
    if backend != "ceph":
        return os.stat(where).st_blocks * 512
    usage = json.loads(ceph.ceph_rbd("du", "--format", "json", where))
    return sum(image["used_size"] for image in usage["images"])


def _sha(ceph, backend: str, where) -> str:
    return _rbd_sha(ceph, where) if backend == "ceph" else _file_sha(where)


def _moved(client, vid: str, type_name: str):
    shown = client.get("/volumes/%s" % vid).json()["volume"]
    if shown["migration_status"] == "error":
        pytest.fail("the move failed: %s" % shown)
    return ((shown["status"], shown["migration_status"],
             shown["volume_type"]) == ("available", "success", type_name)
            and shown)


def _move(client, storage, vid: str, came_from: str, backend: str,
          expected: str) -> None:
    """Retype the volume to ``on-<backend>``; check where it is, its
    bytes there and that ``came_from`` lost its copy."""
    resp = client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "on-" + backend, "migration_policy": "on-demand"}})
    assert resp.status_code == 202, resp.text
    harness.wait_for(lambda: _moved(client, vid, "on-" + backend),
                     timeout=120, what="the move to " + backend)
    shown = _moved(client, vid, "on-" + backend)
    pool = shown["os-vol-host-attr:host"]
    assert pool.startswith("%s@%s#" % (NODE, backend)), pool
    assert pool in client.pools()
    where, there = _stored(*storage, backend, vid)
    assert there, "no copy on %s" % backend
    assert _sha(storage[2], backend, where) == expected, backend
    assert _allocated(storage[2], backend, where) < 64 * units.Mi, (
        "the holes were written on %s" % backend)
    # the source's node removes its copy once the row moved
    harness.wait_for(lambda: not _stored(*storage, came_from, vid)[1],
                     timeout=30, what="the copy on %s to go" % came_from)


def test_a_volume_moves_across_file_iscsi_nfs_and_rbd(deployment, ganesha,
                                                       ceph):
    dep, client, work = deployment
    vid = client.create_volume(size=1, volume_type="on-file")["id"]
    client.wait_status(vid, "available", timeout=60)
    run = storage_story.agent(dep, "compute-a")
    attachment = json.loads(storage_story.ok(run("attach", vid)))
    for offset, data in WRITES.items():
        storage_story.ok(run("write", attachment["id"], "--offset",
                             str(offset), stdin=data))
    storage_story.ok(run("detach", attachment["id"]))
    expected = _expected()
    where, there = _stored(work, ganesha, ceph, "file", vid)
    assert there and _sha(ceph, "file", where) == expected
    for came_from, backend in zip(["file", *ROUTE[:-1]], ROUTE, strict=True):
        _move(client, (work, ganesha, ceph), vid, came_from, backend,
              expected)
    assert read_back(run, vid) == WRITES[0]
    assert client.delete("/volumes/%s" % vid).status_code == 202
    harness.wait_for(lambda: client.volume_status(vid) is None,
                     what="the volume's delete")


def read_back(run, vid: str) -> bytes:
    """The volume's first bytes, read by a host after the moves."""
    return storage_story.read_through(run, vid, len(WRITES[0]))
