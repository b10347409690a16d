"""The data path on this host: read and write an attached volume.

An attachment's ``connection_info`` says how: ``rbd`` volumes are opened in
librbd through os-brick's ``linuxrbd`` (the handle os-brick's RBD connector
gives in its librbd mode; no kernel module), with this host's own keyring;
``iscsi`` volumes are a libiscsi session as this host's initiator
(``iscsi_io.py``; no kernel initiator); ``nfs`` volumes are their file
on the share, opened through libnfs (``nfs_io.py``; no kernel mount);
``local`` volumes are the file at ``device_path``.  A read-only
attachment (``access_mode`` ``ro``) opens the volume read-only, so the
storage layer itself (for iSCSI and NFS, the handle) refuses its writes.
"""

import contextlib
import io
import os
import tempfile
from typing import Any
from typing import Iterator

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from services.agent import iscsi_io
from services.agent import nfs_io

LOG = logging.getLogger(__name__)
#: Seconds librados waits for the monitors before an open fails (instead of
#: hanging with the volume's lock held).
CONNECT_TIMEOUT = 30


class ReadOnlyAttachment(exception.Invalid):
    msg_fmt = "Attachment %(attachment_id)s is read-only: %(reason)s"


class VolumeHandle:
    """An open volume: positional reads and writes, then ``close``."""

    def __init__(self, raw: io.RawIOBase, attachment_id: str,
                 refusals: tuple[type[Exception], ...],
                 clients: list[str] | None = None,
                 read_only: bool = False, rbd_image: Any = None,
                 connection: dict | None = None) -> None:
        self._raw = raw
        self._attachment_id = attachment_id
        self._refusals = refusals
        #: The backend clients this handle reaches the volume through (a
        #: librados instance's address), which a fence revokes.
        self.clients = list(clients or [])
        self.read_only = read_only
        #: An RBD volume's open librbd image (os-brick's ``RBDVolume``,
        #: which passes ``rbd.Image``'s calls on), as Cinder's backup
        #: drivers find it on an RBD volume file; None for other volumes.
        self.rbd_image = rbd_image
        #: The connection's ``data`` it was opened with.
        self.connection = dict(connection or {})

    def read(self, offset: int, length: int) -> bytes:
        self._raw.seek(offset)
        return self._raw.read(length) or b""

    def write(self, offset: int, data: bytes) -> int:
        """Write ``data`` at ``offset`` and flush it to the storage.

        :raises ReadOnlyAttachment: the volume was opened read-only.
        """
        self._raw.seek(offset)
        rest = bytes(data)
        try:
            while rest:
                # a file may write less than asked; librbd writes it all
                # (and wants bytes)
                written = self._raw.write(rest)
                rest = rest[len(rest) if written is None else written:]
            self._raw.flush()
        except self._refusals as exc:
            raise ReadOnlyAttachment(attachment_id=self._attachment_id,
                                     reason="%s: %s" % (type(exc).__name__,
                                                        exc)) from exc
        return len(data)

    def close(self) -> None:
        self._raw.close()


@contextlib.contextmanager
def open_volume(conf: cfg.ConfigOpts, attachment: dict
                ) -> Iterator[VolumeHandle]:
    """Open the volume of a connected ``attachment`` (its detail view).

    :raises InvalidInput: the attachment has no connection, or one of a
        type this host cannot open.
    """
    info = attachment.get("connection_info") or {}
    kind = info.get("driver_volume_type")
    read_only = info.get("access_mode") == "ro"
    opener = _OPENERS.get(kind or "")
    if opener is None:
        raise exception.InvalidInput(
            reason="attachment %s has %s; this host opens rbd, iscsi, nfs "
            "and local connections" % (attachment.get("id"),
                             "connection type %r" % kind if kind
                             else "no connection"))
    handle = opener(conf, info, read_only, attachment["id"])
    try:
        yield handle
    finally:
        handle.close()


def _open_local(conf: cfg.ConfigOpts, info: dict, read_only: bool,
                attachment_id: str) -> VolumeHandle:
    raw = open(info["device_path"], "rb" if read_only else "r+b",
               buffering=0)
    return VolumeHandle(raw, attachment_id, (io.UnsupportedOperation,),
                        read_only=read_only)


def _open_iscsi(conf: cfg.ConfigOpts, info: dict, read_only: bool,
                attachment_id: str) -> VolumeHandle:
    raw, initiator = iscsi_io.login(conf, info, read_only)
    LOG.debug("Logged in to %(iqn)s as %(initiator)s (%(mode)s) for "
              "attachment %(att)s", {"iqn": info["target_iqn"],
                                     "initiator": initiator,
                                     "att": attachment_id,
                                     "mode": "ro" if read_only else "rw"})
    # NOTE(ashlar): no clients to register: the volume node fences the
    # initiator the attachment's connector gave (the same IQN).
    return VolumeHandle(raw, attachment_id, (io.UnsupportedOperation,),
                        read_only=read_only)


def _open_nfs(conf: cfg.ConfigOpts, info: dict, read_only: bool,
              attachment_id: str) -> VolumeHandle:
    raw = nfs_io.open_file(info, read_only)
    LOG.debug("Opened %(name)s on %(export)s (%(mode)s) for attachment "
              "%(att)s", {"name": info.get("name"),
                          "export": info.get("export"), "att": attachment_id,
                          "mode": "ro" if read_only else "rw"})
    return VolumeHandle(raw, attachment_id, (io.UnsupportedOperation,),
                        read_only=read_only)


def _open_rbd(conf: cfg.ConfigOpts, info: dict, read_only: bool,
              attachment_id: str) -> VolumeHandle:
    import rbd
    from os_brick.initiator import linuxrbd

    user = conf.agent.rbd_user or info["auth_username"]
    pool, image = info["name"].split("/", 1)
    cluster = info.get("cluster_name") or "ceph"
    keyring = os.path.join(conf.agent.rbd_keyring_dir,
                           "%s.client.%s.keyring" % (cluster, user))
    with _ceph_conf(info, keyring) as ceph_conf:
        client = linuxrbd.RBDClient(user, pool, conffile=ceph_conf,
                                    rbd_cluster_name=cluster)
        volume = linuxrbd.RBDVolume(client, image, read_only=read_only)
    raw = linuxrbd.RBDVolumeIOWrapper(
        linuxrbd.RBDImageMetadata(volume, pool, user, None))
    LOG.debug("Opened %(name)s (%(mode)s) for attachment %(att)s",
              {"name": info["name"], "att": attachment_id,
               "mode": "ro" if read_only else "rw"})
    return VolumeHandle(raw, attachment_id, (rbd.ReadOnlyImage,),
                        clients=[client.client.get_addrs()],
                        read_only=read_only, rbd_image=volume,
                        connection=info)


@contextlib.contextmanager
def _ceph_conf(info: dict, keyring: str) -> Iterator[str]:
    """A ceph.conf with the attachment's monitors and this host's keyring
    (read by librados when it connects; removed after)."""
    monitors = ",".join("%s:%s" % (host if ":" not in host else "[%s]" % host,
                                   port)
                        for host, port in zip(info["hosts"], info["ports"],
                                              strict=True))
    with tempfile.NamedTemporaryFile("w", prefix="ashlar-ceph-",
                                     suffix=".conf") as conf_file:
        conf_file.write("[global]\nmon_host = %s\nkeyring = %s\n"
                        "client_mount_timeout = %d\nrados_mon_op_timeout = %d\n"
                        % (monitors, keyring, CONNECT_TIMEOUT,
                           CONNECT_TIMEOUT))
        conf_file.flush()
        yield conf_file.name



_OPENERS = {"rbd": _open_rbd, "iscsi": _open_iscsi, "nfs": _open_nfs,
            "local": _open_local}
