"""Debian packages a component needs, installed when missing (root only).

Not root: the command that installs them is printed, and under ``CI=true``
the run stops with it, so a missing package is never a silent skip.
"""

import os
import subprocess
import sys
import time

APT_TIMEOUT = 900
#: Another apt-get (a second tox env installing its engines) holds dpkg's
#: lock for a while: wait for it rather than fail.
WAIT_FOR_LOCK = ("-o", "DPkg::Lock::Timeout=%d" % APT_TIMEOUT)


def missing(packages: tuple[str, ...]) -> list[str]:
    """The packages dpkg does not list as installed."""
    absent = []
    for package in packages:
        status = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package],
            capture_output=True, text=True, check=False).stdout
        if "install ok installed" not in status:
            absent.append(package)
    return absent


def install(label: str, packages: tuple[str, ...],
            install_command: str) -> bool:
    """Install what of ``packages`` is missing.

    :returns: whether they are all installed now.
    """
    absent = missing(packages)
    if not absent:
        return True
    if os.geteuid() != 0:
        message = ("%s: missing %s; its tests are skipped until `sudo %s` "
                   "installs them" % (label, " ".join(absent),
                                      install_command))
        if os.environ.get("CI", "").lower() == "true":
            sys.exit(message)
        print(message)
        return False
    started = time.monotonic()
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(["apt-cache", "show", absent[0]],
                      capture_output=True, check=False).returncode:
        subprocess.run(["apt-get", *WAIT_FOR_LOCK, "update", "-q"],
                       check=True, timeout=APT_TIMEOUT)
    print("%s: installing %s" % (label, " ".join(absent)), flush=True)
    subprocess.run(["apt-get", *WAIT_FOR_LOCK, "install", "-y", "-q",
                    *absent], check=True, timeout=APT_TIMEOUT, env=env,
                   stdout=subprocess.DEVNULL)
    print("%s: installed in %.0fs" % (label, time.monotonic() - started))
    return True
