"""qcow2 v3 images written, grown and read without qemu-img.

The layout follows qemu's docs/interop/qcow2.txt.  An image is written as
header | refcount table | refcount block | L1 table, one 64 KiB cluster each
(the L1 table may take more), with no L2 table: every guest cluster is
unallocated and reads as zeros, or, in an overlay (``backing``), as its
backing file's.  An overlay's header cluster also holds the backing file
format extension and the backing file's name (relative, as Cinder's
RemoteFS drivers write it).  Growing an image only raises its virtual
size and L1 entry count, within the clusters its L1 table already holds.

:class:`Layer` maps a guest offset through one image's L1 and L2 tables
(data, v3 zero flag, or unallocated: the backing file's), :class:`Chain`
reads through an overlay and its backing files.  Compressed clusters,
encryption, external data files and extended L2 entries are refused.
"""

import os
import struct
import typing
from collections.abc import Callable, Iterator

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
_EXTENSION = struct.Struct(">II")
#: Header extension: the backing file's format name.
_EXT_BACKING_FORMAT = 0xE2792ACA
#: qemu reads backing file names of at most 1023 bytes.
_MAX_BACKING_NAME = 1023
#: Incompatible feature bits a reader may ignore: dirty (refcounts may be
#: stale; mappings are right) and the compression type (compressed
#: clusters are refused anyway).
_READABLE_INCOMPATIBLE = 0b1001
_L1_OFFSET_MASK = 0x00FFFFFFFFFFFE00
_L2_OFFSET_MASK = 0x00FFFFFFFFFFFE00
_L2_COMPRESSED = 1 << 62
_L2_ZERO = 1
#: An L1 or L2 entry's flag: the cluster's refcount is exactly one.
_COPIED = 1 << 63
#: Pieces a :class:`Layer` maps a guest cluster to.
DATA, ZERO, UNALLOCATED = "data", "zero", "unallocated"
#: Reads ``length`` bytes at an offset of an image (short only at its end).
Pread = Callable[[int, int], bytes]


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


class Backing(typing.NamedTuple):
    """An overlay's backing file: its name and format."""

    name: str
    fmt: str


def write(fd: int, size_bytes: int, backing: Backing | None = None) -> None:
    """Write an empty qcow2 v3 image of ``size_bytes`` virtual bytes; an
    overlay of ``backing`` when given."""
    bits = _CLUSTER_BITS
    cluster = 1 << bits
    l1_size = _l1_entries(size_bytes, bits)
    if l1_size * _TABLE_ENTRY.size > _MAX_L1_BYTES:
        raise exception.InvalidInput(
            reason=f"{size_bytes} bytes is too large for a qcow2 volume.")
    reftable, refblock, l1_table = cluster, 2 * cluster, 3 * cluster
    used = 3 + _clusters(l1_size * _TABLE_ENTRY.size, bits)
    extensions, name = _backing_fields(backing)
    name_offset = _HEADER.size + len(extensions) if name else 0
    header = Header(
        _MAGIC, _VERSION, name_offset, len(name), bits, size_bytes, 0,
        l1_size, l1_table, reftable, 1, 0, 0, 0, 0, 0, _REFCOUNT_ORDER,
        _HEADER.size)
    # NOTE(ashlar): the zeros after the extensions end their list, and the
    # zeroed L1 table leaves every guest cluster unallocated.
    os.pwrite(fd, _HEADER.pack(*header) + extensions + name, 0)
    os.pwrite(fd, _TABLE_ENTRY.pack(refblock), reftable)
    os.pwrite(fd, _REFCOUNT.pack(1) * used, refblock)
    os.ftruncate(fd, used * cluster)


def _backing_fields(backing: Backing | None) -> tuple[bytes, bytes]:
    """The header extensions (the backing format's, then the end) and the
    backing file name to write after the header."""
    if backing is None:
        return b"", b""
    name, fmt = backing.name.encode(), backing.fmt.encode()
    if not name or len(name) > _MAX_BACKING_NAME or not fmt:
        raise exception.InvalidInput(
            reason=f"{backing.name!r} cannot be a qcow2 backing file name.")
    padded = fmt + bytes(-len(fmt) % 8)
    extensions = (_EXTENSION.pack(_EXT_BACKING_FORMAT, len(fmt)) + padded
                  + _EXTENSION.pack(0, 0))
    return extensions, name


def rebased_header(head: bytes, backing: Backing) -> bytes:
    """The header cluster ``head`` of an image, backed by ``backing`` now
    (its other header extensions kept), as long as ``head``.

    :raises VolumeBackendAPIException: it would not fit in the cluster.
    """
    header = parse_header(head)
    kept = b""
    offset = header.header_length
    while offset + _EXTENSION.size <= len(head):
        kind, length = _EXTENSION.unpack_from(head, offset)
        size = _EXTENSION.size + length + (-length % 8)
        if kind == 0:
            break
        if kind != _EXT_BACKING_FORMAT:
            kept += head[offset:offset + size]
        offset += size
    extensions, name = _backing_fields(backing)
    extensions = kept + extensions
    new = header._replace(
        backing_file_offset=header.header_length + len(extensions),
        backing_file_size=len(name))
    body = (_HEADER.pack(*new) + head[_HEADER.size:header.header_length]
            + extensions + name)
    if len(body) > len(head):
        raise exception.VolumeBackendAPIException(
            data="the backing file name does not fit in the header")
    return body + bytes(len(head) - len(body))


def read_header(fd: int) -> Header:
    """Read and check the header of a qcow2 v3 image.

    :raises VolumeBackendAPIException: The file is not a qcow2 v3 image.
    """
    return parse_header(os.pread(fd, _HEADER.size, 0))


def parse_header(raw: bytes) -> Header:
    """Check and parse the first bytes of a qcow2 v3 image.

    :raises VolumeBackendAPIException: They are no qcow2 v3 header.
    """
    raw = raw[:_HEADER.size]
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


def read_fully(pread: Pread, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset``, the file's end padded with zeros."""
    data = b""
    while len(data) < length:
        chunk = pread(offset + len(data), length - len(data))
        if not chunk:
            return data + bytes(length - len(data))
        data += chunk
    return data


class Layer:
    """One qcow2 v3 image's own clusters, read through ``pread``.

    :raises VolumeBackendAPIException: ``name`` is no qcow2 v3 image this
        reader maps (encrypted, external data file, extended L2 entries,
        corrupt).
    """

    def __init__(self, pread: Pread, name: str) -> None:
        self.name, self._pread = name, pread
        head = read_fully(pread, 0, 1 << _CLUSTER_BITS)
        try:
            self.header = parse_header(head)
        except exception.VolumeBackendAPIException as exc:
            raise exception.VolumeBackendAPIException(
                data=f"{name}: {exc.msg}") from exc
        self._check()
        self.cluster = 1 << self.header.cluster_bits
        self.backing = _parse_backing(head, self.header, name)
        l1_bytes = read_fully(pread, self.header.l1_table_offset,
                              self.header.l1_size * _TABLE_ENTRY.size)
        self._l1 = [entry & _L1_OFFSET_MASK for (entry,) in
                    _TABLE_ENTRY.iter_unpack(l1_bytes)]
        self._l2: dict[int, list[int]] = {}

    @property
    def size(self) -> int:
        """The image's virtual size in bytes."""
        return self.header.size

    def _check(self) -> None:
        header = self.header
        unreadable = header.incompatible_features & ~_READABLE_INCOMPATIBLE
        if header.crypt_method or unreadable:
            raise exception.VolumeBackendAPIException(
                data=f"{self.name}: encrypted or with incompatible features "
                f"{header.incompatible_features:#x}; not read without qemu")
        if not 9 <= header.cluster_bits <= 21:
            raise exception.VolumeBackendAPIException(
                data=f"{self.name}: cluster_bits {header.cluster_bits}")

    def _l2_table(self, index: int) -> list[int] | None:
        offset = self._l1[index] if index < len(self._l1) else 0
        if not offset:
            return None
        if offset not in self._l2:
            if len(self._l2) >= 64:
                self._l2.clear()
            raw = read_fully(self._pread, offset, self.cluster)
            self._l2[offset] = [e for (e,) in _TABLE_ENTRY.iter_unpack(raw)]
        return self._l2[offset]

    def map(self, guest: int) -> tuple[str, int]:
        """What the guest cluster holding ``guest`` is in this image:
        (:data:`DATA`, its host offset), (:data:`ZERO`, 0) or
        (:data:`UNALLOCATED`, 0), the backing file's.

        :raises VolumeBackendAPIException: the cluster is compressed.
        """
        per_table = self.cluster // _TABLE_ENTRY.size
        cluster_index = guest >> self.header.cluster_bits
        table = self._l2_table(cluster_index // per_table)
        return self.decode(table[cluster_index % per_table] if table else 0,
                           guest)

    def decode(self, entry: int, guest: int) -> tuple[str, int]:
        """What the L2 ``entry`` of the cluster at ``guest`` maps it to,
        as :meth:`map` says."""
        if entry & _L2_COMPRESSED:
            raise exception.VolumeBackendAPIException(
                data=f"{self.name} has compressed clusters (guest offset "
                f"{guest}), which Ashlar does not read; qemu-img convert "
                "can uncompress the image")
        if entry & _L2_ZERO:
            return ZERO, 0
        if entry & _L2_OFFSET_MASK:
            return DATA, entry & _L2_OFFSET_MASK
        return UNALLOCATED, 0

    def is_empty(self) -> bool:
        """Whether every guest cluster is unallocated (nothing was written
        to this image)."""
        for index in range(len(self._l1)):
            table = self._l2_table(index)
            if table and any(table):
                return False
        return True

    def allocated(self) -> dict[int, tuple[str, int]]:
        """Every guest cluster this image maps itself, by index: (
        :data:`DATA`, host offset) or (:data:`ZERO`, 0).

        :raises VolumeBackendAPIException: a cluster is compressed.
        """
        found = {}
        per_table = self.cluster // _TABLE_ENTRY.size
        for index in range(len(self._l1)):
            for slot, entry in enumerate(self._l2_table(index) or ()):
                if entry:
                    guest = (index * per_table + slot) * self.cluster
                    kind, host = self.map(guest)
                    if kind != UNALLOCATED:
                        found[guest // self.cluster] = (kind, host)
        return found

    def read_cluster(self, host: int, start: int, length: int) -> bytes:
        """``length`` bytes from ``start`` within the data cluster at host
        offset ``host``."""
        return read_fully(self._pread, host + start, length)


def _parse_backing(head: bytes, header: Header, name: str) -> Backing | None:
    """The backing file name and format of an image's header cluster."""
    if not header.backing_file_offset:
        return None
    end = header.backing_file_offset + header.backing_file_size
    if header.backing_file_size > _MAX_BACKING_NAME or end > len(head):
        raise exception.VolumeBackendAPIException(
            data=f"{name}: its backing file name is out of bounds")
    backing = head[header.backing_file_offset:end].decode(errors="replace")
    fmt = ""
    offset = header.header_length
    while offset + _EXTENSION.size <= len(head):
        kind, length = _EXTENSION.unpack_from(head, offset)
        if kind == 0:
            break
        offset += _EXTENSION.size
        if kind == _EXT_BACKING_FORMAT:
            fmt = head[offset:offset + length].decode(errors="replace")
        offset += length + (-length % 8)
    return Backing(backing, fmt)


class Chain:
    """An overlay and its backing files, top first, read as one disk of
    the top image's virtual size."""

    def __init__(self, layers: list[Layer]) -> None:
        self.layers = layers
        self._step = min(layer.cluster for layer in layers)

    @property
    def size(self) -> int:
        return self.layers[0].size

    def read(self, offset: int, length: int) -> bytes:
        """The guest's bytes at ``offset`` (zeros past the end)."""
        out: bytearray | None = None  # made at the first data cluster
        done = 0
        while done < length:
            guest = offset + done
            piece = min(self._step - guest % self._step, length - done)
            data = self._read_piece(guest, piece)
            if data is not None:
                out = bytearray(length) if out is None else out
                out[done:done + piece] = data
            done += piece
        return bytes(length) if out is None else bytes(out)

    def _read_piece(self, guest: int, length: int) -> bytes | None:
        """``length`` bytes at ``guest``, within one cluster of every
        layer; None when they read as zeros."""
        for layer in self.layers:
            if guest >= layer.size:
                return None  # past a backing file's end: zeros
            kind, host = layer.map(guest)
            if kind == DATA:
                return layer.read_cluster(host, guest % layer.cluster,
                                          length)
            if kind == ZERO:
                return None
        return None


class Output(typing.Protocol):
    """Where :func:`write_merged` writes (a ``libnfs.File``)."""

    def pwrite(self, offset: int, data: bytes) -> int: ...

    def truncate(self, length: int) -> None: ...


class _Layout(typing.NamedTuple):
    """Cluster numbers of a merged image's parts, in file order."""

    reftable: int
    l1: int
    refblocks: int
    l2: int
    data: int
    end: int


def _write_all(out: Output, offset: int, data: bytes) -> None:
    """Write ``data`` at ``offset`` whole, 1 MiB at a time (a write over
    NFS may be short)."""
    view = memoryview(data)
    while view:
        written = out.pwrite(offset, bytes(view[:units.Mi]))
        if written <= 0:
            raise exception.VolumeBackendAPIException(
                data=f"a write at {offset} wrote nothing")
        offset, view = offset + written, view[written:]


def _layout(l1_clusters: int, tables: int, data: int) -> _Layout:
    """Place header | refcount table | L1 | refcount blocks | L2 tables |
    data, with enough refcount blocks (and table) for every cluster."""
    per_block = (1 << _CLUSTER_BITS) * 8 // (1 << _REFCOUNT_ORDER)
    blocks = reftable = 1
    while True:
        end = 1 + reftable + l1_clusters + blocks + tables + data
        need_blocks = -(-end // per_block)
        need_table = _clusters(need_blocks * _TABLE_ENTRY.size, _CLUSTER_BITS)
        if (need_blocks, need_table) == (blocks, reftable):
            l1 = 1 + reftable
            return _Layout(1, l1, l1 + l1_clusters, l1 + l1_clusters + blocks,
                           end - data, end)
        blocks, reftable = need_blocks, need_table


def write_merged(out: Output, layers: list[Layer], backing: Backing | None,
                 size: int | None = None) -> None:
    """Write into the empty ``out`` a fresh qcow2 v3 image holding what
    the chain ``layers`` (top first) maps itself, each cluster from the
    top layer that has it (what qemu-img commit of the upper layers into
    the lowest makes), of ``size`` virtual bytes (the top's by default),
    backed by ``backing``; every cluster's refcount 1.  It goes L2 table
    by L2 table, twice (to count, then to write).

    :raises VolumeBackendAPIException: an image has other than 64 KiB
        clusters, incompatible features, or compressed clusters, or is
        larger than the one above it.
    """
    size = layers[0].size if size is None else size
    _check_mergeable(layers, size)
    cluster = 1 << _CLUSTER_BITS
    l1_size = _l1_entries(size, _CLUSTER_BITS)
    tables, data = [], 0
    for table in range(l1_size):
        pieces = _merged_table(layers, table)
        if pieces is not None:
            tables.append(table)
            data += sum(1 for kind, _, _ in pieces if kind == DATA)
    at = _layout(_clusters(l1_size * _TABLE_ENTRY.size, _CLUSTER_BITS),
                 len(tables), data)
    _write_metadata(out, size, backing, at, l1_size, tables)
    next_data = at.data * cluster
    for n, table in enumerate(tables):
        entries, copies = [], []
        for kind, source, host in _merged_table(layers, table) or ():
            if kind == DATA and source is not None:
                entries.append(next_data | _COPIED)
                copies.append((next_data, source, host))
                next_data += cluster
            else:
                entries.append(_L2_ZERO if kind == ZERO else 0)
        _write_all(out, (at.l2 + n) * cluster,
                   b"".join(_TABLE_ENTRY.pack(e) for e in entries))
        for dest, source, host, count in _runs(copies):
            _write_all(out, dest, source.read_cluster(host, 0,
                                                      count * cluster))
    out.truncate(at.end * cluster)


def _check_mergeable(layers: list[Layer], size: int) -> None:
    above = size
    for image in layers:
        if (image.header.cluster_bits != _CLUSTER_BITS
                or image.header.incompatible_features
                or image.size > above):
            raise exception.VolumeBackendAPIException(
                data=f"{image.name}: only clean images of 64 KiB clusters, "
                "each no larger than the one above, are merged without qemu")
        above = image.size


Piece = tuple[str, "Layer | None", int]


def _merged_table(layers: list[Layer], table: int) -> list[Piece] | None:
    """What each guest cluster of L1 entry ``table`` is in the merged
    image: (kind, source layer, host offset); None when none is
    allocated."""
    cluster = 1 << _CLUSTER_BITS
    per_table = cluster // _TABLE_ENTRY.size
    l2s = [layer._l2_table(table) for layer in layers]
    if not any(l2s):
        return None
    pieces: list[Piece] = [(UNALLOCATED, None, 0)] * per_table
    found = False
    for slot in range(per_table):
        guest = (table * per_table + slot) * cluster
        for layer, l2 in zip(layers, l2s, strict=True):
            if guest >= layer.size:
                break  # zeros; as the merged image's backing file reads
            kind, host = layer.decode(l2[slot] if l2 else 0, guest)
            if kind != UNALLOCATED:
                pieces[slot] = (kind, layer, host)
                found = True
                break
    return pieces if found else None


def _runs(copies: list[tuple[int, Layer, int]]
          ) -> Iterator[tuple[int, Layer, int, int]]:
    """``copies`` (destination, source, host offset), one a cluster, in
    runs of up to 16 that follow each other in the source and in the
    merged image: (destination, source, host offset, count)."""
    run: list[typing.Any] = []
    for dest, source, host in copies:
        if run and (source is run[1] and run[3] < 16
                    and host == run[2] + run[3] * source.cluster
                    and dest == run[0] + run[3] * source.cluster):
            run[3] += 1
            continue
        if run:
            yield run[0], run[1], run[2], run[3]
        run = [dest, source, host, 1]
    if run:
        yield run[0], run[1], run[2], run[3]


def _write_metadata(out: Output, size: int, backing: Backing | None,
                    at: _Layout, l1_size: int, tables: list[int]) -> None:
    """The header, refcount table and blocks (every cluster used once)
    and L1 table of a merged image laid out as ``at``."""
    cluster = 1 << _CLUSTER_BITS
    extensions, name = _backing_fields(backing)
    header = Header(
        _MAGIC, _VERSION, _HEADER.size + len(extensions) if name else 0,
        len(name), _CLUSTER_BITS, size, 0, l1_size, at.l1 * cluster,
        at.reftable * cluster, at.l1 - at.reftable, 0, 0, 0, 0, 0,
        _REFCOUNT_ORDER, _HEADER.size)
    _write_all(out, 0, (_HEADER.pack(*header) + extensions + name).ljust(
        cluster, b"\0"))
    blocks = at.l2 - at.refblocks
    _write_all(out, at.reftable * cluster, b"".join(
        _TABLE_ENTRY.pack((at.refblocks + n) * cluster)
        for n in range(blocks)))
    _write_all(out, at.refblocks * cluster, _REFCOUNT.pack(1) * at.end)
    l1 = [0] * l1_size
    for n, table in enumerate(tables):
        l1[table] = (at.l2 + n) * cluster | _COPIED
    _write_all(out, at.l1 * cluster,
               b"".join(_TABLE_ENTRY.pack(e) for e in l1))
