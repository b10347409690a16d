"""The file backend's manage and unmanage (Cinder's names).

A manageable object is a regular file directly in ``file_volume_dir``,
named by ``{"source-name": "<file name>"}`` (``volume-<id>`` also names
``volume-<id>.raw`` or ``.qcow2``): ``*.qcow2`` is a qcow2 v3 image (its
header is checked), anything else raw; symbolic links, hidden files
and paths are refused, so a manage never reaches outside the directory.
Adopting renames the file to the name of its volume (or snapshot), which is
what ``volume-<id>.<format>`` files are; its bytes are never touched.  An
unmanaged file keeps its name: the volume's id stays in it, and a row no
longer refers to it, so it is listed as safe to manage again.  Sizes are
rounded up to whole GiB (Cinder's ``manage_existing_get_size``).
"""

import os
import re
import stat
from typing import Any

from oslo_log import log as logging

from common import exception
from drivers import base
from drivers import qcow2

LOG = logging.getLogger(__name__)


class FileManage:
    """Mixed into :class:`drivers.file.FileDriver`."""

    volume_dir: str
    #: ``(volume|snapshot)-<id>.<format>``: what names volumes' files.
    name_re: re.Pattern[str]

    # Provided by FileDriver.
    def _path(self, object_id: str, fmt: str,
              kind: str = "volume") -> str:
        raise NotImplementedError

    def manageable_volumes(self) -> list[dict[str, Any]]:
        """Every regular file but snapshots' (``snapshot-*``)."""
        return [entry for entry in self._entries()
                if entry["kind"] != "snapshot"]

    def manageable_snapshots(self) -> list[dict[str, Any]]:
        """The ``snapshot-<id>.<format>`` files."""
        return [dict(entry, source_reference=None)
                for entry in self._entries() if entry["kind"] == "snapshot"]

    def manage_existing_get_size(self, ref: dict[str, Any]) -> int:
        return base.gib_up(file_size(*self._source(ref)))

    def manage_existing_snapshot_get_size(self, ref: dict[str, Any]) -> int:
        return base.gib_up(file_size(*self._source(ref)))

    def manage_existing(self, volume: base.DriverVolume,
                        ref: dict[str, Any]) -> dict[str, Any]:
        """Rename the file to ``volume-<id>.<format>``."""
        return self._adopt(volume.id, "volume", ref)

    def manage_existing_snapshot(self, snapshot: base.DriverSnapshot,
                                 ref: dict[str, Any]) -> dict[str, Any]:
        """Rename the file to ``snapshot-<id>.<format>``."""
        return self._adopt(snapshot.id, "snapshot", ref)

    def _adopt(self, object_id: str, kind: str,
               ref: dict[str, Any]) -> dict[str, Any]:
        """Hard-link the file under its new name, then unlink the old one
        (a link never replaces a file); a resumed adoption finds the new
        name made already."""
        name = self._named(ref)
        fmt = _format_of(name)
        target = self._path(object_id, fmt, kind)
        source = os.path.join(self.volume_dir, name)
        resumed = not os.path.lexists(source) and os.path.isfile(target)
        if source != target and not resumed:
            try:
                if not _same_file(source, target):
                    self._source(ref)
                    os.link(source, target)
                os.unlink(source)
            except OSError as exc:
                raise exception.VolumeBackendAPIException(
                    data=f"cannot rename {source} to {target}: {exc}"
                ) from exc
        LOG.info("Adopted %(name)s as %(kind)s %(id)s at %(path)s",
                 {"name": name, "kind": kind, "id": object_id,
                  "path": target})
        return {"provider_location": target}

    def _source(self, ref: dict[str, Any]) -> tuple[str, str]:
        """The path and format of the file ``ref`` names.

        :raises ManageExistingInvalidReference: not a plain name of a
            regular file here (a qcow2 one with a valid header).
        """
        name = self._named(ref)
        path = os.path.join(self.volume_dir, name)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise _invalid(ref, "no such file")
        if not stat.S_ISREG(mode):
            raise _invalid(ref, "not a regular file")
        fmt = _format_of(name)
        if fmt == "qcow2":
            with open(path, "rb") as image:
                try:
                    header = qcow2.read_header(image.fileno())
                except exception.VolumeBackendAPIException as exc:
                    raise _invalid(ref, str(exc))
            # NOTE(ashlar): a backing file (or an external data file, an
            # incompatible feature) would let whoever opens the volume read
            # another file of the host, e.g. /etc/shadow through QEMU; an
            # encrypted image needs keys Ashlar does not hold.
            if (header.backing_file_offset or header.crypt_method
                    or header.incompatible_features):
                raise _invalid(ref, "a qcow2 image with a backing file, "
                               "encryption or incompatible features")
        return path, fmt

    def _named(self, ref: dict[str, Any]) -> str:
        """The file name ``ref`` gives; ``volume-<id>`` (``snapshot-<id>``)
        names that volume's file whatever its format, as Cinder's other
        drivers name volumes (Tempest's default ``manage_volume_ref``)."""
        name = _source_name(ref)
        if os.path.lexists(os.path.join(self.volume_dir, name)):
            return name
        for fmt in ("raw", "qcow2"):
            full = "%s.%s" % (name, fmt)
            if self.name_re.match(full) and os.path.lexists(
                    os.path.join(self.volume_dir, full)):
                return full
        return name

    def _entries(self) -> list[dict[str, Any]]:
        """Every regular, visible file of the directory, described."""
        entries = []
        with os.scandir(self.volume_dir) as found:
            for entry in found:
                if (entry.name.startswith(".") or not _printable(entry.name)
                        or not entry.is_file(follow_symlinks=False)):
                    continue
                match = self.name_re.match(entry.name)
                try:
                    size = file_size(entry.path, _format_of(entry.name))
                except (OSError, exception.VolumeBackendAPIException):
                    continue  # gone meanwhile, or not an image
                entries.append({
                    "reference": {"source-name": entry.name},
                    "size": base.gib_up(size),
                    "kind": match["kind"] if match else None,
                    "cinder_id": match["id"] if match else None,
                    "safe_to_manage": True, "reason_not_safe": None,
                    "extra_info": None})
        return entries


def file_size(path: str, fmt: str) -> int:
    """What the file presents to its user, in bytes."""
    if fmt == "raw":
        return os.stat(path).st_size
    with open(path, "rb") as image:
        return int(qcow2.read_header(image.fileno()).size)


def _source_name(ref: Any) -> str:
    name = ref.get("source-name") if isinstance(ref, dict) else None
    if (not isinstance(name, str) or not name or name.startswith(".")
            or "/" in name or "\0" in name):
        raise _invalid(ref, "expected {'source-name': <a file name in the "
                       "backend's directory>}")
    return name


def _printable(name: str) -> bool:
    """Whether a listing may name the file: UTF-8 (a name that is not
    cannot cross the bus) without control characters."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return name.isprintable()


def _format_of(name: str) -> str:
    return "qcow2" if name.endswith(".qcow2") else "raw"


def _same_file(source: str, target: str) -> bool:
    """Whether ``target`` is ``source`` already (an adoption resumed
    between its link and its unlink)."""
    try:
        return os.path.samefile(source, target)
    except FileNotFoundError:
        return False


def _invalid(ref: Any, reason: str
             ) -> exception.ManageExistingInvalidReference:
    return exception.ManageExistingInvalidReference(existing_ref=ref,
                                                    reason=reason)
