"""Debian's ``docker-compose``, which checks the compose files offline
(``tests/unit/test_deploy.py``, ``tests/functional/test_compose_topology.py``).

    python -m deploy.testbed.components.compose install
"""

import shutil
import sys

from deploy.testbed.components import debian

INSTALL_COMMAND = "python -m deploy.testbed.components.compose install"


def install() -> None:
    if shutil.which("docker-compose") or not shutil.which("dpkg-query"):
        return
    if debian.install("docker-compose", ("docker-compose",),
                      INSTALL_COMMAND):
        print("docker-compose: ready")


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m deploy.testbed.components.compose "
                 "install")
    install()
