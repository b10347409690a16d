"""Attach and detach on this host: os-brick plus the api's RPC door.

Detach deletes the attachment first and disconnects the host device only
when the answer says no other attachment of the volume shares this host's
connection (``shared_connections_by_attachment``, computed in the same
transaction as the delete), so two instances on one host never lose the
device under each other.
"""

import os
from typing import Any

from os_brick import privileged as brick_privileged
from os_brick.initiator import connector as brick_connector
from oslo_config import cfg
from oslo_log import log as logging

from services.api import rpcapi as api_rpcapi

LOG = logging.getLogger(__name__)


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
        """This host's os-brick connector properties."""
        agent = self.conf.agent
        return brick_connector.get_connector_properties(
            agent.root_helper, agent.my_ip, agent.multipath, False,
            host=self.conf.host)

    def _brick(self, info: dict) -> Any:
        return brick_connector.InitiatorConnector.factory(
            info["driver_volume_type"].upper(), self.conf.agent.root_helper,
            use_multipath=self.conf.agent.multipath)

    def attach(self, ctxt: Any, volume_id: str, instance_uuid: str | None,
               mode: str | None = None) -> dict:
        """Create the attachment with our connector, connect, complete.

        :returns: the attachment view plus ``device`` (os-brick's answer).
        """
        attachment = self.api.attachment_create(
            ctxt, volume_id, instance_uuid=instance_uuid,
            connector=self.properties(), mode=mode)
        info = attachment["connection_info"]
        try:
            device = self._brick(info).connect_volume(info)
        except Exception:
            LOG.exception("Connecting attachment %s failed; removing it",
                          attachment["id"])
            self.api.attachment_delete(ctxt, attachment["id"])
            raise
        self.api.attachment_complete(ctxt, attachment["id"])
        return dict(attachment, device=device)

    def detach(self, ctxt: Any, attachment_id: str) -> dict:
        """Delete the attachment; disconnect if no one else shares it."""
        attachment = self.api.attachment_get(ctxt, attachment_id)
        result = self.api.attachment_delete(ctxt, attachment_id)
        shared = result.get("shared_connections_by_attachment") or []
        info = attachment.get("connection_info") or {}
        if info and not shared:
            self._brick(info).disconnect_volume(info, None)
        return {"attachment_id": attachment_id, "disconnected": not shared,
                "still_sharing": shared}
