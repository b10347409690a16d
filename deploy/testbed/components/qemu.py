"""qemu's own tools, the judges of the qcow2 images Ashlar writes.

``install()`` (``python -m deploy.testbed.components.qemu install``)
installs Debian's ``qemu-utils`` (``qemu-img``, ``qemu-io``) when it is
missing (root only).  Ashlar never runs them: the NFS driver writes its
qcow2 overlays and merged images itself (drivers/qcow2.py), and the
functional tests check those images with qemu's ``check``, ``compare``
and ``info``, and write into them as a hypervisor would.
"""

import shutil
import sys

from deploy.testbed import harness
from deploy.testbed.components import debian

PACKAGES = ("qemu-utils",)
INSTALL_COMMAND = "python -m deploy.testbed.components.qemu install"
TOOLS = ("qemu-img", "qemu-io")


def install() -> None:
    """Install qemu-utils when missing."""
    if shutil.which("dpkg-query") and debian.install(
            "qemu", PACKAGES, INSTALL_COMMAND):
        print("qemu: ready")


def available() -> None:
    """Skip the calling test unless qemu-img and qemu-io are installed
    (fail it in CI)."""
    absent = [tool for tool in TOOLS if not shutil.which(tool)]
    if absent:
        harness.unavailable("qemu", FileNotFoundError(
            "%s not found; install them with `%s`"
            % (" and ".join(absent), INSTALL_COMMAND)))


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m deploy.testbed.components.qemu install")
    install()
