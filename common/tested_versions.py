"""The library releases a fast path on their private names was tested with.

Four fast paths reach into a dependency's private names (``docs/
operations.md``, "Newer libraries"): ``common.db.api.direct`` (SQLAlchemy),
``services.api.keepalive`` (gunicorn), ``common.rpc`` (oslo.messaging) and
``common.db.api.pymysql_tls`` (PyMySQL).  Each names its ``ReleaseRange``
and checks it once, as it is imported: inside the range it takes its fast
path; outside it (a newer release a user's distribution ships) it takes
the public path the library offers, slower at worst, and says which at
start (``announce``).  No upper bound in ``setup.cfg`` holds a user back.
"""

import dataclasses
import re
from collections.abc import Callable
from importlib import metadata

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

#: The distributions whose path was announced in this process.
_ANNOUNCED: set[str] = set()


def release(version: str) -> tuple[int, ...]:
    """The release numbers a version starts with: ``"2.1.0b1"`` gives
    ``(2, 1, 0)``, so a pre-release counts as its release."""
    found = re.match(r"\d+(\.\d+)*", version)
    return tuple(int(n) for n in found.group().split(".")) if found else ()


@dataclasses.dataclass(frozen=True)
class ReleaseRange:
    """Releases of ``distribution`` from ``lowest`` up to, and not
    including, ``below``: the ones a fast path was tested with."""

    distribution: str
    lowest: str
    below: str

    def installed(self) -> str | None:
        """The installed version, None when the distribution is not."""
        try:
            return metadata.version(self.distribution)
        except metadata.PackageNotFoundError:
            return None

    def holds(self) -> bool:
        """Whether the installed release is in the range."""
        installed = self.installed()
        return installed is not None and (
            release(self.lowest) <= release(installed) < release(self.below))

    def __str__(self) -> str:
        return ">=%s,<%s" % (self.lowest, self.below)


def announce(tested: ReleaseRange, fast: bool, fast_path: str,
             public_path: str, log: Callable[..., object] = LOG.info) -> None:
    """Log at INFO, once per process and distribution, which path runs.

    :param fast: whether the fast path runs (``tested.holds()``, as the
        module found it when imported).
    :param log: the logger's ``info`` (gunicorn's master logs with its own).
    """
    if tested.distribution in _ANNOUNCED:
        return
    _ANNOUNCED.add(tested.distribution)
    log("%(dist)s %(version)s is %(where)s the tested range %(range)s: "
        "%(path)s", {"dist": tested.distribution,
                     "version": tested.installed(), "range": str(tested),
                     "where": "in" if fast else "outside",
                     "path": fast_path if fast else public_path})
