"""drivers/qcow2.py: overlays, rebased headers and the chain reader, on
images built here (tests/qcow2_craft.py puts guest clusters by the spec's
offsets), and cross-checked with qemu-img and qemu-io where they are
installed (``apt-get install qemu-utils``; the project does not need
them, so CI does not either)."""

import json
import os
import shutil
import struct
import subprocess

import pytest
from oslo_utils import units

from common import exception
from drivers import qcow2
from tests import qcow2_craft

CLUSTER = 64 * units.Ki
QEMU = shutil.which("qemu-img") and shutil.which("qemu-io")
needs_qemu = pytest.mark.skipif(
    not QEMU, reason="qemu-img and qemu-io are missing: "
    "apt-get install qemu-utils")


def make(path, size, backing=None):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        qcow2.write(fd, size, None if backing is None
                    else qcow2.Backing(backing, "qcow2"))
    finally:
        os.close(fd)


def layer(path):
    fd = os.open(path, os.O_RDONLY)
    return qcow2.Layer(lambda offset, length: os.pread(fd, length, offset),
                       os.path.basename(path))


def chain(folder, top):
    layers = [layer(folder / top)]
    while layers[-1].backing is not None:
        layers.append(layer(folder / layers[-1].backing.name))
    return qcow2.Chain(layers)


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


# -- against qemu ----------------------------------------------------------
def qemu_info(path):
    return json.loads(subprocess.run(
        ["qemu-img", "info", "--output=json", str(path)], check=True,
        capture_output=True, text=True).stdout)


def qemu_io(path, *commands):
    args = ["qemu-io"]
    for command in commands:
        args += ["-c", command]
    subprocess.run(args + [str(path)], check=True, capture_output=True)


@needs_qemu
def test_qemu_reads_our_overlay_and_we_read_qemus_writes(tmp_path):
    make(tmp_path / "base.qcow2", units.Gi)
    make(tmp_path / "volume.snap", units.Gi, "base.qcow2")
    info = qemu_info(tmp_path / "volume.snap")
    assert (info["backing-filename"], info["backing-filename-format"],
            info["virtual-size"]) == ("base.qcow2", "qcow2", units.Gi)
    subprocess.run(["qemu-img", "check", str(tmp_path / "volume.snap")],
                   check=True, capture_output=True)
    qemu_io(tmp_path / "base.qcow2", "write -P 0xaa 65000 300000",
            "write -P 0x11 500M 1M", "write -z 2M 64k")
    qemu_io(tmp_path / "volume.snap", "write -P 0xbb 100000 5000",
            "write -z 500M 64k", "write -P 0xcc 1023M 1M")
    assert not layer(tmp_path / "volume.snap").is_empty()
    subprocess.run(["qemu-img", "convert", "-O", "raw",
                    str(tmp_path / "volume.snap"), str(tmp_path / "flat")],
                   check=True)
    disk = chain(tmp_path, "volume.snap")
    with open(tmp_path / "flat", "rb") as flat:
        for offset in (0, 499 * units.Mi, 1022 * units.Mi):
            flat.seek(offset)
            assert disk.read(offset, 2 * units.Mi) == flat.read(
                2 * units.Mi), offset


@needs_qemu
def test_qemu_follows_a_rebased_overlay(tmp_path):
    make(tmp_path / "a", units.Gi)
    make(tmp_path / "b", units.Gi, "a")
    make(tmp_path / "c", units.Gi, "b")
    qemu_io(tmp_path / "a", "write -P 0x5a 0 64k")
    head = (tmp_path / "c").read_bytes()
    (tmp_path / "c").write_bytes(qcow2.rebased_header(
        head[:CLUSTER], qcow2.Backing("a", "qcow2")) + head[CLUSTER:])
    info = qemu_info(tmp_path / "c")
    assert (info["backing-filename"], info["backing-filename-format"]) == (
        "a", "qcow2")
    subprocess.run(["qemu-img", "compare", str(tmp_path / "c"),
                    str(tmp_path / "a")], check=True, capture_output=True)
    assert chain(tmp_path, "c").read(0, 2) == b"\x5a\x5a"


class LocalFile:
    """``write_merged``'s output on a local file."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def pwrite(self, offset, data):
        return os.pwrite(self.fd, data, offset)

    def truncate(self, length):
        os.ftruncate(self.fd, length)


def merge(folder, top, below, out):
    lower = layer(folder / below)
    qcow2.write_merged(LocalFile(folder / out), [layer(folder / top), lower],
                       lower.backing)


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


@needs_qemu
def test_qemu_checks_and_compares_a_merged_image(tmp_path):
    make(tmp_path / "a", units.Gi)
    make(tmp_path / "b", units.Gi, "a")
    make(tmp_path / "c", 3 * units.Gi, "b")
    qemu_io(tmp_path / "a", "write -P 0x0a 0 3M")
    qemu_io(tmp_path / "b", "write -P 0x0b 1M 300k", "write -z 2M 64k",
            "write -P 0x1b 900M 2M")
    qemu_io(tmp_path / "c", "write -P 0x0c 1100k 10k", "write -z 0 64k",
            "write -P 0x1c 2500M 1M")
    for offset in range(0, 40 * units.Mi, units.Mi):
        qemu_io(tmp_path / "b", "write -P 0x2b %d 64k" % (
            100 * units.Mi + offset))
    merge(tmp_path, "c", "b", "m")
    subprocess.run(["qemu-img", "check", str(tmp_path / "m")], check=True,
                   capture_output=True)
    subprocess.run(["qemu-img", "compare", str(tmp_path / "m"),
                    str(tmp_path / "c")], check=True, capture_output=True)
    info = qemu_info(tmp_path / "m")
    assert (info["virtual-size"], info["backing-filename"]) == (
        3 * units.Gi, "a")
    # qemu writes on into the merged image; the refcounts hold
    qemu_io(tmp_path / "m", "write -P 0x0d 2G 5M")
    subprocess.run(["qemu-img", "check", str(tmp_path / "m")], check=True,
                   capture_output=True)
    merge(tmp_path, "m", "a", "flat")
    subprocess.run(["qemu-img", "compare", str(tmp_path / "flat"),
                    str(tmp_path / "m")], check=True, capture_output=True)
    assert qemu_info(tmp_path / "flat").get("backing-filename") is None


@needs_qemu
def test_a_whole_chain_flattened_into_a_larger_image(tmp_path):
    make(tmp_path / "a", units.Gi)
    make(tmp_path / "b", units.Gi, "a")
    make(tmp_path / "c", 2 * units.Gi, "b")
    qemu_io(tmp_path / "a", "write -P 0x0a 0 2M", "write -P 0x1a 1000M 1M")
    qemu_io(tmp_path / "b", "write -P 0x0b 1M 100k", "write -z 1000M 64k")
    qemu_io(tmp_path / "c", "write -P 0x0c 1500M 1M", "write -z 0 64k")
    qcow2.write_merged(LocalFile(tmp_path / "flat"), [
        layer(tmp_path / name) for name in ("c", "b", "a")], None,
        3 * units.Gi)
    subprocess.run(["qemu-img", "check", str(tmp_path / "flat")],
                   check=True, capture_output=True)
    info = qemu_info(tmp_path / "flat")
    assert (info["virtual-size"], info.get("backing-filename")) == (
        3 * units.Gi, None)
    # qemu-img compare allows the larger image's tail when it is zeros
    subprocess.run(["qemu-img", "compare", str(tmp_path / "flat"),
                    str(tmp_path / "c")], check=True, capture_output=True)
