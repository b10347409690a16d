"""The Ceph backup driver's pure parts (the rest runs on a real Ceph in
tests/functional/test_backup_ceph.py)."""

from oslo_config import cfg

from common import conf as ashlar_conf
from drivers.backup import base
from drivers.backup import ceph
from drivers.backup import posix
from services.backup import manager


def _conf(**overrides):
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], default_config_files=[])
    for key, value in overrides.items():
        conf.set_override(key, value)
    return conf


def test_extents_merge_when_they_touch_or_overlap():
    assert ceph._merge([(10, 5), (0, 10), (30, 1), (31, 4), (40, 2),
                        (41, 1)]) == [(0, 15), (30, 5), (40, 2)]
    assert ceph._merge([]) == []


def test_backup_snapshots_are_told_from_others():
    name = ceph.SNAP_FORMAT % ("0b6e8a3c-1d1e-4a4e-9a57-2f2f5b8f1a11",
                               "1795953560.246494")
    assert ceph.is_backup_snap(name)
    for other in ("snapshot-0b6e8a3c", "volume-x.clone_snap",
                  "backup.snap.1"):
        assert not ceph.is_backup_snap(other)


def test_the_default_container_is_the_configured_pool():
    driver = ceph.CephBackupDriver(_conf(backup_ceph_pool="bk"))
    assert driver.pool(None) == driver.pool("backups") == "bk"
    assert driver.pool("other") == "other"


def test_zero_chunks():
    assert base.is_zero(bytes(4096)) and base.is_zero(b"")
    assert not base.is_zero(bytes(4095) + b"\1")


def test_backup_driver_picks_the_driver():
    assert isinstance(manager.load_driver(_conf()), posix.PosixBackupDriver)
    chosen = manager.load_driver(_conf(backup_driver="drivers.backup.ceph"))
    assert isinstance(chosen, ceph.CephBackupDriver)
    assert chosen.SERVICE == "drivers.backup.ceph" and chosen.SNAPSHOTS_SOURCE
