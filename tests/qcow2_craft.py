"""Guest clusters put into qcow2 images by the spec's offsets
(docs/interop/qcow2.txt), independently of drivers/qcow2.py, for tests of
its reader where no qemu writes them: an L2 table and a data cluster are
appended at the file's end.  Refcounts are not updated (qemu-img check
would count them as errors); the images are only read.
"""

import struct

ZERO = "zero"
COMPRESSED = "compressed"
_ENTRY = struct.Struct(">Q")
_COPIED = 1 << 63


def put_clusters(path, clusters):
    """Set guest clusters of the image at ``path``: ``{guest offset:
    bytes (the cluster's data, padded with zeros) | ZERO | COMPRESSED}``,
    each offset within the cluster it names."""
    with open(path, "r+b") as image:
        head = image.read(104)
        cluster_bits = struct.unpack(">I", head[20:24])[0]
        l1_offset = struct.unpack(">Q", head[40:48])[0]
        cluster = 1 << cluster_bits
        per_table = cluster // 8
        for guest, value in sorted(clusters.items()):
            index = guest >> cluster_bits
            l2_offset = _l2_table(image, l1_offset, index // per_table,
                                  cluster)
            if value == ZERO:
                entry = 1
            elif value == COMPRESSED:
                entry = 1 << 62 | _append(image, b"x", cluster)
            else:
                entry = _COPIED | _append(image, value, cluster)
            image.seek(l2_offset + 8 * (index % per_table))
            image.write(_ENTRY.pack(entry))


def _l2_table(image, l1_offset, l1_index, cluster):
    image.seek(l1_offset + 8 * l1_index)
    entry = _ENTRY.unpack(image.read(8))[0] & 0x00FFFFFFFFFFFE00
    if entry:
        return entry
    entry = _append(image, b"", cluster)
    image.seek(l1_offset + 8 * l1_index)
    image.write(_ENTRY.pack(_COPIED | entry))
    return entry


def _append(image, data, cluster):
    """Append a cluster holding ``data`` at the (cluster-aligned) end."""
    end = image.seek(0, 2)
    offset = -(-end // cluster) * cluster
    image.seek(offset)
    image.write(data.ljust(cluster, b"\0"))
    return offset
