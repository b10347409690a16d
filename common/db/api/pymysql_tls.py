"""PyMySQL connections that share one TLS context in "preferred" mode.

Without TLS options of its own, PyMySQL (1.2 and later) prefers TLS: it
builds a default ``ssl.SSLContext`` for every connection, in case the server
offers TLS.  Building one loads the system's CA store, about 20 ms of CPU
with OpenSSL 3, which is most of what opening a MySQL or MariaDB connection
costs: a new api worker opening its pools under load, or a pool that grows
past its size, pays it for each connection.  The preferred-mode context
verifies nothing (no CA given: ``CERT_NONE``, no host check) and is the same
every time, so one built once serves every such connection; connections
with TLS options of their own (``ssl_ca``, ``ssl_disabled``, ... in the
URL's query) get theirs from PyMySQL as before.

NOTE(ashlar): this overrides ``Connection._create_ssl_ctx``, a PyMySQL
internal, so it is used only with the PyMySQL releases it was tested with
(``TESTED``); with any other, PyMySQL builds a context per connection, as
without it (slower to connect, nothing else changes).
``tests/unit/db/test_pymysql_tls.py`` checks both.
"""

import threading
from typing import Any

import pymysql.connections
import sqlalchemy as sa
from sqlalchemy.pool import ConnectionPoolEntry

from common import tested_versions

#: The PyMySQL releases whose ``_create_ssl_ctx`` this was tested with.
TESTED = tested_versions.ReleaseRange("PyMySQL", "1.1", "1.3")
#: Whether PyMySQL engines share the context (PyMySQL is in ``TESTED``).
SHARED = TESTED.holds()


class SharedPreferredTLS(pymysql.connections.Connection):
    """A PyMySQL connection whose preferred-mode TLS context is shared."""

    _preferred: Any = None
    _lock = threading.Lock()

    def _create_ssl_ctx(self, sslp: Any) -> Any:
        if sslp:  # TLS options of the connection's own: as PyMySQL does
            return super()._create_ssl_ctx(sslp)
        with SharedPreferredTLS._lock:
            if SharedPreferredTLS._preferred is None:
                SharedPreferredTLS._preferred = super()._create_ssl_ctx(sslp)
        return SharedPreferredTLS._preferred


def share_preferred_tls(engine: sa.engine.Engine) -> None:
    """Open ``engine``'s new connections as ``SharedPreferredTLS`` when its
    driver is PyMySQL of a tested release."""
    if engine.dialect.driver != "pymysql":
        return
    tested_versions.announce(
        TESTED, SHARED, "preferred-mode TLS connections share one context",
        "each connection builds its own TLS context")
    if not SHARED:
        return

    @sa.event.listens_for(engine, "do_connect")
    def _connect(_dialect: sa.Dialect, _record: ConnectionPoolEntry,
                 cargs: list[Any],
                 cparams: dict[str, Any]) -> SharedPreferredTLS:
        return SharedPreferredTLS(*cargs, **cparams)
