"""What a backup service asks of its backup driver (``backup_driver``)."""

import dataclasses
import functools
import hashlib
from typing import Any
from typing import Callable
from typing import Protocol

from drivers.sparse_copy import is_zero
from drivers.sparse_copy import zeros


@dataclasses.dataclass(frozen=True)
class BackupRef:
    """Where a backup lives: its id, its container and its volume's id."""

    id: str
    container: str
    volume_id: str = ""


class Readable(Protocol):
    def read(self, offset: int, length: int) -> bytes: ...


class Writable(Protocol):
    def write(self, offset: int, data: bytes) -> int: ...


class BackupDriver(Protocol):
    """A backup driver.  ``SERVICE`` names it in ``backups.service`` and
    in an exported record; ``SNAPSHOTS_SOURCE``: it snapshots the source
    volume (the service opens it writable)."""

    SERVICE: str
    SNAPSHOTS_SOURCE: bool

    def backup(self, ref: BackupRef, source: Any, size_bytes: int,
               parent: BackupRef | None = None,
               cancelled: Callable[[], bool] | None = None
               ) -> dict[str, Any]:
        """Store ``size_bytes`` of ``source``; ``parent``: the backup an
        incremental one builds on.

        :returns: at least ``object_count``.
        :raises InvalidBackup: it cannot (its message is the user's).
        """

    def restore(self, ref: BackupRef, target: Any) -> int:
        """Write the backup's bytes into ``target``; :returns: bytes."""

    def delete(self, ref: BackupRef) -> None:
        """Remove the backup's data; nothing if it is gone."""

    def check_import(self, ref: BackupRef, size_bytes: int,
                     object_count: int | None,
                     parent_id: str | None) -> None:
        """:raises InvalidBackup: the store lacks the backup a record
        describes."""


@functools.lru_cache(maxsize=2)
def _zeros_sha256(length: int) -> str:
    return hashlib.sha256(zeros(length)).hexdigest()


def sha256(data: bytes) -> str:
    """``data``'s sha256 hex digest; a chunk of zeros (most of a new
    volume) costs a comparison, not a hash."""
    if is_zero(data):
        return _zeros_sha256(len(data))
    return hashlib.sha256(data).hexdigest()
