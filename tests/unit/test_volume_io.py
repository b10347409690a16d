"""services.agent.volume_io: a local connection's file opened in the
attachment's mode; what cannot be opened is refused clearly."""

import pytest
from oslo_config import cfg

from common import conf as ashlar_conf
from common import exception
from services.agent import volume_io


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    return conf


def _attachment(path, mode):
    return {"id": "a1", "connection_info": {
        "driver_volume_type": "local", "device_path": str(path),
        "access_mode": mode}}


def test_read_write_attachment_writes_and_reads_back(conf, tmp_path):
    path = tmp_path / "volume-v1.raw"
    path.write_bytes(bytes(8192))
    with volume_io.open_volume(conf, _attachment(path, "rw")) as volume:
        assert volume.write(4096, b"shared bytes") == 12
        assert volume.read(4096, 12) == b"shared bytes"
    assert path.read_bytes()[4096:4108] == b"shared bytes"


def test_read_only_attachment_refuses_writes(conf, tmp_path):
    path = tmp_path / "volume-v1.raw"
    path.write_bytes(bytes(4096))
    with volume_io.open_volume(conf, _attachment(path, "ro")) as volume:
        with pytest.raises(volume_io.ReadOnlyAttachment, match="a1"):
            volume.write(0, b"no")
        assert volume.read(0, 2) == b"\0\0"
    assert path.read_bytes() == bytes(4096)


@pytest.mark.parametrize("info, says", [
    ({}, "no connection"),
    ({"driver_volume_type": "fibre_channel"}, "'fibre_channel'"),
])
def test_what_this_host_cannot_open_is_refused(conf, info, says):
    with pytest.raises(exception.InvalidInput, match=says):
        with volume_io.open_volume(conf, {"id": "a1",
                                          "connection_info": info}):
            pass
