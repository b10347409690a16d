"""The RBD backend's manage and unmanage (Cinder's names).

A manageable object is an image of ``rbd_pool`` named by
``{"source-name": "<image name>"}``.  Adopting renames it to
``volume-<id>``, its data and features untouched; an unmanaged image keeps
that name, which no row refers to any more, so it is listed as safe to
manage again.  Sizes are rounded up to whole GiB.  Snapshots are not
managed on RBD yet (the base class refuses).
"""

from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from common import exception
from drivers import base

if TYPE_CHECKING:
    import contextlib
    import types

LOG = logging.getLogger(__name__)
_PREFIX = "volume-"


class RBDManage:
    """Mixed into :class:`drivers.rbd.RBDDriver`."""

    _rbd: "types.ModuleType"
    _ioctx: Any

    # Provided by RBDDriver.
    def _failing(self, what: str
                 ) -> "contextlib.AbstractContextManager[None]":
        raise NotImplementedError

    def _set_size(self, name: str, size: int | None) -> None:
        raise NotImplementedError

    def _location(self, volume: base.DriverVolume) -> dict[str, Any]:
        raise NotImplementedError

    def manageable_volumes(self) -> list[dict[str, Any]]:
        """Every image of the pool, with its size."""
        with self._failing("list the pool's images"):
            names = self._rbd.RBD().list(self._ioctx)
        entries = []
        for name in names:
            try:
                size = self._size_of(name)
            except exception.ManageExistingInvalidReference:
                continue  # removed meanwhile
            entries.append({
                "reference": {"source-name": name},
                "size": base.gib_up(size),
                "cinder_id": name[len(_PREFIX):]
                if name.startswith(_PREFIX) else None,
                "safe_to_manage": True, "reason_not_safe": None,
                "extra_info": None})
        return entries

    def manage_existing_get_size(self, ref: dict[str, Any]) -> int:
        return base.gib_up(self._size_of(_source_name(ref)))

    def manage_existing(self, volume: base.DriverVolume,
                        ref: dict[str, Any]) -> dict[str, Any]:
        """Rename the image to ``volume-<id>``; a resumed adoption finds it
        renamed already."""
        name, target = _source_name(ref), _PREFIX + volume.id
        if name != target:
            try:
                self._rbd.RBD().rename(self._ioctx, name, target)
            except self._rbd.ImageNotFound:
                self._size_of(target)  # renamed before, or invalid
            except self._rbd.Error as exc:
                raise exception.VolumeBackendAPIException(
                    data="cannot rename image %s to %s: %s"
                    % (name, target, exc)) from exc
        self._set_size(target, self._size_of(target))
        LOG.info("Adopted image %(name)s as volume %(id)s",
                 {"name": name, "id": volume.id})
        return self._location(volume)

    def _size_of(self, name: str) -> int:
        """The image's size in bytes.

        :raises ManageExistingInvalidReference: no such image.
        """
        try:
            image = self._rbd.Image(self._ioctx, name, read_only=True)
        except self._rbd.ImageNotFound:
            raise exception.ManageExistingInvalidReference(
                existing_ref={"source-name": name}, reason="no such image")
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open image %s: %s" % (name, exc)) from exc
        with image:
            return int(image.size())


def _source_name(ref: Any) -> str:
    name = ref.get("source-name") if isinstance(ref, dict) else None
    if not isinstance(name, str) or not name or "@" in name or "/" in name:
        raise exception.ManageExistingInvalidReference(
            existing_ref=ref,
            reason="expected {'source-name': <an image of the pool>}")
    return name
