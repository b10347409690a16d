"""services.agent.iscsi_io: bytes over whole blocks, the host's IQN and
registration; tests/functional/test_iscsi.py uses it on a real tgtd."""

import io

import pytest
from oslo_config import cfg

from common import conf as ashlar_conf
from common import libiscsi
from services.agent import iscsi_io
from services.agent import volume_io

BLOCK = 512


class FakeSession:
    """A LUN in memory that accepts whole blocks only, as libiscsi does."""

    def __init__(self, blocks=64, reservation=None, conflict=False):
        self.blocks, self.block_size = blocks, BLOCK
        self.data = bytearray(blocks * BLOCK)
        self.commands = []
        self.reservation = reservation
        self.conflict = conflict
        self.closed = False

    def _aligned(self, offset, length):
        assert offset % BLOCK == 0 and length % BLOCK == 0
        assert length <= iscsi_io.MAX_TRANSFER

    def read(self, offset, length):
        self._aligned(offset, length)
        self.commands.append(("read", offset, length))
        return bytes(self.data[offset:offset + length])

    def write(self, offset, data):
        self._aligned(offset, len(data))
        self.commands.append(("write", offset, len(data)))
        self.data[offset:offset + len(data)] = data

    def register(self, key):
        self.commands.append(("register", key))

    def read_reservation(self):
        return self.reservation

    def reserve(self, key):
        self.commands.append(("reserve", key))
        if self.conflict:
            raise libiscsi.ReservationConflict("PR OUT", 0x18, 0, 0, "")

    def close(self):
        self.closed = True


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    ashlar_conf.register_opts(conf)
    conf([], project="ashlar", default_config_files=[])
    conf.set_override("host", "Compute-A")
    return conf


@pytest.fixture
def no_open_iscsi(monkeypatch, tmp_path):
    monkeypatch.setattr(iscsi_io, "INITIATOR_FILE", str(tmp_path / "none"))


INFO = {"driver_volume_type": "iscsi", "target_portal": "127.0.0.1:3260",
        "target_iqn": "iqn.2010-10.org.openstack:volume-v1",
        "target_lun": 1, "auth_method": "CHAP", "auth_username": "u",
        "auth_password": "p"}


def test_unaligned_writes_merge_whole_blocks():
    session = FakeSession()
    lun = iscsi_io.LunIO(session, read_only=False)
    lun.seek(700)
    assert lun.write(b"x" * 1000) == 1000
    assert session.commands == [("read", 512, 1536), ("write", 512, 1536)]
    assert bytes(session.data[690:1710]) == (
        bytes(10) + b"x" * 1000 + bytes(10))
    lun.seek(695)
    assert lun.read(10) == bytes(5) + b"x" * 5
    assert lun.tell() == 705


def test_large_transfers_are_split(monkeypatch):
    monkeypatch.setattr(iscsi_io, "MAX_TRANSFER", 4 * BLOCK)
    session = FakeSession()
    lun = iscsi_io.LunIO(session, read_only=False)
    lun.write(b"y" * 10 * BLOCK)
    assert [c for c in session.commands if c[0] == "write"] == [
        ("write", 0, 2048), ("write", 2048, 2048), ("write", 4096, 1024)]
    lun.seek(0)
    assert lun.read(10 * BLOCK) == b"y" * 10 * BLOCK


def test_reads_stop_at_the_end_and_writes_may_not_pass_it():
    lun = iscsi_io.LunIO(FakeSession(blocks=2), read_only=False)
    lun.seek(-10, io.SEEK_END)
    assert lun.read(100) == bytes(10)
    assert lun.read(1) == b""
    with pytest.raises(OSError, match="past the end"):
        lun.write(b"z")


def test_read_only_refuses_writes():
    session = FakeSession()
    lun = iscsi_io.LunIO(session, read_only=True)
    assert not lun.writable()
    with pytest.raises(io.UnsupportedOperation):
        lun.write(b"no")
    assert session.commands == []
    lun.close()
    assert session.closed


def test_initiator_from_open_iscsi_then_option_then_host(conf, tmp_path,
                                                         monkeypatch,
                                                         no_open_iscsi):
    assert iscsi_io.initiator_name(conf) == (
        "iqn.2010-10.org.openstack.ashlar:compute-a")
    conf.set_override("iscsi_initiator", "iqn.x:set", group="agent")
    assert iscsi_io.initiator_name(conf) == "iqn.x:set"
    names = tmp_path / "initiatorname.iscsi"
    names.write_text("## comment\nInitiatorName=iqn.1993-08.org.debian:01:"
                     "abc\n")
    monkeypatch.setattr(iscsi_io, "INITIATOR_FILE", str(names))
    assert iscsi_io.initiator_name(conf) == "iqn.1993-08.org.debian:01:abc"


@pytest.mark.parametrize("reservation, conflict, reserved", [
    (None, False, True),
    (None, True, True),   # another host reserved first: fine
    ((7, libiscsi.WRITE_EXCLUSIVE_REGISTRANTS_ONLY), False, False),
])
def test_a_writer_registers_its_host_key(conf, monkeypatch, no_open_iscsi,
                                         reservation, conflict, reserved):
    session = FakeSession(reservation=reservation, conflict=conflict)
    logins = []

    def login(*args, **kwargs):
        logins.append((args, kwargs))
        return session
    monkeypatch.setattr(libiscsi, "Session", login)
    with volume_io.open_volume(conf, {"id": "a1",
                                      "connection_info": INFO}) as volume:
        assert volume.clients == []
        volume.write(0, b"w")
    key = libiscsi.registration_key("Compute-A")
    assert session.commands[:2] == [("register", key)] + (
        [("reserve", key)] if reserved else [("read", 0, BLOCK)])
    assert logins == [(("127.0.0.1:3260", INFO["target_iqn"], 1,
                        "iqn.2010-10.org.openstack.ashlar:compute-a"),
                       {"chap": ("u", "p")})]
    assert session.closed


def test_a_reader_does_not_register(conf, monkeypatch, no_open_iscsi):
    session = FakeSession()
    monkeypatch.setattr(libiscsi, "Session", lambda *a, **k: session)
    attachment = {"id": "a1", "connection_info": dict(INFO,
                                                      access_mode="ro")}
    with volume_io.open_volume(conf, attachment) as volume:
        with pytest.raises(volume_io.ReadOnlyAttachment):
            volume.write(0, b"no")
        assert volume.read(0, 4) == bytes(4)
    assert session.commands == [("read", 0, BLOCK)]


def test_a_moves_source_names_the_initiator_to_log_in_as(conf, monkeypatch,
                                                         no_open_iscsi):
    """A volume node reading a moving volume logs in as the initiator its
    source's node named (its fence initiator), not as itself."""
    logins = []

    def login(*args, **kwargs):
        logins.append(args[3])
        return FakeSession()
    monkeypatch.setattr(libiscsi, "Session", login)
    fencer = "iqn.2010-10.org.openstack:fencer.node1-iscsi"
    with volume_io.open_volume(conf, {"id": "move-of-v", "connection_info":
                                      dict(INFO, access_mode="ro",
                                           initiator=fencer)}) as volume:
        assert volume.read(0, 4) == bytes(4)
    assert logins == [fencer]
