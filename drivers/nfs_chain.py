"""qcow2 snapshot chains of the NFS backend, as Cinder's RemoteFS drivers
keep them (cinder/volume/drivers/remotefs.py), through libnfs.

A qcow2 volume starts as ``volume-<id>.qcow2``.  A snapshot freezes the
volume's active file and puts an empty overlay ``volume-<id>.<snapshot
id>`` on it (backing file named relatively, its format given), which
becomes the active file: the snapshot's data is the backing file of the
overlay its id names.  ``volume-<id>.info`` (JSON, as Cinder's) names the
active file and each snapshot's overlay::

    {"active": "volume-V.S2", "S1": "volume-V.S1", "S2": "volume-V.S2"}

It is replaced in one rename, and always last: a crash leaves the old
chain in force, plus at most an overlay no .info names (removed by the
retry, or by the volume's delete).  A snapshot's delete merges its
overlay into the overlay's backing file (:func:`merge`, a fresh image
renamed over it), then rebases the overlay's child or makes the backing
file active.  Each step leaves every file of the chain reading as before.
"""

import contextlib
import json
import tempfile
from collections.abc import Iterator

from oslo_log import log as logging

from common import exception
from common import libnfs
from drivers import nfs_files
from drivers import qcow2

LOG = logging.getLogger(__name__)

#: Files a chain may have: more is taken for a loop.
MAX_DEPTH = 1000
ACTIVE = nfs_files.ACTIVE
info_name = nfs_files.info_name
read_info = nfs_files.read_info


def overlay_name(volume_id: str, snapshot_id: str) -> str:
    """``volume-<volume id>.<snapshot id>``.

    :raises InvalidInput: an id cannot be part of a file name.
    """
    nfs_files.file_name(volume_id, "qcow2")
    nfs_files.file_name(snapshot_id, "qcow2", "snapshot")
    return "volume-%s.%s" % (volume_id, snapshot_id)


def write_info(nfs: libnfs.Share, volume_id: str,
               info: dict[str, str]) -> None:
    """Replace the volume's .info in one rename (removed when ``info``
    names no snapshot: the volume is its base file again)."""
    if set(info) <= {ACTIVE} and info.get(ACTIVE) == nfs_files.file_name(
            volume_id, "qcow2"):
        with contextlib.suppress(libnfs.Error):
            nfs.unlink("/" + info_name(volume_id))
        return
    data = json.dumps(info, indent=1, sort_keys=True).encode()
    nfs_files.write_atomically(
        nfs, info_name(volume_id),
        lambda out, _tmp: nfs_files.copy_local(data, out), replace=True)


def active_name(nfs: libnfs.Share, volume_id: str, fmt: str) -> str:
    """The file the volume's data is written to: the .info's active file,
    else its base file."""
    if fmt != "qcow2":
        return nfs_files.file_name(volume_id, fmt)
    return read_info(nfs, volume_id).get(
        ACTIVE, nfs_files.file_name(volume_id, fmt))


def write_overlay(nfs: libnfs.Share, name: str, backing: str,
                  size: int) -> None:
    """An empty qcow2 overlay ``name`` of ``size`` virtual bytes on the
    qcow2 file ``backing`` (same folder), put in place in one rename (an
    overlay of that name no .info names is a crashed try's)."""
    def fill(out: libnfs.File, _tmp: str) -> None:
        with tempfile.TemporaryFile() as local:
            qcow2.write(local.fileno(), size, qcow2.Backing(backing, "qcow2"))
            local.seek(0)
            nfs_files.copy_local(local.read(), out)
    nfs_files.write_atomically(nfs, name, fill, replace=True)


@contextlib.contextmanager
def layer(nfs: libnfs.Share, name: str) -> Iterator[qcow2.Layer]:
    """One qcow2 file of the share, opened read only."""
    with nfs.open("/" + name, read_only=True) as image:
        yield qcow2.Layer(image.pread, name)


@contextlib.contextmanager
def open_chain(nfs: libnfs.Share, top: str) -> Iterator[qcow2.Chain]:
    """The qcow2 file ``top`` and its backing files, read as one disk.

    :raises VolumeBackendAPIException: a backing file is not a qcow2 file
        in the same folder, or the chain loops.
    """
    with contextlib.ExitStack() as stack:
        layers: list[qcow2.Layer] = []
        name: str | None = top
        while name is not None:
            if len(layers) >= MAX_DEPTH or not _plain(name):
                raise exception.VolumeBackendAPIException(
                    data="the qcow2 chain of %s reaches %r" % (top, name))
            current = stack.enter_context(layer(nfs, name))
            layers.append(current)
            name = _backing_of(current)
        yield qcow2.Chain(layers)


def _backing_of(current: qcow2.Layer) -> str | None:
    if current.backing is None:
        return None
    if current.backing.fmt not in ("qcow2", ""):
        raise exception.VolumeBackendAPIException(
            data="%s is backed by a %s file, which Ashlar does not read"
            % (current.name, current.backing.fmt))
    return current.backing.name


def flatten(nfs: libnfs.Share, top: str, name: str, size: int) -> None:
    """A new qcow2 image ``name`` of ``size`` virtual bytes, without
    backing file, holding what the chain of ``top`` reads (every layer
    merged, :func:`drivers.qcow2.write_merged`), linked into place (an
    existing ``name`` is not overwritten)."""
    with open_chain(nfs, top) as chain:
        nfs_files.write_atomically(
            nfs, name, lambda out, _tmp: qcow2.write_merged(
                out, chain.layers, None, size))


def backing_name(nfs: libnfs.Share, name: str) -> str | None:
    """The backing file name in ``name``'s header, None when it has none."""
    with layer(nfs, name) as current:
        return _backing_of(current)


def _plain(name: str) -> bool:
    return nfs_files.plain(name)


# -- snapshots ------------------------------------------------------------
def snapshot(nfs: libnfs.Share, volume_id: str, snapshot_id: str) -> str:
    """Freeze the volume's active file under a new empty overlay, the
    active file from now on; returns the overlay's name.

    :raises VolumeBackendAPIException: the snapshot exists.
    """
    info = read_info(nfs, volume_id)
    if snapshot_id in info:
        raise exception.VolumeBackendAPIException(
            data="snapshot %s already exists" % snapshot_id)
    active = info.get(ACTIVE, nfs_files.file_name(volume_id, "qcow2"))
    with layer(nfs, active) as top:
        size = top.size
    overlay = overlay_name(volume_id, snapshot_id)
    write_overlay(nfs, overlay, active, size)
    write_info(nfs, volume_id, dict(info, **{ACTIVE: overlay,
                                             snapshot_id: overlay}))
    return overlay


def snapshot_file(nfs: libnfs.Share, volume_id: str,
                  snapshot_id: str) -> str | None:
    """The file that holds the snapshot's data (the backing file of its
    overlay), None when the volume's .info does not name it."""
    overlay = read_info(nfs, volume_id).get(snapshot_id)
    return None if overlay is None else backing_name(nfs, overlay)


def revert(nfs: libnfs.Share, volume_id: str, snapshot_id: str,
           size: int) -> None:
    """Make the snapshot's overlay, which must be the active file, empty
    again (of ``size`` virtual bytes), as Cinder reverts: in one rename.

    :raises InvalidSnapshot: it is not the volume's latest snapshot.
    """
    info = read_info(nfs, volume_id)
    overlay = info.get(snapshot_id)
    if overlay is None or overlay != info.get(ACTIVE):
        raise exception.InvalidSnapshot(
            reason="volume %s can be reverted only to its latest snapshot "
            "(its active file is %s)" % (volume_id, info.get(ACTIVE)))
    backing = backing_name(nfs, overlay)
    if backing is None:
        raise exception.VolumeBackendAPIException(
            data="overlay %s has no backing file" % overlay)
    write_overlay(nfs, overlay, backing, size)


def delete_snapshot(nfs: libnfs.Share, volume_id: str, snapshot_id: str,
                    attached: bool = False) -> None:
    """Take the snapshot's overlay out of the chain, as Cinder's offline
    delete: what it holds is first merged into its backing file (a fresh
    image renamed over it, :func:`merge`); then its child, or the volume,
    reads that file directly.  The .info changes last; the overlay's file
    goes after.

    :raises InvalidVolume: the volume is ``attached``: its hypervisor
        holds the chain's files open (Cinder asks Nova to change it).
    """
    info = read_info(nfs, volume_id)
    overlay = info.get(snapshot_id)
    if overlay is None:
        _remove_orphan(nfs, volume_id, overlay_name(volume_id, snapshot_id))
        return
    if attached:
        raise exception.InvalidVolume(
            reason="qcow2 volume %s is attached: its hypervisor holds the "
            "snapshot chain open, and Ashlar cannot ask it to change it "
            "(Nova's assisted snapshot delete); detach it first" % volume_id)
    with layer(nfs, overlay) as dropped:
        empty, size, backing = (dropped.is_empty(), dropped.size,
                                _backing_of(dropped))
    if backing is None:
        raise exception.VolumeBackendAPIException(
            data="overlay %s has no backing file" % overlay)
    if not empty:
        merge(nfs, overlay, backing)
    if info.get(ACTIVE) == overlay:
        _grow(nfs, backing, size)
        info[ACTIVE] = backing
    else:
        child = _child_of(nfs, info, overlay)
        if child is not None:  # else rebased by a try that crashed
            rebase(nfs, child, backing)
    write_info(nfs, volume_id, {key: name for key, name in info.items()
                                if key != snapshot_id})
    nfs.unlink("/" + overlay)


def merge(nfs: libnfs.Share, top: str, below: str) -> None:
    """Make ``below`` hold what ``top``, its overlay, reads from both
    (qemu-img commit): a fresh image of both layers
    (:func:`drivers.qcow2.write_merged`), backed by ``below``'s backing
    file, renamed over it.  ``top`` reads the same before and after (its
    own clusters hide ``below``'s), so a crash at any point leaves the
    chain whole, and a retry merges again."""
    with layer(nfs, top) as upper, layer(nfs, below) as lower:
        backing = lower.backing
        if backing is not None and not backing.fmt:
            backing = backing._replace(fmt="qcow2")
        nfs_files.write_atomically(
            nfs, below, lambda out, _tmp: qcow2.write_merged(
                out, [upper, lower], backing), replace=True)
    LOG.info("Merged qcow2 overlay %(top)s into %(below)s",
             {"top": top, "below": below})


def _child_of(nfs: libnfs.Share, info: dict[str, str],
              parent: str) -> str | None:
    """The file of the chain backed by ``parent``, if any."""
    for name in set(info.values()) - {parent}:
        if backing_name(nfs, name) == parent:
            return name
    return None


def _grow(nfs: libnfs.Share, name: str, size: int) -> None:
    """Raise ``name``'s virtual size to ``size`` (an overlay above it was
    extended)."""
    with layer(nfs, name) as below:
        if below.size >= size:
            return
    with nfs.open("/" + name) as image:
        nfs_files.extend_qcow2(image, size)


def rebase(nfs: libnfs.Share, name: str, backing: str) -> None:
    """Point the overlay ``name`` at ``backing`` (qemu-img rebase -u): its
    header cluster rewritten in one write."""
    with nfs.open("/" + name) as image:
        head = qcow2.read_fully(image.pread, 0, 1 << 16)
        head = head[:1 << qcow2.parse_header(head).cluster_bits]
        image.pwrite(0, qcow2.rebased_header(head, qcow2.Backing(
            backing, "qcow2")))
        image.fsync()


def _remove_orphan(nfs: libnfs.Share, volume_id: str, name: str) -> None:
    """Remove an overlay no .info names (a crashed create's or delete's)
    unless a file of the chain is backed by it."""
    if not nfs.exists("/" + name):
        return
    info = read_info(nfs, volume_id)
    files = set(info.values()) | {nfs_files.file_name(volume_id, "qcow2")}
    if name in files or any(backing_name(nfs, other) == name
                            for other in files if nfs.exists("/" + other)):
        return
    with contextlib.suppress(libnfs.Error):
        nfs.unlink("/" + name)


def volume_chain_files(nfs: libnfs.Share, volume_id: str) -> list[str]:
    """Every file of the volume but its base file: .info, overlays."""
    prefix = "volume-%s." % volume_id
    return [name for name in nfs.listdir("/")
            if name.startswith(prefix)
            and not nfs_files.NAME_RE.match(name)]
