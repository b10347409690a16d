"""The Cinder anchor under Tempest: ``python -m benchmarks.tempest_run
--anchor ANCHOR_DIR [--anchor-home ANCHOR_HOME]``.

Starts the real Cinder of the anchor's folder (not part of this
repository: ``etc/``, ``anchor_driver.py``; cinder-api,
cinder-scheduler and cinder-volume from its venv, its two
``anchor_driver`` backends, its MariaDB database ``cinder``) in keystone
mode behind the Keystone ``tempest_run`` started, so that the same
tempest.conf and the same Tempest command measure Cinder as they measure
Ashlar.  The anchor's ``etc/cinder.conf`` is copied and changed only where
a Tempest deployment must differ:

* ``auth_strategy = keystone`` and a ``[keystone_authtoken]`` section for
  a service user made as Ashlar's is;
* Cinder's default quotas (the anchor lifts them for its benchmark; Ashlar
  runs Tempest with Cinder's defaults);
* both backends multiattach, as Ashlar's two file backends are (the
  anchor's ``plain`` is not);
* a RabbitMQ vhost, a port, and state, lock and log folders of the run's
  own; the database is emptied and synced first.

Policy is Cinder 29's default: new defaults, scope enforced (oslo.policy
6 has no option to turn scope checks off).  The anchor's venv is
``ANCHOR_HOME/venv``; the anchor's RESULTS.md says how to make it.

No cinder-backup runs (the anchor's ``anchor_driver`` has no data path
for Cinder's backup drivers), so the run declares ``[volume-feature-enabled]
backup = false`` and the backup tests skip on this side only.

What fails there for want of a driver, not of Cinder: ``anchor_driver``
has no ``retype`` (an in-place retype, migration_policy never, is refused),
no ``revert_to_snapshot``, and no data path for Cinder's generic copy
(which also needs cinder-rootwrap): retype with migration and revert fail.
"""

import configparser
import contextlib
import dataclasses
import io
import os
import subprocess
from pathlib import Path

import sqlalchemy as sa

from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component

SERVICES = ("api", "scheduler", "volume")
#: The anchor's options that a Tempest run leaves at Cinder's defaults.
DROPPED = ("quota_volumes", "quota_snapshots", "quota_gigabytes",
           "quota_backups", "quota_backup_gigabytes", "quota_groups")
START_TIMEOUT = 180


@dataclasses.dataclass(frozen=True)
class Anchor:
    """Where the anchor is: its folder (``etc/``, ``anchor_driver.py``,
    ``RESULTS.md``) and its home (``venv/``, made once as RESULTS.md
    says)."""

    folder: Path
    home: Path

    @property
    def venv(self) -> Path:
        return self.home / "venv"


def available(anchor: Anchor) -> str:
    """``cinder <version> (anchor)``; ``harness.Unavailable`` without the
    anchor's venv."""
    try:
        return "cinder %s (anchor)" % subprocess.run(
            [str(anchor.venv / "bin" / "python"), "-c",
             "import importlib.metadata as m; print(m.version('cinder'))"],
            check=True, text=True, capture_output=True,
            timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        harness.unavailable("the Cinder anchor's venv %s (see %s)" % (
            anchor.venv, anchor.folder / "RESULTS.md"), exc)


def cinder_conf(anchor: Anchor, tmp: Path, port: int, transport_url: str,
                authtoken: str, debug: bool = False) -> str:
    """The anchor's cinder.conf, changed for a run in ``tmp``."""
    etc = anchor.folder / "etc"
    parser = _read(etc / "cinder.conf")
    default = parser.defaults()
    for option in DROPPED:
        default.pop(option, None)
    default.update({
        "auth_strategy": "keystone", "transport_url": transport_url,
        "osapi_volume_listen_port": str(port), "state_path": str(tmp),
        "debug": str(debug).lower(),
        "api_paste_config": str(etc / "api-paste.ini"),
        "resource_query_filters_file": str(etc / "resource_filters.json")})
    for backend in default["enabled_backends"].split(","):
        parser[backend]["anchor_multiattach"] = "true"
    parser["oslo_concurrency"] = {"lock_path": str(tmp / "lock")}
    parser["coordination"] = {"backend_url": "file://%s"
                              % (tmp / "coordination")}
    out = io.StringIO()
    parser.write(out)
    return out.getvalue() + authtoken


def reset_database(anchor: Anchor, conf: Path) -> None:
    """Empty the anchor's database (as Ashlar's run gets a new one) and
    ``cinder-manage db sync`` it."""
    url = sa.engine.make_url(_read(conf)["database"]["connection"])
    engine = sa.create_engine(url.set(database=""),
                              isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % url.database)
            conn.exec_driver_sql("CREATE DATABASE %s CHARACTER SET utf8mb4"
                                 % url.database)
    except sa.exc.OperationalError as exc:
        harness.unavailable("the anchor's database", exc)
    finally:
        engine.dispose()
    subprocess.run([str(anchor.venv / "bin" / "cinder-manage"), "--config-file",
                    str(conf), "db", "sync"], check=True, capture_output=True,
                   timeout=300)


def start_cinder(anchor: Anchor, stack: contextlib.ExitStack, tmp: Path,
                 keystone: keystone_component.Keystone,
                 service_user: keystone_component.User,
                 debug: bool = False) -> dict[str, object]:
    """cinder-api, -scheduler and -volume in keystone mode (its
    keystonemiddleware logging in as ``service_user``), in the catalog;
    returns, once every backend's pool is reported, the deployment's facts
    for ``tempest_run.tempest_conf`` as the pools report them."""
    vhost, remove_vhost = harness.broker_vhost()
    stack.callback(remove_vhost)
    # NOTE: a Deployment only for its port and its stop_all.
    dep = harness.Deployment(tmp, vhost, "")
    stack.callback(dep.stop_all)
    conf = tmp / "cinder.conf"
    conf.write_text(cinder_conf(anchor, tmp, dep.port, vhost,
                                keystone.authtoken_section(service_user),
                                debug=debug))
    reset_database(anchor, conf)
    keystone.register_service("http://127.0.0.1:%d/v3/%%(project_id)s"
                              % dep.port, name="cinder")
    env = {**os.environ, "PYTHONPATH": str(anchor.folder)}  # anchor_driver
    for name in SERVICES:
        with open(tmp / ("cinder-%s.out" % name), "ab") as out:
            dep.procs[name] = subprocess.Popen(
                [str(anchor.venv / "bin" / ("cinder-" + name)),
                 "--config-file",
                 str(conf), "--log-file", str(tmp / ("cinder-%s.log" % name))],
                cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
    admin = harness.Client("http://127.0.0.1:%d/v3/%s" % (
        dep.port, keystone.project_id(keystone.admin.project)),
        token=keystone.project_token(keystone.admin))
    backends = len(_read(conf).defaults()["enabled_backends"].split(","))

    def all_pools() -> dict[str, dict]:
        pools = admin.pools()
        return pools if len(pools) == backends else {}
    pools = harness.wait_for(all_pools, timeout=START_TIMEOUT, interval=1,
                             what="the anchor backends' pools, through "
                             "keystone auth (logs in %s)" % tmp)
    return {"backends": sorted({p["volume_backend_name"]
                                for p in pools.values()}),
            "vendor_name": _one(pools, "vendor_name"),
            "storage_protocol": _one(pools, "storage_protocol"),
            # NOTE: no cinder-backup yet (issue 41: Cinder's Ceph backup
            # driver on the RBD anchor), so its tests skip here.
            "backup": False}


def _read(path: Path) -> configparser.ConfigParser:
    """An oslo.config file as configparser reads it, names as written."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(path)
    return parser


def _one(pools: dict[str, dict], key: str) -> str:
    """The value all pools report for ``key``."""
    values = {capabilities[key] for capabilities in pools.values()}
    assert len(values) == 1, "pools differ in %s: %s" % (key, values)
    return values.pop()
