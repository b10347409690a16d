"""drivers/qcow2.py's images judged by qemu's own tools (the ``qemu``
component): qemu reads our overlays and rebased headers, we read what
qemu writes, and ``qemu-img check`` and ``compare`` pass on the images
that deleting a snapshot merges, also after qemu writes on into them."""

import json
import subprocess

import pytest
from oslo_utils import units

from deploy.testbed.components import qemu
from drivers import qcow2
from tests import qcow2_images
from tests.qcow2_images import chain, layer, make, merge

CLUSTER = 64 * units.Ki


@pytest.fixture(autouse=True)
def _qemu():
    qemu.available()


def qemu_info(path):
    return json.loads(subprocess.run(
        ["qemu-img", "info", "--output=json", str(path)], check=True,
        capture_output=True, text=True).stdout)


def qemu_io(path, *commands):
    args = ["qemu-io"]
    for command in commands:
        args += ["-c", command]
    subprocess.run(args + [str(path)], check=True, capture_output=True)


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


def test_a_whole_chain_flattened_into_a_larger_image(tmp_path):
    make(tmp_path / "a", units.Gi)
    make(tmp_path / "b", units.Gi, "a")
    make(tmp_path / "c", 2 * units.Gi, "b")
    qemu_io(tmp_path / "a", "write -P 0x0a 0 2M", "write -P 0x1a 1000M 1M")
    qemu_io(tmp_path / "b", "write -P 0x0b 1M 100k", "write -z 1000M 64k")
    qemu_io(tmp_path / "c", "write -P 0x0c 1500M 1M", "write -z 0 64k")
    qcow2.write_merged(qcow2_images.LocalFile(tmp_path / "flat"), [
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
