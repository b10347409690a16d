"""qcow2 images on local files through drivers/qcow2.py, for the tests of
its writer and reader (tests/unit/drivers/test_qcow2.py) and of those
images under qemu's own tools (tests/functional/test_qcow2_qemu.py)."""

import os

from drivers import qcow2


def make(path, size, backing=None):
    """An empty qcow2 image of ``size`` at ``path``, over ``backing``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        qcow2.write(fd, size, None if backing is None
                    else qcow2.Backing(backing, "qcow2"))
    finally:
        os.close(fd)


def layer(path):
    """The image at ``path`` as a chain's layer (its fd stays open)."""
    fd = os.open(path, os.O_RDONLY)
    return qcow2.Layer(lambda offset, length: os.pread(fd, length, offset),
                       os.path.basename(path))


def chain(folder, top):
    """The chain from ``top`` down its backing files in ``folder``."""
    layers = [layer(folder / top)]
    while layers[-1].backing is not None:
        layers.append(layer(folder / layers[-1].backing.name))
    return qcow2.Chain(layers)


class LocalFile:
    """``write_merged``'s output on a local file."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def pwrite(self, offset, data):
        return os.pwrite(self.fd, data, offset)

    def truncate(self, length):
        os.ftruncate(self.fd, length)


def merge(folder, top, below, out):
    """``top`` merged into ``below`` as the new image ``out``."""
    lower = layer(folder / below)
    qcow2.write_merged(LocalFile(folder / out), [layer(folder / top), lower],
                       lower.backing)
