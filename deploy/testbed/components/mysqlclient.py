"""mysqlclient, the C MySQL/MariaDB driver (``mysql+mysqldb://`` URLs,
``pip install 'ashlar[mysql]'``), for the functional tests that run on it.

It builds against Debian's ``libmariadb-dev``, so it is installed here, not
by the ``test`` extra: a fresh machine has no headers for it.

    python -m deploy.testbed.components.mysqlclient install
"""

import importlib.util
import subprocess
import sys

from deploy.testbed.components import debian

INSTALL_COMMAND = "python -m deploy.testbed.components.mysqlclient install"
PACKAGES = ("libmariadb-dev", "pkg-config")
REQUIREMENT = "mysqlclient>=2.2"


def installed() -> bool:
    """Whether this interpreter can import mysqlclient (``MySQLdb``)."""
    return importlib.util.find_spec("MySQLdb") is not None


def install(python: str = sys.executable) -> None:
    """The headers from Debian, then mysqlclient into ``python``'s
    environment (this interpreter's by default; the Cinder anchor's venv
    for ``scale_cinder --db mysqldb``)."""
    if python == sys.executable and installed():
        return
    if not debian.install("mysqlclient", PACKAGES, INSTALL_COMMAND):
        return
    subprocess.run([python, "-m", "pip", "install", "-q", REQUIREMENT],
                   check=True)
    print("mysqlclient: ready")


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: %s" % INSTALL_COMMAND)
    install()
