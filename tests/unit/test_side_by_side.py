"""benchmarks.side_by_side: the anchor's database and driver."""

import argparse
import contextlib
from pathlib import Path

from benchmarks import side_by_side


def _args(tmp_path: Path, driver: str) -> argparse.Namespace:
    anchor = tmp_path / "anchor"
    (anchor / "etc").mkdir(parents=True)
    (anchor / "etc" / "cinder.conf").write_text(
        "[database]\nconnection = %s\n" % side_by_side.CINDER_URLS["mysql"])
    return argparse.Namespace(anchor=anchor, anchor_home=tmp_path / "home",
                              cinder_db=driver)


def test_pymysql_keeps_the_anchors_own_conf(tmp_path, monkeypatch):
    monkeypatch.delenv("CONF", raising=False)
    installed = []
    monkeypatch.setattr(side_by_side.mysqlclient, "install", installed.append)
    side_by_side.cinder_driver(_args(tmp_path, "mysql"), tmp_path,
                               contextlib.ExitStack())
    assert installed == []
    assert "CONF" not in side_by_side.os.environ


def test_mysqlclient_is_installed_and_named_in_a_copy(tmp_path, monkeypatch):
    monkeypatch.delenv("CONF", raising=False)
    installed = []
    monkeypatch.setattr(side_by_side.mysqlclient, "install", installed.append)
    args = _args(tmp_path, "mysqldb")
    side_by_side.cinder_driver(args, tmp_path, contextlib.ExitStack())
    assert installed == [str(tmp_path / "home" / "venv" / "bin" / "python")]
    conf = Path(side_by_side.os.environ["CONF"])
    assert conf == tmp_path / "cinder.conf"
    assert conf.read_text() == "[database]\nconnection = %s\n" % (
        "mysql://cinder:cinder@127.0.0.1/cinder?charset=utf8mb4")
    assert side_by_side.CINDER_URLS["mysql"] in (
        args.anchor / "etc" / "cinder.conf").read_text()
    anchor = side_by_side.Anchor(argparse.Namespace(
        anchor=args.anchor, anchor_home=args.anchor_home), tmp_path, 1)
    assert anchor.conf == str(conf)


def test_postgresql_gets_a_database_of_its_own_dropped_at_the_end(
        tmp_path, monkeypatch):
    monkeypatch.delenv("CONF", raising=False)
    installed, made, dropped = [], [], []
    monkeypatch.setattr(side_by_side.mysqlclient, "install", installed.append)

    def database(args, conf):
        made.append(conf.read_text())
        return lambda: dropped.append(True)
    monkeypatch.setattr(side_by_side, "postgres_database", database)
    with contextlib.ExitStack() as stack:
        side_by_side.cinder_driver(_args(tmp_path, "postgresql"), tmp_path,
                                   stack)
        assert made == ["[database]\nconnection = "
                        "postgresql://postgres@127.0.0.1/cinder\n"]
        assert dropped == []
    assert dropped == [True]
    assert installed == []
    assert side_by_side.os.environ["CONF"] == str(tmp_path / "cinder.conf")
