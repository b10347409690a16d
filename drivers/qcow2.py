"""qcow2 v3 images for the file backend, written and grown without qemu-img.

The layout follows qemu's docs/interop/qcow2.txt.  An image is written as
header | refcount table | refcount block | L1 table, one 64 KiB cluster each
(the L1 table may take more), with no L2 table: every guest cluster is
unallocated and reads as zeros.  Growing an image only raises its virtual
size and L1 entry count, within the clusters its L1 table already holds.
"""

import os
import struct
import typing

from oslo_utils import units

from common import exception

_MAGIC = b"QFI\xfb"
_VERSION = 3
_HEADER = struct.Struct(">4sIQIIQIIQQIIQQQQII")
_CLUSTER_BITS = 16
_REFCOUNT_ORDER = 4
_REFCOUNT = struct.Struct(">H")
_TABLE_ENTRY = struct.Struct(">Q")
# NOTE(ashlar): qemu refuses L1 tables above 32 MiB, which caps a qcow2
# image with 64 KiB clusters at 2 PiB.
_MAX_L1_BYTES = 32 * units.Mi
# Offset of the size field; crypt_method and l1_size follow it.
_SIZE_OFFSET = 24
_SIZE_FIELDS = struct.Struct(">QII")


class Header(typing.NamedTuple):
    """The qcow2 v3 header fields, in file order."""

    magic: bytes
    version: int
    backing_file_offset: int
    backing_file_size: int
    cluster_bits: int
    size: int
    crypt_method: int
    l1_size: int
    l1_table_offset: int
    refcount_table_offset: int
    refcount_table_clusters: int
    nb_snapshots: int
    snapshots_offset: int
    incompatible_features: int
    compatible_features: int
    autoclear_features: int
    refcount_order: int
    header_length: int


def write(fd: int, size_bytes: int) -> None:
    """Write an empty qcow2 v3 image of ``size_bytes`` virtual bytes."""
    bits = _CLUSTER_BITS
    cluster = 1 << bits
    l1_size = _l1_entries(size_bytes, bits)
    if l1_size * _TABLE_ENTRY.size > _MAX_L1_BYTES:
        raise exception.InvalidInput(
            reason=f"{size_bytes} bytes is too large for a qcow2 volume.")
    reftable, refblock, l1_table = cluster, 2 * cluster, 3 * cluster
    used = 3 + _clusters(l1_size * _TABLE_ENTRY.size, bits)
    header = Header(
        _MAGIC, _VERSION, 0, 0, bits, size_bytes, 0, l1_size,
        l1_table, reftable, 1, 0, 0, 0, 0, 0, _REFCOUNT_ORDER,
        _HEADER.size)
    # NOTE(ashlar): the zeros after the header end the (empty) extension
    # list, and the zeroed L1 table leaves every guest cluster unallocated.
    os.pwrite(fd, _HEADER.pack(*header), 0)
    os.pwrite(fd, _TABLE_ENTRY.pack(refblock), reftable)
    os.pwrite(fd, _REFCOUNT.pack(1) * used, refblock)
    os.ftruncate(fd, used * cluster)


def read_header(fd: int) -> Header:
    """Read and check the header of a qcow2 v3 image.

    :raises VolumeBackendAPIException: The file is not a qcow2 v3 image.
    """
    raw = os.pread(fd, _HEADER.size, 0)
    if len(raw) < _HEADER.size:
        raise exception.VolumeBackendAPIException(
            data="file too short for a qcow2 header")
    header = Header._make(_HEADER.unpack(raw))
    if header.magic != _MAGIC or header.version != _VERSION:
        raise exception.VolumeBackendAPIException(
            data="not a qcow2 v3 image")
    return header


def extend(fd: int, path: str, size_bytes: int) -> None:
    """Raise the virtual size of the open image ``fd`` (``path``, for
    messages), growing the L1 table within its clusters."""
    header = read_header(fd)
    if header.size == size_bytes:
        return
    _check_extend(path, header, size_bytes)
    l1_size = max(header.l1_size,
                  _l1_entries(size_bytes, header.cluster_bits))
    os.pwrite(fd, _SIZE_FIELDS.pack(
        size_bytes, header.crypt_method, l1_size), _SIZE_OFFSET)
    os.fsync(fd)


def _check_extend(path: str, header: Header, size_bytes: int) -> None:
    if header.incompatible_features:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is in use or damaged (incompatible features "
            f"{header.incompatible_features:#x})")
    if header.size > size_bytes:
        raise exception.VolumeBackendAPIException(
            data=f"{path} is {header.size} bytes; refusing to shrink it to "
            f"{size_bytes}")
    l1_bytes = header.l1_size * _TABLE_ENTRY.size
    room = (_clusters(l1_bytes, header.cluster_bits)
            << header.cluster_bits) // _TABLE_ENTRY.size
    if _l1_entries(size_bytes, header.cluster_bits) > room:
        raise exception.VolumeBackendAPIException(
            data=f"{path} cannot grow to {size_bytes} bytes without moving "
            f"its L1 table")


def _l1_entries(size_bytes: int, cluster_bits: int) -> int:
    """Return how many L1 entries map ``size_bytes`` of guest data."""
    cluster = 1 << cluster_bits
    bytes_per_l2_table = cluster * (cluster // _TABLE_ENTRY.size)
    return -(-size_bytes // bytes_per_l2_table)


def _clusters(size_bytes: int, cluster_bits: int) -> int:
    return max(1, -(-size_bytes // (1 << cluster_bits)))
