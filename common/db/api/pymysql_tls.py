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
internal; if it goes, PyMySQL builds a context per connection again (slower,
nothing else changes).  ``tests/unit/db/test_pymysql_tls.py`` checks it.
"""

import threading
from typing import Any

import pymysql.connections
import sqlalchemy as sa
from sqlalchemy.pool import ConnectionPoolEntry


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
    driver is PyMySQL."""
    if engine.dialect.driver != "pymysql":
        return

    @sa.event.listens_for(engine, "do_connect")
    def _connect(_dialect: sa.Dialect, _record: ConnectionPoolEntry,
                 cargs: list[Any],
                 cparams: dict[str, Any]) -> SharedPreferredTLS:
        return SharedPreferredTLS(*cargs, **cparams)
