"""services/agent/nfs_io.py on a local folder standing in for the share
(the real libnfs on a real ganesha: tests/functional/test_nfs.py)."""

import pytest

from common import exception
from services.agent import nfs_io
from services.agent import volume_io
from tests.unit.drivers import fake_libnfs


@pytest.fixture
def share(tmp_path, monkeypatch):
    monkeypatch.setattr(nfs_io.libnfs, "Share", fake_libnfs.FakeShare)
    (tmp_path / "volume-1.raw").write_bytes(bytes(8192))
    return tmp_path


def attachment(share, mode="rw", **info):
    return {"id": "att-1", "connection_info": {
        "driver_volume_type": "nfs", "export": "127.0.0.1:%s" % share,
        "name": "volume-1.raw", "format": "raw", "access_mode": mode,
        "volume_id": "1", **info}}


def test_write_then_read(share):
    with volume_io.open_volume(None, attachment(share)) as handle:
        assert handle.write(4000, b"through nfs") == 11
        assert handle.read(4000, 11) == b"through nfs"
        assert handle.read(8190, 100) == bytes(2)
    assert (share / "volume-1.raw").read_bytes()[4000:4011] == b"through nfs"


def test_a_read_only_attachment_refuses_writes(share):
    with volume_io.open_volume(None, attachment(share, "ro")) as handle:
        with pytest.raises(volume_io.ReadOnlyAttachment):
            handle.write(0, b"no")
        assert handle.read(0, 2) == bytes(2)
    assert (share / "volume-1.raw").read_bytes() == bytes(8192)


def test_a_write_past_the_end_is_refused(share):
    with volume_io.open_volume(None, attachment(share)) as handle:
        with pytest.raises(OSError, match="past the end"):
            handle.write(8190, b"abc")
    assert (share / "volume-1.raw").stat().st_size == 8192


@pytest.mark.parametrize("info", [{"format": "qcow2"}, {"name": "../x"},
                                  {"name": ""}])
def test_what_this_host_cannot_open_is_refused(share, info):
    with pytest.raises(exception.InvalidInput):
        with volume_io.open_volume(None, attachment(share, **info)):
            pass


def test_share_url_prefers_the_libnfs_url():
    assert nfs_io.share_url({"export": "nas:/x", "share_url":
                             "nfs://nas/x?nfsport=1"}) == "nfs://nas/x?nfsport=1"
    assert nfs_io.share_url({"export": "nas:/srv/x"}) == "nfs://nas/srv/x"
    with pytest.raises(exception.InvalidInput):
        nfs_io.share_url({"export": "nas"})
