"""Snapshots and clones of RBD images, for the RBD backend (drivers.rbd).

:class:`Clones` makes protected snapshots, clones a snapshot as a new image
(flattened when asked), removes a snapshot after flattening the clones that
hang from it, and walks an image's parents, across pools, to tell how long
a chain of clones is.  It works on the driver's cluster connection: the
``rados``/``rbd`` bindings, the client and the I/O context of the driver's
pool; other pools are opened for the call.  :func:`failing` and
:func:`open_image` turn librbd errors into ours, for the driver too.
"""

import contextlib
import types
from collections.abc import Callable
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import excutils

from common import exception

if TYPE_CHECKING:
    # NOTE(ashlar): the bindings are imported by the driver's do_setup
    # (they are optional); here they only name the types.
    import rados
    import rbd

LOG = logging.getLogger(__name__)


@contextlib.contextmanager
def failing(rbd_mod: types.ModuleType, what: str) -> Iterator[None]:
    """Turn librbd errors into VolumeBackendAPIException."""
    try:
        yield
    except rbd_mod.Error as exc:
        raise exception.VolumeBackendAPIException(
            data="cannot %s: %s" % (what, exc)) from exc


def open_image(rbd_mod: types.ModuleType, ioctx: "rados.Ioctx", name: str,
               read_only: bool = False) -> "rbd.Image":
    """Open image ``name``; VolumeNotFound when it is not there."""
    try:
        return rbd_mod.Image(ioctx, name, read_only=read_only)
    except rbd_mod.ImageNotFound as exc:
        raise exception.VolumeNotFound(volume_id=name) from exc
    except rbd_mod.Error as exc:
        raise exception.VolumeBackendAPIException(
            data="cannot open image %s: %s" % (name, exc)) from exc


class Clones:
    """Snapshots and clones of the images in one pool."""

    def __init__(self, rbd_mod: types.ModuleType,
                 rados_mod: types.ModuleType, client: "rados.Rados",
                 ioctx: "rados.Ioctx", pool: str,
                 remove_image: Callable[[str], None]) -> None:
        """``remove_image`` removes an image of the pool (it takes back a
        clone that could not be finished)."""
        self._rbd = rbd_mod
        self._rados = rados_mod
        self._client = client
        self._ioctx = ioctx
        self._pool_name = pool
        self._remove_image = remove_image

    def protected_snap(self, image: "rbd.Image", name: str, snap: str,
                       adopt: bool = False) -> None:
        """Make and protect snapshot ``snap``; nothing is left on failure.
        One that exists already is refused, or with ``adopt`` (a clone's
        hidden snapshot, made before its node died) protected and kept."""
        try:
            image.create_snap(snap)
        except self._rbd.ImageExists as exc:
            if not adopt:
                raise exception.VolumeBackendAPIException(
                    data="snapshot %s@%s already exists" % (name,
                                                            snap)) from exc
            with failing(self._rbd, "protect %s@%s" % (name, snap)):
                if not image.is_protected_snap(snap):
                    image.protect_snap(snap)
            return
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot snapshot %s@%s: %s" % (name, snap, exc)) from exc
        try:
            with failing(self._rbd, "protect %s@%s" % (name, snap)):
                image.protect_snap(snap)
        except exception.VolumeBackendAPIException:
            with excutils.save_and_reraise_exception():
                image.remove_snap(snap)

    def clone(self, parent: str, snap: str, name: str, size: int, *,
              features: int, order: int, flatten: bool) -> None:
        """Clone ``parent@snap`` as image ``name``, flatten it if asked and
        grow it to ``size`` bytes; remove it again on failure."""
        try:
            self._rbd.RBD().clone(
                self._ioctx, parent, snap, self._ioctx, name,
                features=features, order=order)
        except self._rbd.ImageExists as exc:
            raise exception.VolumeBackendAPIException(
                data="image %s already exists" % name) from exc
        except self._rbd.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot clone %s@%s as %s: %s" % (parent, snap, name,
                                                       exc)) from exc
        try:
            with open_image(self._rbd, self._ioctx, name) as image, failing(
                    self._rbd, "finish clone %s" % name):
                if flatten:
                    image.flatten()
                if image.size() < size:
                    image.resize(size)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._remove_image(name)

    def remove_snap(self, image: "rbd.Image", name: str, snap: str) -> bool:
        """Flatten the clones of ``name@snap``, unprotect and remove it;
        False when it did not exist."""
        with failing(self._rbd, "remove snapshot %s@%s" % (name, snap)):
            if not image.snap_exists(snap):
                return False
            image.set_snap(snap)
            try:
                children = self._children(image)
            finally:
                image.set_snap(None)
            for pool, namespace, child in children:
                self._flatten(pool, namespace, child)
            if image.is_protected_snap(snap):
                image.unprotect_snap(snap)
            image.remove_snap(snap)
        return True

    def drop_snap_quietly(self, pool: str, name: str, snap: str) -> None:
        """Remove ``pool/name@snap`` if it is there; log a failure (a
        leftover hidden snapshot goes with its image)."""
        try:
            with self._pool(pool) as ioctx, \
                    self._rbd.Image(ioctx, name) as image:
                self.remove_snap(image, name, snap)
        except self._rbd.ImageNotFound:
            return
        except (self._rbd.Error, self._rados.Error,
                exception.VolumeBackendAPIException) as exc:
            LOG.warning("Could not remove snapshot %(name)s@%(snap)s: "
                        "%(err)s", {"name": name, "snap": snap, "err": exc})

    def clone_depth(self, image: "rbd.Image") -> int:
        """How many ancestors the image (at its snapshot, if one is set)
        has: 0 for an image that is no clone."""
        parent = self.parent(image)
        if parent is None:
            return 0
        with self._pool(parent[0]) as ioctx, self._rbd.Image(
                ioctx, parent[1], read_only=True) as parent_image:
            return 1 + self.clone_depth(parent_image)

    def parent(self, image: "rbd.Image") -> tuple[str, str, str] | None:
        """(pool, image, snapshot) the image is a clone of, or None."""
        try:
            pool, name, snap = image.parent_info()
        except self._rbd.ImageNotFound:
            return None
        return pool, name, snap

    def _children(self, image: "rbd.Image") -> list[tuple[str, str, str]]:
        """(pool, namespace, image) of the clones of the image's current
        snapshot."""
        if not hasattr(image, "list_children2"):
            return [(pool, "", child)
                    for pool, child in image.list_children()]
        children = list(image.list_children2())
        trashed = [child["image"] for child in children if child.get("trash")]
        if trashed:
            # NOTE(ashlar): a clone in the trash still reads from its parent
            # and cannot be opened by name to flatten it.
            raise exception.VolumeBackendAPIException(
                data="clones %s in the RBD trash still depend on this "
                "snapshot; purge or restore them first" % ", ".join(trashed))
        return [(child["pool"], child.get("pool_namespace", ""),
                 child["image"]) for child in children]

    def _flatten(self, pool: str, namespace: str, name: str) -> None:
        """Copy into clone ``pool/name`` all it reads from its parent."""
        LOG.info("Flattening image %(pool)s/%(name)s",
                 {"pool": pool, "name": name})
        try:
            with self._pool(pool, namespace) as ioctx, \
                    self._rbd.Image(ioctx, name) as image:
                image.flatten()
        except self._rbd.ImageNotFound:
            LOG.info("Clone %s is gone; nothing to flatten", name)

    @contextlib.contextmanager
    def _pool(self, pool: str, namespace: str = ""
              ) -> Iterator["rados.Ioctx"]:
        """An I/O context on ``pool``: ours, or one opened for the call."""
        if pool == self._pool_name and not namespace:
            yield self._ioctx
            return
        try:
            ioctx = self._client.open_ioctx(pool)
        except self._rados.Error as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot open pool %s: %s" % (pool, exc)) from exc
        try:
            if namespace:
                ioctx.set_namespace(namespace)
            yield ioctx
        finally:
            ioctx.close()
