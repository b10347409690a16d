"""benchmarks/tempest_run.py's side-by-side comparison and
benchmarks/tempest_anchor.py's cinder.conf for the RBD anchor with
backups."""

import configparser
import types
from pathlib import Path

from benchmarks import tempest_anchor
from benchmarks import tempest_run

BACKUPS = "tempest.api.volume.admin.test_volumes_backup.VolumesBackupsAdminTest"
PLUGIN = ("cinder_tempest_plugin.api.volume.test_volume_backup."
          "VolumesBackupsTest")


def outcome(passed=(), failed=None, skipped=None) -> tempest_run.Outcome:
    return tempest_run.Outcome(passed=list(passed), failed=failed or {},
                               skipped=skipped or {})


def test_class_of_shortens_and_counts_set_up_errors():
    assert tempest_run.class_of(BACKUPS + ".test_x") == \
        "admin.test_volumes_backup.VolumesBackupsAdminTest"
    assert tempest_run.class_of(PLUGIN + ".test_y") == \
        "plugin:test_volume_backup.VolumesBackupsTest"
    assert tempest_run.class_of("setUpClass (%s)" % BACKUPS) == \
        "admin.test_volumes_backup.VolumesBackupsAdminTest"


def test_compare_lists_what_cinder_passes_and_ashlar_does_not():
    ashlar = outcome([BACKUPS + ".a"], {BACKUPS + ".b": "AssertionError"},
                     {PLUGIN + ".c": "no Neutron"})
    cinder = outcome([BACKUPS + ".b", PLUGIN + ".c"],
                     {BACKUPS + ".a": "BadRequest"})
    text = tempest_run.compare(ashlar, cinder)
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()
            if line.startswith(("admin.", "plugin:", "total"))}
    assert rows["admin.test_volumes_backup.VolumesBackupsAdminTest"] == \
        ["1", "1", "0", "1", "1", "0"]
    assert rows["plugin:test_volume_backup.VolumesBackupsTest"] == \
        ["0", "0", "1", "1", "0", "0"]
    assert rows["total"] == ["1", "1", "1", "2", "1", "0"]
    assert "Cinder passes, Ashlar does not: 2" in text
    assert "%s.b  # fail: AssertionError" % BACKUPS in text
    assert "%s.c  # skip: no Neutron" % PLUGIN in text
    assert "Ashlar passes, Cinder does not: 1" in text


def test_conf_diff_names_only_the_lines_that_differ(tmp_path: Path):
    (tmp_path / "a").write_text("[volume]\nx = 1\nvendor_name = Ashlar\n")
    (tmp_path / "b").write_text("[volume]\nx = 1\nvendor_name = Open\n")
    assert tempest_run.conf_diff(tmp_path / "a", tmp_path / "b") == [
        "-vendor_name = Ashlar", "+vendor_name = Open"]


def test_cinder_conf_has_two_rbd_backends_and_ceph_backups(tmp_path: Path):
    folder = tmp_path / "anchor"
    (folder / "etc").mkdir(parents=True)
    (folder / "rbd").mkdir()
    (folder / "etc" / "cinder.conf").write_text(
        "[DEFAULT]\nauth_strategy = noauth\nhost = anchor\n"
        "enabled_backends = ma,plain\nquota_volumes = -1\n"
        "[database]\nconnection = mysql+pymysql://c@h/cinder\n"
        "[ma]\nvolume_driver = anchor_driver.AnchorVolumeDriver\n"
        "[plain]\nvolume_driver = anchor_driver.AnchorVolumeDriver\n")
    (folder / "rbd" / "cinder-rbd.conf").write_text(
        "[rbd_ma]\nvolume_driver = cinder.volume.drivers.rbd.RBDDriver\n"
        "rbd_pool = volumes\nrbd_user = cinder\nrbd_ceph_conf = /tmp/x\n")
    anchor = tempest_anchor.Anchor(folder, tmp_path / "home")
    ceph = types.SimpleNamespace(conf=tmp_path / "ceph.conf",
                                 client="cinder-abc")
    text = tempest_anchor.cinder_conf(
        anchor, tmp_path / "run", 8799, "rabbit://v", "mysql+pymysql://d",
        "[keystone_authtoken]\nusername = cinder\n", ceph)  # type: ignore
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_string(text)
    default = conf.defaults()
    assert default["auth_strategy"] == "keystone"
    assert "quota_volumes" not in default
    assert default["enabled_backends"] == "rbd1,rbd2"
    assert default["backup_driver"] == tempest_anchor.BACKUP_DRIVER
    assert default["backup_ceph_pool"] == "backups"
    assert default["backup_ceph_conf"] == str(ceph.conf)
    assert not conf.has_section("ma") and not conf.has_section("plain")
    assert {conf["rbd1"]["rbd_pool"], conf["rbd2"]["rbd_pool"]} == \
        {"volumes", "volumes2"}
    for backend in ("rbd1", "rbd2"):
        assert conf[backend]["volume_driver"] == \
            "cinder.volume.drivers.rbd.RBDDriver"
        assert conf[backend]["rbd_user"] == "cinder-abc"
        assert conf[backend]["volume_backend_name"] == backend
    assert conf["database"]["connection"] == "mysql+pymysql://d"
    assert "privsep-helper" in conf["privsep_osbrick"]["helper_command"]
    assert conf["keystone_authtoken"]["username"] == "cinder"
