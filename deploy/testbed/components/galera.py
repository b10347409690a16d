"""A real three-node MariaDB Galera cluster behind haproxy, on loopback.

``install()`` (``python -m deploy.testbed.components.galera install``)
installs what Debian ships for it when missing (root only): MariaDB's
server, ``galera-4``, ``haproxy``, and ``rsync`` and ``mariadb-backup``
and ``socat`` for state transfers.  ``Galera`` starts three ``mariadbd``
in a caller's folder (the machine's MariaDB on 3306 is left alone), each
with its own ports, socket and data, ``--defaults-file`` so nothing under
/etc is read: the first bootstraps the cluster (``--wsrep-new-cluster``,
what ``galera_new_cluster`` does), the others join it by a state snapshot
transfer (``sst``: rsync or mariabackup).  haproxy sends every client to
one writer, the others are ``backup`` servers, as OpenStack deploys it;
``url()`` is SQLAlchemy's (PyMySQL) through it.  ``kill(member)`` is a
``kill -9``; ``start(member)`` brings a node back, and it rejoins.
"""

import csv
import getpass
import io
import os
import secrets
import shutil
import socket
import subprocess
import uuid

import pymysql

from deploy.testbed import harness
from deploy.testbed.components import debian
from deploy.testbed.components import members

PACKAGES = ("mariadb-server", "galera-4", "haproxy", "rsync",
            "mariadb-backup", "socat")
INSTALL_COMMAND = "python -m deploy.testbed.components.galera install"
PROVIDER = "/usr/lib/galera/libgalera_smm.so"
INSTALL_DB_TIMEOUT = 120
HAPROXY = "haproxy"

#: A node's my.cnf.  NOTE(ashlar): small memory: a 16 MiB buffer pool and
#: redo log, a 16 MiB gcache (Galera's write-set cache, 128 MiB by
#: default), no performance schema.  Durability comes from replication,
#: so a commit is written to the OS, not flushed (trx_commit 2), as
#: Galera deployments do.
NODE_CONFIG = """\
[mysqld]
user = {user}
datadir = {dir}/data
socket = {dir}/mysqld.sock
pid-file = {dir}/mysqld.pid
port = {port}
bind-address = 127.0.0.1
skip-name-resolve
max_connect_errors = 1000000
max_connections = 100
performance_schema = OFF
innodb_buffer_pool_size = 16M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 2
innodb_autoinc_lock_mode = 2
default_storage_engine = InnoDB
binlog_format = ROW
key_buffer_size = 1M
wsrep_on = ON
wsrep_provider = {provider}
wsrep_cluster_name = {cluster}
wsrep_cluster_address = gcomm://{peers}
wsrep_node_name = {name}
wsrep_node_address = 127.0.0.1:{gcomm}
wsrep_node_incoming_address = 127.0.0.1:{port}
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:{gcomm};\
ist.recv_addr=127.0.0.1:{ist};gcache.size=16M"
wsrep_sst_method = {sst}
wsrep_sst_receive_address = 127.0.0.1:{sst_port}
wsrep_sst_auth = root:
wsrep_slave_threads = 1
"""

#: haproxy: one writer, the others backups (the first one up takes over).
#: NOTE(ashlar): checked every 500 ms, down after 2 failures, up after 2
#: successes; kolla-ansible checks every 2 s, down after 5.
#: ``shutdown-sessions`` closes the clients' connections to a server
#: marked down, so none waits on a dead one.
HAPROXY_CONFIG = """\
global
    maxconn 256
    nbthread 1
    stats socket {dir}/haproxy.sock mode 600 level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 3600s
    timeout server 3600s
    retries 2
listen galera
    bind 127.0.0.1:{port}
    option mysql-check user haproxy post-41
    option clitcpka
    option srvtcpka
    default-server inter 500 rise 2 fall 2 on-marked-down shutdown-sessions
{servers}
"""


def install() -> None:
    """Install what is missing of MariaDB, Galera, haproxy and the SST
    tools."""
    if shutil.which("dpkg-query") and debian.install(
            "galera", PACKAGES, INSTALL_COMMAND):
        print("galera: ready")


def available() -> None:
    """Skip the calling test unless MariaDB, Galera and haproxy are
    installed (fail it in CI)."""
    missing = [tool for tool in ("mariadbd", "mariadb-install-db", HAPROXY,
                                 "rsync") if not _which(tool)]
    if missing or not os.path.exists(PROVIDER):
        harness.unavailable("a Galera cluster", FileNotFoundError(
            "missing %s; install them with `%s`" % (
                " ".join(missing) or PROVIDER, INSTALL_COMMAND)))


def _which(tool: str) -> str | None:
    return shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin")


class Galera(members.Members):
    """Nodes ``g1``, ``g2``, ``g3`` and ``haproxy``; a database
    ``ashlar`` and a user of that name with every right on it.

    :param sst: the state snapshot transfer method (``rsync`` or
        ``mariabackup``).
    """

    label = "Galera"
    prefix = "g"

    def __init__(self, workdir, size: int = 3, sst: str = "mariabackup") -> None:
        super().__init__(workdir, size)
        self.sst = sst
        (self.ports, self.gcomm_ports, self.ist_ports,
         self.sst_ports) = members.port_maps(self.names, 4)
        self.port = harness.free_port()
        self.cluster = "ashlar-%s" % uuid.uuid4().hex[:6]
        self.database = self.user = "ashlar"
        self.password = secrets.token_hex(12)
        self._bootstrap = True

    def url(self) -> str:
        """SQLAlchemy's URL (PyMySQL) of the database, through haproxy."""
        return "mysql+pymysql://%s:%s@127.0.0.1:%d/%s" % (
            self.user, self.password, self.port, self.database)

    # -- the nodes --------------------------------------------------------------
    def prepare(self) -> None:
        peers = ",".join("127.0.0.1:%d" % self.gcomm_ports[name]
                         for name in self.names)
        for name in self.names:
            node = self.dir / name
            (node / "data").mkdir(parents=True, exist_ok=True)
            (node / "my.cnf").write_text(NODE_CONFIG.format(
                user=getpass.getuser(), dir=node, port=self.ports[name],
                provider=PROVIDER, cluster=self.cluster, peers=peers,
                name=name, gcomm=self.gcomm_ports[name],
                ist=self.ist_ports[name], sst=self.sst,
                sst_port=self.sst_ports[name]))
        first = self.dir / self.names[0]
        subprocess.run(
            [_which("mariadb-install-db"), "--no-defaults",
             "--datadir=%s" % (first / "data"), "--user=%s"
             % getpass.getuser(), "--auth-root-authentication-method=normal",
             "--skip-test-db"], check=True, capture_output=True,
            timeout=INSTALL_DB_TIMEOUT)
        servers = "\n".join("    server %s 127.0.0.1:%d check%s" % (
            name, self.ports[name], "" if index == 0 else " backup")
            for index, name in enumerate(self.names))
        (self.dir / "haproxy.cfg").write_text(HAPROXY_CONFIG.format(
            dir=self.dir, port=self.port, servers=servers))

    def command(self, member: str) -> list[str]:
        if member == HAPROXY:
            return [_which(HAPROXY), "-db", "-f",
                    str(self.dir / "haproxy.cfg")]
        argv = [_which("mariadbd"),
                "--defaults-file=%s" % (self.dir / member / "my.cnf")]
        if member == self.names[0] and self._bootstrap:
            argv.append("--wsrep-new-cluster")
        return argv

    def start_all(self) -> None:
        """Bootstrap the first node, make the users, then let the others
        join it one at a time (each by a state snapshot transfer) and
        start haproxy."""
        first = self.names[0]
        self.start(first)
        self._bootstrap = False
        self._make_users(first)
        for name in self.names[1:]:
            self.join(name)
        self.start(HAPROXY)

    def join(self, member: str) -> None:
        """Start a joiner; once more if its transfer failed and it exited.

        NOTE(ashlar): on a loaded two-core machine a mariabackup joiner
        once exited with "Failed to read uuid:seqno ... from joiner
        script" (its transfer never began); a second try starts a clean
        transfer.  A donor serves one transfer at a time anyway, so
        joining one by one costs nothing.
        """
        try:
            self.start(member)
        except RuntimeError as exc:
            if self.procs[member].poll() is None:
                raise
            print("galera: %s failed to join, once more: %s"
                  % (member, str(exc).splitlines()[0]), flush=True)
            self.start(member)

    def _make_users(self, member: str) -> None:
        with self.admin(member) as cursor:
            cursor.execute("CREATE DATABASE %s" % self.database)
            cursor.execute("CREATE USER %s@'%%' IDENTIFIED BY '%s'"
                           % (self.user, self.password))
            cursor.execute("GRANT ALL ON %s.* TO %s@'%%'"
                           % (self.database, self.user))
            # NOTE(ashlar): haproxy's mysql-check logs in as this user,
            # with no password and no rights.
            cursor.execute("CREATE USER haproxy@'127.0.0.1'")

    def admin(self, member: str) -> "_Closing":
        """A cursor as root on ``member``'s socket (autocommit), for a
        ``with`` block that closes its connection."""
        conn = pymysql.connect(unix_socket=str(self.dir / member
                                               / "mysqld.sock"),
                               user="root", autocommit=True,
                               connect_timeout=2, read_timeout=10)
        return _Closing(conn)

    def status(self, member: str) -> dict[str, str]:
        """``member``'s wsrep status variables."""
        with self.admin(member) as cursor:
            cursor.execute("SHOW STATUS LIKE 'wsrep%'")
            return dict(cursor.fetchall())

    def member_ready(self, member: str) -> bool:
        if member == HAPROXY:
            return self.writer() is not None
        try:
            status = self.status(member)
        except pymysql.MySQLError:
            return False
        return (status.get("wsrep_ready") == "ON"
                and status.get("wsrep_local_state_comment") == "Synced")

    def cluster_ready(self) -> bool:
        return all(
            self.alive(name) and self.member_ready(name)
            and self.status(name)["wsrep_cluster_size"] == str(
                len(self.names)) for name in self.names)

    # -- haproxy ----------------------------------------------------------------
    def writer(self) -> str | None:
        """The node a new client reaches through haproxy (None if none)."""
        try:
            conn = pymysql.connect(host="127.0.0.1", port=self.port,
                                   user=self.user, password=self.password,
                                   connect_timeout=2, read_timeout=5)
        except pymysql.MySQLError:
            return None
        try:
            with conn.cursor() as cursor:
                cursor.execute("SELECT @@wsrep_node_name")
                return cursor.fetchone()[0]
        finally:
            conn.close()

    def backends(self) -> dict[str, str]:
        """haproxy's view: each server's status (``UP``, ``DOWN`` ...)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(self.dir / "haproxy.sock"))
            sock.sendall(b"show stat\n")
            answer = b"".join(iter(lambda: sock.recv(65536), b""))
        rows = csv.DictReader(io.StringIO(answer.decode().lstrip("# ")))
        return {row["svname"]: row["status"] for row in rows
                if row["svname"] in self.names}


class _Closing:
    """A PyMySQL connection's cursor in a ``with`` block; the connection
    is closed after it."""

    def __init__(self, conn: pymysql.connections.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> "pymysql.cursors.Cursor":
        return self.conn.cursor()

    def __exit__(self, *exc_info: object) -> None:
        self.conn.close()


def main(argv: list[str] | None = None) -> None:
    members.main(argv, __doc__, install, Galera, lambda cluster: (
        "database url: %s, writer %s" % (cluster.url(), cluster.writer())))


if __name__ == "__main__":
    main()
