"""The Cinder anchor under Tempest: ``python -m benchmarks.tempest_run
--anchor ANCHOR_DIR [--anchor-home ANCHOR_HOME] [--setup] [--sides]``.

Starts the real Cinder 29 of the anchor's folder (not part of this
repository: ``etc/``, ``rbd/cinder-rbd.conf``; cinder-api,
cinder-scheduler, cinder-volume and cinder-backup from its venv) on the
RBD anchor of ``rbd/``: a throwaway Ceph cluster
(``deploy/testbed/components/ceph.py``), Cinder's own RBD driver and
Cinder's Ceph backup driver, in keystone mode behind the Keystone
``tempest_run`` started, so that the same tempest.conf and the same
Tempest command measure Cinder as they measure Ashlar.  The anchor's
``etc/cinder.conf`` is copied and changed only where a Tempest deployment
must differ:

* ``auth_strategy = keystone`` and a ``[keystone_authtoken]`` section for
  a service user made as Ashlar's is;
* Cinder's default quotas (the anchor lifts them for its benchmark; Ashlar
  runs Tempest with Cinder's defaults);
* two backends, ``rbd1`` and ``rbd2``, each the RBD anchor's ``rbd_ma``
  section (Cinder's RBD driver, which reports multiattach) on a Ceph pool
  of its own (``volumes``, ``volumes2``), as Ashlar's two file backends
  are each a folder of their own.  The RBD anchor's ``plain`` backend (the
  bookkeeping ``anchor_driver``) is left out: it has no data path for a
  backup, reports another vendor and protocol, and its 1 PiB of free
  space would draw every volume of the default type;
* ``cinder-backup`` with ``backup_driver =
  cinder.backup.drivers.ceph.CephBackupDriver`` into the pool ``backups``
  as the cephx user ``cinder-backup``.  It reads a volume through
  os-brick's librbd handle (no local attach, no compute host), which
  takes the volume user's key from ``/etc/ceph/ceph.client.<user>.keyring``
  only (Cinder 29 sends no key, OSSN-0085, and reads no
  ``rbd_keyring_conf`` from its config): the run's cephx user has a name
  of its own (``cinder-<hex>``), its keyring is written there and removed
  at the end; and os-brick's privsep helper for the connector's properties
  is started from the venv without sudo (``[privsep_osbrick]
  helper_command``);
* a fresh MariaDB database and RabbitMQ vhost of the run's own, a port,
  and state, lock and log folders in the run's.

Policy is Cinder 29's default: new defaults, scope enforced (oslo.policy
6 has no option to turn scope checks off).  The anchor's venv is
``ANCHOR_HOME/venv``: Cinder 29.0.0 from the anchor's
``requirements-anchor.txt``, plus ``etcd3gw`` (for ``cinder_cluster``)
and links to the system's ``rados`` and ``rbd`` bindings; ``setup``
(``python -m benchmarks.tempest_anchor --anchor ANCHOR_DIR --anchor-home
ANCHOR_HOME``, or ``tempest_run --setup``) makes it.
"""

import argparse
import configparser
import contextlib
import dataclasses
import io
import os
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa

from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from deploy.testbed.components import keystone as keystone_component

SERVICES = ("api", "scheduler", "volume", "backup")
#: The anchor's options that a Tempest run leaves at Cinder's defaults.
DROPPED = ("quota_volumes", "quota_snapshots", "quota_gigabytes",
           "quota_backups", "quota_backup_gigabytes", "quota_groups")
#: Backend section -> its Ceph pool; each is the RBD anchor's ``rbd_ma``.
BACKENDS = {"rbd1": "volumes", "rbd2": "volumes2"}
#: The RBD anchor's section (``rbd/cinder-rbd.conf``) they are copied from.
ANCHOR_BACKEND = "rbd_ma"
#: Where os-brick looks for a cephx user's keyring (``ceph.client.<user>.
#: keyring``).
ETC_CEPH = Path("/etc/ceph")
BACKUP_USER = "cinder-backup"
BACKUP_POOL = "backups"
BACKUP_DRIVER = "cinder.backup.drivers.ceph.CephBackupDriver"
#: What the venv needs beyond the anchor's requirements-anchor.txt: etcd
#: for the HA side by side, psycopg (SQLAlchemy 2.1's default PostgreSQL
#: driver) for ``scale_cinder --db postgresql``.
EXTRA_PACKAGES = ("etcd3gw", "psycopg[binary]")
START_TIMEOUT = 180
PIP_TIMEOUT = 1800


@dataclasses.dataclass(frozen=True)
class Anchor:
    """Where the anchor is: its folder (``etc/``, ``rbd/``,
    ``anchor_driver.py``, ``RESULTS.md``) and its home (``venv/``, made by
    ``setup``)."""

    folder: Path
    home: Path

    @property
    def venv(self) -> Path:
        return self.home / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


# -- the venv -------------------------------------------------------------
PROBE = ("import importlib.metadata as m, etcd3gw, psycopg, rados, rbd; "
         "print(m.version('cinder'))")


def available(anchor: Anchor) -> str:
    """``cinder <version> (anchor)``; ``harness.Unavailable`` without the
    anchor's venv, its etcd3gw, its psycopg or its Ceph bindings."""
    try:
        return "cinder %s (anchor)" % subprocess.run(
            [str(anchor.python), "-c", PROBE], check=True, text=True,
            capture_output=True, timeout=120).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        harness.unavailable(
            "the Cinder anchor's venv %s (make it with `python -m "
            "benchmarks.tempest_anchor --anchor %s --anchor-home %s`)"
            % (anchor.venv, anchor.folder, anchor.home),
            RuntimeError(getattr(exc, "stderr", None) or exc))


def setup(anchor: Anchor) -> str:
    """Make the anchor's venv unless it is whole: a venv of this Python's
    base interpreter, ``pip install -r requirements-anchor.txt`` and
    ``EXTRA_PACKAGES``, and the system's ``rados``/``rbd`` bindings linked
    into its site-packages (``ceph install`` puts them there); returns
    ``available``'s answer."""
    with contextlib.suppress(harness.Unavailable):
        return available(anchor)
    if not anchor.python.exists():
        anchor.home.mkdir(parents=True, exist_ok=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(anchor.venv)], check=True,
                       timeout=300)
    subprocess.run([str(anchor.python), "-m", "pip", "install", "-q", "-r",
                    str(anchor.folder / "requirements-anchor.txt"),
                    *EXTRA_PACKAGES], check=True, timeout=PIP_TIMEOUT)
    _link_bindings(anchor)
    return available(anchor)


def _link_bindings(anchor: Anchor) -> None:
    """Link the system's rados and rbd modules into the venv (the anchor's
    ``rbd/README.md``; Debian's python3-rados and python3-rbd)."""
    site, suffix = subprocess.run(
        [str(anchor.python), "-c", "import sysconfig; print(sysconfig."
         "get_paths()['platlib']); print(sysconfig.get_config_var("
         "'EXT_SUFFIX'))"], check=True, text=True, capture_output=True,
        timeout=60).stdout.split()
    for name in ceph_component.BINDINGS:
        source = ceph_component.DIST_PACKAGES / (name + suffix)
        if not source.exists():
            harness.unavailable("Ceph's %s binding" % name, FileNotFoundError(
                "%s; install it with `%s`" % (
                    source, ceph_component.INSTALL_COMMAND)))
        target = Path(site) / source.name
        if not target.exists():
            target.symlink_to(source)


# -- the deployment -------------------------------------------------------
def start_ceph(stack: contextlib.ExitStack, tmp: Path
               ) -> ceph_component.Ceph:
    """The throwaway cluster: pools ``BACKENDS`` for the volume user
    (``ceph.client``, a name of this run's, its keyring also where
    os-brick reads it) and ``BACKUP_POOL`` for ``BACKUP_USER``."""
    ceph = ceph_component.Ceph(tmp / "ceph", pool=BACKENDS["rbd1"],
                               client="cinder-%s" % uuid.uuid4().hex[:8])
    stack.enter_context(ceph)
    for pool in list(BACKENDS.values())[1:] + [BACKUP_POOL]:
        ceph.add_pool(pool)
    osd = ", ".join("profile rbd pool=%s" % p for p in BACKENDS.values())
    ceph.ceph("auth", "caps", "client.%s" % ceph.client, "mon",
              "profile rbd", "osd", osd, "mgr", "profile rbd")
    ceph.add_client(BACKUP_USER, pool=BACKUP_POOL)
    ETC_CEPH.mkdir(exist_ok=True)
    keyring = ETC_CEPH / ceph.keyring(ceph.client).name
    keyring.write_text(ceph.keyring(ceph.client).read_text())
    stack.callback(keyring.unlink, missing_ok=True)
    return ceph


def cinder_conf(anchor: Anchor, tmp: Path, port: int, transport_url: str,
                db_url: str, authtoken: str, ceph: ceph_component.Ceph,
                debug: bool = False) -> str:
    """The anchor's cinder.conf, changed for a run in ``tmp``."""
    etc = anchor.folder / "etc"
    parser = _read(etc / "cinder.conf")
    for section in parser.defaults()["enabled_backends"].split(","):
        parser.remove_section(section)
    default = parser[configparser.DEFAULTSECT]
    for option in DROPPED:
        default.pop(option, None)
    default.update({
        "auth_strategy": "keystone", "transport_url": transport_url,
        "osapi_volume_listen_port": str(port), "state_path": str(tmp),
        "debug": str(debug).lower(),
        "api_paste_config": str(etc / "api-paste.ini"),
        "resource_query_filters_file": str(etc / "resource_filters.json"),
        "enabled_backends": ",".join(BACKENDS),
        "backup_driver": BACKUP_DRIVER, "backup_ceph_conf": str(ceph.conf),
        "backup_ceph_user": BACKUP_USER, "backup_ceph_pool": BACKUP_POOL})
    parser["database"]["connection"] = db_url
    rbd = _read(anchor.folder / "rbd" / "cinder-rbd.conf")[ANCHOR_BACKEND]
    for backend, pool in BACKENDS.items():
        parser[backend] = {
            **rbd, "volume_backend_name": backend, "rbd_pool": pool,
            "rbd_user": ceph.client, "rbd_ceph_conf": str(ceph.conf)}
    parser["oslo_concurrency"] = {"lock_path": str(tmp / "lock")}
    parser["coordination"] = {"backend_url": "file://%s"
                              % (tmp / "coordination")}
    parser["privsep_osbrick"] = {"helper_command": "%s --config-file %s" % (
        anchor.venv / "bin" / "privsep-helper", tmp / "cinder.conf")}
    out = io.StringIO()
    parser.write(out)
    return out.getvalue() + authtoken


def fresh_database(stack: contextlib.ExitStack) -> str:
    """An empty MariaDB database of the run's own (utf8mb4, as the
    anchor's), dropped at the end."""
    url, drop = harness.database("mysql")
    stack.callback(drop)
    return sa.engine.make_url(url).update_query_dict(
        {"charset": "utf8mb4"}).render_as_string(hide_password=False)


def start_cinder(anchor: Anchor, stack: contextlib.ExitStack, tmp: Path,
                 keystone: keystone_component.Keystone,
                 service_user: keystone_component.User,
                 debug: bool = False) -> dict[str, object]:
    """Ceph, then cinder-api, -scheduler, -volume and -backup in keystone
    mode (its keystonemiddleware logging in as ``service_user``), in the
    catalog; returns, once every backend's pool is reported and the backup
    service is up, the deployment's facts for ``tempest_run.tempest_conf``
    as the pools report them."""
    ceph = start_ceph(stack, tmp)
    vhost, remove_vhost = harness.broker_vhost()
    stack.callback(remove_vhost)
    # NOTE: a Deployment only for its port and its stop_all.
    dep = harness.Deployment(tmp, vhost, "")
    stack.callback(dep.stop_all)
    conf = tmp / "cinder.conf"
    conf.write_text(cinder_conf(anchor, tmp, dep.port, vhost,
                                fresh_database(stack),
                                keystone.authtoken_section(service_user),
                                ceph, debug=debug))
    subprocess.run([str(anchor.venv / "bin" / "cinder-manage"),
                    "--config-file", str(conf), "db", "sync"], check=True,
                   capture_output=True, timeout=300)
    keystone.register_service("http://127.0.0.1:%d/v3/%%(project_id)s"
                              % dep.port, name="cinder")
    for name in SERVICES:
        with open(tmp / ("cinder-%s.out" % name), "ab") as out:
            dep.procs[name] = subprocess.Popen(
                [str(anchor.venv / "bin" / ("cinder-" + name)),
                 "--config-file",
                 str(conf), "--log-file", str(tmp / ("cinder-%s.log" % name))],
                cwd=tmp, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
    admin = harness.Client("http://127.0.0.1:%d/v3/%s" % (
        dep.port, keystone.project_id(keystone.admin.project)),
        token=keystone.project_token(keystone.admin))

    def ready() -> dict[str, dict]:
        pools = admin.pools()
        host = _read(conf).defaults()["host"]
        backup = admin.services_up().get(("cinder-backup", host))
        return pools if len(pools) == len(BACKENDS) and backup == "up" \
            else {}
    pools = harness.wait_for(ready, timeout=START_TIMEOUT, interval=1,
                             what="the anchor backends' pools and its "
                             "backup service, through keystone auth (logs "
                             "in %s)" % tmp)
    return {"backends": sorted({p["volume_backend_name"]
                                for p in pools.values()}),
            "vendor_name": _one(pools, "vendor_name"),
            "storage_protocol": _one(pools, "storage_protocol"),
            "backup": True}


def _read(path: Path) -> configparser.ConfigParser:
    """An oslo.config file as configparser reads it, names as written."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path)
    return parser


def _one(pools: dict[str, dict], key: str) -> str:
    """The value all pools report for ``key``."""
    values = {capabilities[key] for capabilities in pools.values()}
    assert len(values) == 1, "pools differ in %s: %s" % (key, values)
    return values.pop()


def main(argv: list[str] | None = None) -> int:
    """``setup``: make the anchor's venv and say what it holds."""
    parser = argparse.ArgumentParser(
        description="Make the Cinder anchor's venv (ANCHOR_HOME/venv) for "
        "tempest_run --anchor, cinder_cluster and cinder_failover.")
    parser.add_argument("--anchor", type=Path, required=True,
                        metavar="ANCHOR_DIR", help="the anchor's folder")
    parser.add_argument("--anchor-home", type=Path,
                        default=os.environ.get("ANCHOR_HOME"),
                        help="where its venv goes (default: $ANCHOR_HOME, "
                        "else ANCHOR_DIR/.work)")
    args = parser.parse_args(argv)
    anchor = Anchor(args.anchor, args.anchor_home or args.anchor / ".work")
    try:
        print(setup(anchor), "in", anchor.venv)
    except harness.Unavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
