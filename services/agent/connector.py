"""Attach and detach on this host: os-brick plus the api's RPC door.

An attach creates the attachment with this host's connector (or gives
the connector to one the volume's project made for this host), connects
it with os-brick and completes it.  A detach disconnects the host device
first, only when no other attachment of the volume shares this host's
connection (``shared_connections_by_attachment``), then deletes the
attachment; run again after a crash in between, it finishes the job (a
disconnect of a device already gone changes nothing).  A file lock per
volume keeps an attach and a detach of one volume on this host from
interleaving, so a device is never disconnected under an attachment that
was just made.  RBD volumes are used in librbd, iSCSI volumes in
libiscsi and NFS volumes in libnfs (see volume_io.py): an attach opens
the volume once to prove this host reaches it, and there is no host
device to disconnect.

Every answer must belong to the request (the door echoes its id, and the
attachment and volume are the ones asked for); anything else is refused
before os-brick is touched.
"""

import contextlib
import os
from typing import Iterator

from os_brick import privileged as brick_privileged
from os_brick.initiator import connector as brick_connector
from os_brick.initiator import initiator_connector
from oslo_concurrency import lockutils
import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from services.agent import iscsi_io
from services.agent import volume_io
from services.api import rpcapi as api_rpcapi

LOG = logging.getLogger(__name__)


def _expect(attachment: dict, **expected: object) -> dict:
    """``attachment`` if it has the ``expected`` values.

    :raises ForeignReply: it does not.
    """
    for key, value in expected.items():
        if attachment.get(key) != value:
            raise api_rpcapi.ForeignReply(
                reason="%s is %r, not %r" % (key, attachment.get(key), value))
    return attachment


def _userspace(info: dict) -> bool:
    """An RBD, iSCSI or NFS connection, used in librbd, libiscsi or libnfs
    on this host (nothing mapped or mounted)."""
    return info.get("driver_volume_type") in ("rbd", "iscsi", "nfs")


class HostConnector:
    def __init__(self, conf: cfg.ConfigOpts, api: api_rpcapi.ApiAPI) -> None:
        self.conf = conf
        self.api = api
        if os.geteuid() == 0:
            # NOTE(ashlar): already root: run os-brick's privileged helpers
            # in this process instead of a privsep daemon started through
            # root_helper (which may not exist, e.g. no sudo in a container).
            for context in (brick_privileged.default,
                            brick_privileged.brick_privsep_hide_output):
                context.set_client_mode(False)

    def properties(self) -> dict:
        """This host's os-brick connector properties, with the iSCSI
        initiator this host uses when open-iscsi names none."""
        agent = self.conf.agent
        properties = brick_connector.get_connector_properties(
            agent.root_helper, agent.my_ip, agent.multipath, False,
            host=self.conf.host)
        properties.setdefault("initiator",
                              iscsi_io.initiator_name(self.conf))
        return properties

    def _brick(self, info: dict) -> initiator_connector.InitiatorConnector:
        return brick_connector.InitiatorConnector.factory(
            info["driver_volume_type"].upper(), self.conf.agent.root_helper,
            use_multipath=self.conf.agent.multipath)

    def _connect(self, attachment: dict) -> dict:
        """os-brick's connect; an ``rbd``, ``iscsi`` or ``nfs`` volume,
        which this host reads and writes in userspace (no device), is
        opened and closed once to prove that this host's credentials and mode
        reach it."""
        info = attachment["connection_info"]
        if not _userspace(info):
            return self._brick(info).connect_volume(info)
        with volume_io.open_volume(self.conf, attachment):
            if info["driver_volume_type"] == "iscsi":
                return {"type": "libiscsi", "target_iqn": info["target_iqn"],
                        "target_portal": info["target_portal"]}
            if info["driver_volume_type"] == "nfs":
                return {"type": "libnfs", "export": info["export"],
                        "name": info["name"]}
            return {"type": "librbd", "name": info["name"]}

    def _lock(self, volume_id: str
              ) -> contextlib.AbstractContextManager[object]:
        return lockutils.lock("ashlar-volume-%s" % volume_id, external=True,
                              lock_path=self.conf.agent.lock_path)

    def attach(self, volume_id: str, instance_uuid: str | None,
               mode: str | None = None,
               attachment_id: str | None = None) -> dict:
        """Create the attachment with our connector (or give ours to the
        project's ``attachment_id``), connect, complete.

        :param attachment_id: an attachment of the volume that its project
            made for this host over REST (reserved without a connector, or
            with this host's); its instance stays, and so does its mode if
            it has one.  Only through such an attachment may this host take
            the volume over (docs/fencing.md).
        :returns: the attachment view plus ``device`` (os-brick's answer).
        """
        with self._lock(volume_id):
            attachment = self._attachment(volume_id, instance_uuid, mode,
                                          attachment_id)
            try:
                device = self._connect(attachment)
            except Exception:
                LOG.exception("Connecting attachment %s failed%s",
                              attachment["id"], "" if attachment_id
                              else "; removing it")
                # NOTE(ashlar): the project's row is the project's to
                # delete; unless completed, its lease removes it.
                if attachment_id is None:
                    self.api.attachment_delete(attachment["id"])
                raise
            self._complete(attachment["id"])
        LOG.info("Attached volume %(vol)s as attachment %(att)s",
                 {"vol": volume_id, "att": attachment["id"]})
        return dict(attachment, device=device)

    def _attachment(self, volume_id: str, instance_uuid: str | None,
                    mode: str | None, attachment_id: str | None) -> dict:
        """The attachment, connected at the backend for this host: made
        now, or the project's ``attachment_id`` given this host's
        connector (whose ``mode`` counts only for a reservation made
        without one)."""
        if attachment_id is None:
            return _expect(self.api.attachment_create(
                volume_id, instance_uuid=instance_uuid,
                connector=self.properties(), mode=mode), volume_id=volume_id)
        connector = self.properties()
        if mode:
            connector["mode"] = mode
        return _expect(self.api.attachment_update(attachment_id, connector),
                       id=attachment_id, volume_id=volume_id)

    def _complete(self, attachment_id: str) -> None:
        """``os-complete``, asked once more if the call timed out (it is
        idempotent: the api may have done it and lost the answer).  Should
        it fail again, the row's lease (``agent_attachment_lease``) has the
        volume service remove it."""
        try:
            self.api.attachment_complete(attachment_id)
        except messaging.MessagingTimeout:
            LOG.warning("Completing attachment %s timed out; asking again",
                        attachment_id)
            self.api.attachment_complete(attachment_id)

    def detach(self, attachment_id: str) -> dict:
        """Disconnect (unless another attachment here shares the device),
        then delete the attachment; an attachment already gone is done."""
        try:
            attachment = _expect(self.api.attachment_get(attachment_id),
                                 id=attachment_id)
        except exception.AttachmentNotFound:
            # NOTE(ashlar): gone (a detach that finished before a crash),
            # or another host's: the door says the same of both, and so
            # does this; nothing is touched either way.
            LOG.info("Attachment %s not found: already detached, or not "
                     "this host's", attachment_id)
            return {"attachment_id": attachment_id, "disconnected": None,
                    "still_sharing": [],
                    "not_found": "already detached, or not this host's"}
        with self._lock(attachment["volume_id"]):
            attachment = _expect(self.api.attachment_get(attachment_id),
                                 id=attachment_id,
                                 volume_id=attachment["volume_id"])
            shared = attachment.get("shared_connections_by_attachment") or []
            info = attachment.get("connection_info") or {}
            if info and not shared and not _userspace(info):
                self._brick(info).disconnect_volume(info, None)
            self.api.attachment_delete(attachment_id)
        LOG.info("Detached attachment %(att)s (device %(what)s)",
                 {"att": attachment_id,
                  "what": "kept for %s" % shared if shared
                  else "disconnected"})
        return {"attachment_id": attachment_id,
                "disconnected": bool(info) and not shared,
                "still_sharing": shared}

    def read(self, attachment_id: str, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` of this host's attachment."""
        with volume_io.open_volume(self.conf, self._mine(attachment_id)) as v:
            return v.read(offset, length)

    def write(self, attachment_id: str, offset: int, data: bytes) -> int:
        """Write ``data`` at ``offset`` through this host's attachment.

        :raises ReadOnlyAttachment: the attachment is read-only.
        :raises Fenced: this host was fenced from the volume.
        """
        with self.open(attachment_id) as volume:
            return volume.write(offset, data)

    @contextlib.contextmanager
    def open(self, attachment_id: str) -> Iterator[volume_io.VolumeHandle]:
        """Open this host's attachment as its connection says, and register
        a writable handle's clients with the api before any write, so that
        a fence revokes them (a fenced attachment refuses the
        registration: nothing is written)."""
        with volume_io.open_volume(self.conf,
                                   self._mine(attachment_id)) as volume:
            if volume.clients and not volume.read_only:
                self.api.attachment_complete(attachment_id,
                                             clients=volume.clients)
            yield volume

    def _mine(self, attachment_id: str) -> dict:
        """The attachment, which the door gives only to its own host."""
        return _expect(self.api.attachment_get(attachment_id),
                       id=attachment_id)
