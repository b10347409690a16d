"""The POSIX backup driver: chunks, compression, checksums, incremental
backups that store only the chunks that changed."""

import json
import os
import zlib

import pytest

from common import exception
from drivers.backup import posix

CHUNK = 4096


class Buffer:
    """A volume in memory, with the data path's read/write calls."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.reads = 0

    def read(self, offset: int, length: int) -> bytes:
        self.reads += 1
        return bytes(self.data[offset:offset + length])

    def write(self, offset: int, data: bytes) -> int:
        self.data[offset:offset + len(data)] = data
        return len(data)


@pytest.fixture
def driver(tmp_path):
    return posix.PosixBackupDriver(str(tmp_path), CHUNK)


def _volume(chunks: int = 4) -> Buffer:
    return Buffer(b"".join(bytes([i + 1]) * CHUNK for i in range(chunks)))


def _objects(tmp_path, ref):
    return sorted(n for n in os.listdir(tmp_path / ref.container / ref.id)
                  if n.startswith("chunk-"))


def test_full_backup_chunks_compresses_and_restores(driver, tmp_path):
    vol = _volume()
    ref = posix.BackupRef("b1", "c")
    meta = driver.backup(ref, vol, len(vol.data))
    assert meta["object_count"] == 4 and vol.reads == 4
    assert _objects(tmp_path, ref) == ["chunk-%05d" % i for i in range(4)]
    stored = (tmp_path / "c" / "b1" / "chunk-00001").read_bytes()
    assert len(stored) < CHUNK and zlib.decompress(stored) == b"\2" * CHUNK
    assert json.loads((tmp_path / "c" / "b1" / "metadata.json").read_text()
                      )["chunks"][1]["object"] == "b1/chunk-00001"
    out = Buffer(bytes(len(vol.data)))
    assert driver.restore(ref, out) == len(vol.data)
    assert out.data == vol.data


def test_zero_chunks_are_not_stored_but_restored(driver, tmp_path):
    vol = Buffer(bytes(CHUNK) + b"x" * CHUNK)
    ref = posix.BackupRef("b1", "c")
    assert driver.backup(ref, vol, len(vol.data))["object_count"] == 1
    out = Buffer(b"\xff" * len(vol.data))
    driver.restore(ref, out)
    assert out.data == vol.data


def test_incremental_stores_only_changed_chunks(driver, tmp_path):
    vol = _volume()
    full = posix.BackupRef("full", "c")
    driver.backup(full, vol, len(vol.data))
    vol.write(2 * CHUNK + 10, b"changed")
    incr = posix.BackupRef("incr", "c")
    meta = driver.backup(incr, vol, len(vol.data), parent=full)
    assert meta["object_count"] == 1 and meta["parent_id"] == "full"
    assert _objects(tmp_path, incr) == ["chunk-00002"]
    assert [c["object"] for c in meta["chunks"]] == [
        "full/chunk-00000", "full/chunk-00001", "incr/chunk-00002",
        "full/chunk-00003"]
    out = Buffer(bytes(len(vol.data)))
    driver.restore(incr, out)
    assert out.data == vol.data
    older = Buffer(bytes(len(vol.data)))
    driver.restore(full, older)
    assert older.data[2 * CHUNK + 10:2 * CHUNK + 17] == b"\3" * 7


def test_checksum_mismatch_is_an_error(driver, tmp_path):
    vol = _volume()
    ref = posix.BackupRef("b1", "c")
    driver.backup(ref, vol, len(vol.data))
    (tmp_path / "c" / "b1" / "chunk-00002").write_bytes(
        zlib.compress(b"\0" + b"\3" * (CHUNK - 1)))
    out = Buffer(bytes(len(vol.data)))
    with pytest.raises(posix.BackupChecksumMismatch) as caught:
        driver.restore(ref, out)
    assert "offset %d" % (2 * CHUNK) in str(caught.value)
    assert out.data[2 * CHUNK:] == bytes(2 * CHUNK)  # stopped there


def test_corrupt_object_is_a_checksum_error(driver, tmp_path):
    vol = _volume(1)
    ref = posix.BackupRef("b1", "c")
    driver.backup(ref, vol, len(vol.data))
    (tmp_path / "c" / "b1" / "chunk-00000").write_bytes(b"garbage")
    with pytest.raises(posix.BackupChecksumMismatch):
        driver.restore(ref, Buffer(bytes(CHUNK)))


def test_missing_metadata_is_invalid_backup(driver):
    with pytest.raises(exception.InvalidBackup):
        driver.restore(posix.BackupRef("nope", "c"), Buffer(b""))


def test_delete_removes_the_folder(driver, tmp_path):
    vol = _volume(2)
    ref = posix.BackupRef("b1", "c")
    driver.backup(ref, vol, len(vol.data))
    driver.delete(ref)
    assert not (tmp_path / "c" / "b1").exists()
    driver.delete(ref)  # gone: nothing


@pytest.mark.parametrize("name", ["..", "a/b", "", ".hidden", "x" * 300])
def test_unsafe_container_names_are_refused(driver, name):
    with pytest.raises(exception.InvalidInput):
        driver.backup(posix.BackupRef("b1", name), Buffer(b"a"), 1)
