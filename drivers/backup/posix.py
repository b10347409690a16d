"""Backups as files in a directory (Cinder's POSIX driver, simplified).

A backup is a folder ``<backup_posix_path>/<container>/<backup id>/``:
chunks of ``backup_file_size`` bytes of the volume, each compressed
(zlib) in a file of its own (``chunk-00000``, ...), and ``metadata.json``,
written last (a folder without it is a backup that did not finish):

    {"version": 1, "backup_id": ..., "parent_id": ..., "size_bytes": ...,
     "chunk_size": ..., "compression": "zlib",
     "chunks": [{"offset": 0, "length": 33554432,
                 "sha256": "<of the uncompressed bytes>",
                 "object": "<backup id>/chunk-00000"}, ...]}

``object`` is relative to the container, so an incremental backup names
the objects of its parent (and their parents) for the chunks whose
checksum did not change, and writes only the others; ``null`` is a chunk
of zeros, stored nowhere.  A restore reads one metadata file, checks
every chunk's checksum before it writes it, and refuses a mismatch.
A parent is deleted only once no backup depends on it
(``backups.num_dependent_backups``), so the objects it lends stay.
"""

import contextlib
import json
import os
import re
import zlib
from typing import Any
from typing import Callable

from oslo_config import cfg

from common import exception
from drivers.backup.base import BackupRef
from drivers.backup.base import Readable
from drivers.backup.base import Writable
from drivers.backup.base import sha256
from drivers.sparse_copy import is_zero
from drivers.sparse_copy import zeros

__all__ = ["BackupRef", "Readable", "Writable", "PosixBackupDriver"]

METADATA = "metadata.json"
VERSION = 1
#: Containers and backup ids are single path components.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,254}$")


class BackupChecksumMismatch(exception.InvalidBackup):
    """A chunk read back does not have the checksum it was stored with."""


class BackupCancelled(exception.InvalidBackup):
    """The backup was deleted while it was being written."""


def check_name(kind: str, name: str) -> None:
    """:raises InvalidInput: ``name`` is not one path component."""
    if not _NAME_RE.match(name) or name in (".", ".."):
        raise exception.InvalidInput(
            reason="%s %r must be letters, digits, '_', '.' and '-'."
            % (kind, name))


class PosixBackupDriver:
    """Chunked, compressed, checksummed backups in a directory."""

    SERVICE = "drivers.backup.posix"
    SNAPSHOTS_SOURCE = False

    def __init__(self, root: str, chunk_size: int,
                 compression: str = "zlib") -> None:
        self.root = root
        self.chunk_size = chunk_size
        self.compression = compression

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> "PosixBackupDriver":
        return cls(conf.backup_posix_path, conf.backup_file_size,
                   conf.backup_compression_algorithm)

    # -- paths and metadata --------------------------------------------------
    def _folder(self, ref: BackupRef) -> str:
        check_name("Container", ref.container)
        check_name("Backup id", ref.id)
        return os.path.join(self.root, ref.container, ref.id)

    def read_metadata(self, ref: BackupRef) -> dict[str, Any]:
        """:raises InvalidBackup: the backup has no (readable) metadata."""
        path = os.path.join(self._folder(ref), METADATA)
        try:
            with open(path, encoding="utf-8") as meta:
                found: dict[str, Any] = json.load(meta)
        except (OSError, ValueError) as exc:
            raise exception.InvalidBackup(
                reason="Backup %s has no readable metadata: %s"
                % (ref.id, exc)) from exc
        return found

    def _write_file(self, path: str, data: bytes) -> None:
        partial = path + ".part"
        with open(partial, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)

    # -- backup ----------------------------------------------------------------
    def backup(self, ref: BackupRef, source: Readable, size_bytes: int,
               parent: BackupRef | None = None,
               cancelled: Callable[[], bool] | None = None) -> dict[str, Any]:
        """Back up ``size_bytes`` of ``source``; with ``parent``, store only
        the chunks whose checksum differs from the parent's.  ``cancelled``
        is asked before each chunk (Cinder's chunked driver asks whether
        the backup is being deleted).

        :returns: the metadata written, with ``object_count``: the chunk
            files this backup wrote.
        :raises BackupCancelled: ``cancelled`` said so (no metadata is
            written: the folder is no backup).
        """
        known = self._parent_chunks(parent)
        folder = self._folder(ref)
        os.makedirs(folder, exist_ok=True)
        chunks, written = [], 0
        for index, offset in enumerate(range(0, size_bytes, self.chunk_size)):
            if cancelled is not None and cancelled():
                raise BackupCancelled(reason="Backup %s was deleted while "
                                      "it was written." % ref.id)
            data = source.read(offset, min(self.chunk_size,
                                           size_bytes - offset))
            entry = {"offset": offset, "length": len(data),
                     "sha256": sha256(data),
                     "object": None}
            same = known.get(offset)
            if same is not None and same["sha256"] == entry["sha256"] \
                    and same["length"] == entry["length"]:
                entry["object"] = same["object"]
            elif not is_zero(data):
                name = "chunk-%05d" % index
                self._write_file(os.path.join(folder, name),
                                 self._compress(data))
                entry["object"] = "%s/%s" % (ref.id, name)
                written += 1
            chunks.append(entry)
        metadata = {"version": VERSION, "backup_id": ref.id,
                    "parent_id": parent.id if parent else None,
                    "size_bytes": size_bytes, "chunk_size": self.chunk_size,
                    "compression": self.compression, "chunks": chunks,
                    "object_count": written}
        self._write_file(os.path.join(folder, METADATA),
                         json.dumps(metadata).encode())
        return metadata

    def _parent_chunks(self, parent: BackupRef | None
                       ) -> dict[int, dict[str, Any]]:
        if parent is None:
            return {}
        return {chunk["offset"]: chunk
                for chunk in self.read_metadata(parent)["chunks"]}

    def _compress(self, data: bytes) -> bytes:
        return zlib.compress(data, 6) if self.compression == "zlib" else data

    # -- restore ---------------------------------------------------------------
    def restore(self, ref: BackupRef, target: Writable) -> int:
        """Write the backup's bytes to ``target``.

        :returns: the bytes written.
        :raises BackupChecksumMismatch: a chunk does not match its
            checksum (nothing after it is written).
        """
        metadata = self.read_metadata(ref)
        container = os.path.join(self.root, ref.container)
        for chunk in metadata["chunks"]:
            data = self._chunk(container, chunk, metadata["compression"])
            if sha256(data) != chunk["sha256"] or \
                    len(data) != chunk["length"]:
                raise BackupChecksumMismatch(
                    reason="Backup %s: the chunk at offset %d does not "
                    "match its checksum." % (ref.id, chunk["offset"]))
            target.write(chunk["offset"], data)
        return int(metadata["size_bytes"])

    def _chunk(self, container: str, chunk: dict[str, Any],
               compression: str) -> bytes:
        if chunk["object"] is None:
            return zeros(chunk["length"])
        backup_id, name = chunk["object"].split("/", 1)
        check_name("Backup id", backup_id)
        check_name("Object", name)
        with open(os.path.join(container, backup_id, name), "rb") as src:
            raw = src.read()
        try:
            return zlib.decompress(raw) if compression == "zlib" else raw
        except zlib.error as exc:
            raise BackupChecksumMismatch(
                reason="Backup object %s is corrupt: %s"
                % (chunk["object"], exc)) from exc

    # -- import ----------------------------------------------------------------
    def check_import(self, ref: BackupRef, size_bytes: int,
                     object_count: int | None,
                     parent_id: str | None) -> None:
        """Check that the store holds the backup an imported record
        describes: its metadata says the same id, size, parent and object
        count, and every object it names is there.

        :raises InvalidBackup: it does not (or there is no such backup).
        """
        metadata = self.read_metadata(ref)
        for name, have, want in (
                ("id", metadata.get("backup_id"), ref.id),
                ("size", metadata.get("size_bytes"), size_bytes),
                ("parent_id", metadata.get("parent_id"), parent_id),
                ("object_count", metadata.get("object_count"),
                 object_count)):
            if have != want:
                raise exception.InvalidBackup(
                    reason="Backup %s in container %s has %s %r, the record "
                    "%r." % (ref.id, ref.container, name, have, want))
        container = os.path.join(self.root, ref.container)
        for chunk in metadata["chunks"]:
            if chunk["object"] is None:
                continue
            backup_id, name = chunk["object"].split("/", 1)
            check_name("Backup id", backup_id)
            check_name("Object", name)
            if not os.path.isfile(os.path.join(container, backup_id, name)):
                raise exception.InvalidBackup(
                    reason="Backup %s: object %s is missing."
                    % (ref.id, chunk["object"]))

    # -- delete ----------------------------------------------------------------
    def delete(self, ref: BackupRef) -> None:
        """Remove the backup's folder (its metadata first, so a delete cut
        short leaves no backup that looks whole); nothing if gone."""
        folder = self._folder(ref)
        if not os.path.isdir(folder):
            return
        names = sorted(os.listdir(folder), key=lambda n: n != METADATA)
        for name in names:
            # another delete of the same backup may run (a cancelled create)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(folder)
