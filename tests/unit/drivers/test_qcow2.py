"""drivers/qcow2.py: overlays, rebased headers and the chain reader, on
images built here (tests/qcow2_craft.py puts guest clusters by the spec's
offsets); tests/functional/test_qcow2_qemu.py checks them with qemu's
own tools."""

import struct

import pytest
from oslo_utils import units

from common import exception
from drivers import qcow2
from tests import qcow2_craft
from tests.qcow2_images import chain, layer, make, merge

CLUSTER = 64 * units.Ki


def test_an_overlay_names_its_backing_file_and_format(tmp_path):
    make(tmp_path / "base.qcow2", units.Gi)
    make(tmp_path / "top", 2 * units.Gi, "base.qcow2")
    data = (tmp_path / "top").read_bytes()
    offset, length = struct.unpack(">QI", data[8:20])
    assert data[offset:offset + length] == b"base.qcow2"
    # the backing format extension, then the end of the extensions
    assert struct.unpack(">II", data[104:112]) == (0xE2792ACA, 5)
    assert data[112:120] == b"qcow2\0\0\0"
    assert data[120:128] == bytes(8)
    assert offset == 128
    top = layer(tmp_path / "top")
    assert (top.backing, top.size, top.is_empty()) == (
        qcow2.Backing("base.qcow2", "qcow2"), 2 * units.Gi, True)
    assert layer(tmp_path / "base.qcow2").backing is None


def test_a_backing_name_qemu_would_not_read_is_refused(tmp_path):
    with pytest.raises(exception.InvalidInput):
        make(tmp_path / "top", units.Gi, "x" * 1024)


def test_the_chain_reads_each_cluster_from_the_top_layer_that_has_it(
        tmp_path):
    make(tmp_path / "base", units.Gi)
    make(tmp_path / "mid", units.Gi, "base")
    make(tmp_path / "top", 2 * units.Gi, "mid")
    qcow2_craft.put_clusters(tmp_path / "base", {
        0: b"b0" * 100, CLUSTER: b"b1", 2 * CLUSTER: b"b2",
        600 * units.Mi: b"far"})
    qcow2_craft.put_clusters(tmp_path / "mid", {
        CLUSTER: b"m1", 2 * CLUSTER: qcow2_craft.ZERO})
    qcow2_craft.put_clusters(tmp_path / "top", {0: b"t0"})
    disk = chain(tmp_path, "top")
    assert disk.size == 2 * units.Gi
    assert disk.read(0, 4) == b"t0\0\0"
    assert disk.read(CLUSTER - 2, 6) == b"\0\0m1\0\0"
    assert disk.read(2 * CLUSTER, CLUSTER) == bytes(CLUSTER)  # zero flag
    assert disk.read(600 * units.Mi, 3) == b"far"
    assert disk.read(units.Gi - 1, 2) == bytes(2)  # past mid's end
    assert not layer(tmp_path / "mid").is_empty()
    assert chain(tmp_path, "mid").read(0, 2) == b"b0"


def test_compressed_clusters_are_refused(tmp_path):
    make(tmp_path / "image", units.Gi)
    qcow2_craft.put_clusters(tmp_path / "image",
                             {CLUSTER: qcow2_craft.COMPRESSED})
    disk = chain(tmp_path, "image")
    assert disk.read(0, CLUSTER) == bytes(CLUSTER)
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="compressed"):
        disk.read(CLUSTER, 1)


def test_encrypted_and_unknown_images_are_refused(tmp_path):
    make(tmp_path / "image", units.Gi)
    with open(tmp_path / "image", "r+b") as image:
        image.seek(72)
        image.write(struct.pack(">Q", 1 << 4))  # extended L2 entries
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="incompatible"):
        layer(tmp_path / "image")
    (tmp_path / "raw").write_bytes(bytes(CLUSTER))
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="not a qcow2"):
        layer(tmp_path / "raw")


def test_a_rebased_header_keeps_the_other_extensions(tmp_path):
    make(tmp_path / "top", units.Gi, "old-backing-name")
    head = bytearray((tmp_path / "top").read_bytes()[:CLUSTER])
    # a feature name table (0x6803f857) before the backing format
    feature = struct.pack(">II", 0x6803F857, 8) + b"features"
    head[104:104] = feature
    head = bytes(head[:CLUSTER])
    head = head[:8] + struct.pack(">Q", 104 + len(feature) + 24) + head[16:]
    new = qcow2.rebased_header(head, qcow2.Backing("b", "qcow2"))
    assert len(new) == CLUSTER
    assert new[104:104 + len(feature)] == feature
    offset, length = struct.unpack(">QI", new[8:20])
    assert new[offset:offset + length] == b"b"
    assert new[offset + 1:offset + 100] == bytes(99)
    (tmp_path / "top").write_bytes(
        new + (tmp_path / "top").read_bytes()[CLUSTER:])
    assert layer(tmp_path / "top").backing == qcow2.Backing("b", "qcow2")


def test_a_merged_image_reads_as_the_two_layers_did(tmp_path):
    make(tmp_path / "base", units.Gi)
    make(tmp_path / "mid", units.Gi, "base")
    make(tmp_path / "top", 2 * units.Gi, "mid")
    qcow2_craft.put_clusters(tmp_path / "base", {0: b"base", CLUSTER: b"b1"})
    qcow2_craft.put_clusters(tmp_path / "mid", {
        CLUSTER: b"mid", 2 * CLUSTER: b"m2", 700 * units.Mi: b"m700"})
    qcow2_craft.put_clusters(tmp_path / "top", {
        2 * CLUSTER: qcow2_craft.ZERO, 1500 * units.Mi: b"t1500"})
    merge(tmp_path, "top", "mid", "merged")
    merged = layer(tmp_path / "merged")
    assert (merged.size, merged.backing) == (
        2 * units.Gi, qcow2.Backing("base", "qcow2"))
    assert {index: kind for index, (kind, _) in merged.allocated().items()
            } == {1: qcow2.DATA, 2: qcow2.ZERO,
                  700 * units.Mi // CLUSTER: qcow2.DATA,
                  1500 * units.Mi // CLUSTER: qcow2.DATA}
    before, after = chain(tmp_path, "top"), chain(tmp_path, "merged")
    for offset in (0, CLUSTER, 2 * CLUSTER, 700 * units.Mi,
                   1500 * units.Mi, 2 * units.Gi - CLUSTER):
        assert after.read(offset, CLUSTER) == before.read(offset, CLUSTER)
    assert after.read(0, 4) == b"base"


def test_images_qemu_could_not_be_merged_by_us_are_refused(tmp_path):
    make(tmp_path / "below", 2 * units.Gi)
    make(tmp_path / "top", units.Gi, "below")
    with pytest.raises(exception.VolumeBackendAPIException,
                       match="no larger"):
        merge(tmp_path, "top", "below", "merged")


@pytest.mark.parametrize("data", [0, 32000, 40000, 10 ** 8])
def test_the_refcounts_cover_every_cluster_of_a_merged_image(data):
    at = qcow2._layout(2, 3, data)
    blocks = at.l2 - at.refblocks
    per_block = CLUSTER * 8 // 16
    assert blocks * per_block >= at.end > (blocks - 1) * per_block
    assert (at.l1 - at.reftable) * CLUSTER // 8 >= blocks
    assert at.end == 1 + (at.l1 - 1) + 2 + blocks + 3 + data
