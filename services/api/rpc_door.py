"""The api's RPC endpoint for compute agents: attachments over the bus.

Every api worker serves topic ``ashlar-api``; a call goes to one of them.
Answers are the REST views, so both doors say the same thing.
"""

import os
import uuid
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg

from common import constants
from common import exception
from common import rpc
from services.api import rpcapi
from services.api.views import attachments as views


class ApiEndpoint:
    """Attachment operations for RPC callers; thin over the operations."""

    target = messaging.Target(version=rpcapi.ApiAPI.RPC_API_VERSION)

    def __init__(self, attachment_ops: Any) -> None:
        self.ops = attachment_ops

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_create(self, ctxt: Any, volume_id: str,
                          instance_uuid: str | None = None,
                          connector: dict | None = None,
                          mode: str | None = None) -> dict:
        row = self.ops.create(ctxt, volume_id, instance_uuid=instance_uuid,
                              connector=connector, mode=mode)
        return views.detail(row)

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_update(self, ctxt: Any, attachment_id: str,
                          connector: dict) -> dict:
        return views.detail(self.ops.update(ctxt, attachment_id, connector))

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_complete(self, ctxt: Any, attachment_id: str) -> None:
        self.ops.complete(ctxt, attachment_id)

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_get(self, ctxt: Any, attachment_id: str) -> dict:
        row, shared = self.ops.get(ctxt, attachment_id)
        return views.show(row, shared)

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_delete(self, ctxt: Any, attachment_id: str) -> dict:
        return views.deleted(self.ops.delete(ctxt, attachment_id))


def start(conf: cfg.ConfigOpts, attachment_ops: Any) -> messaging.MessageHandlingServer:
    """Serve the door in this worker (after gunicorn's fork)."""
    target = messaging.Target(
        topic=constants.API_TOPIC,
        server="api-%s-%d-%s" % (conf.host, os.getpid(), uuid.uuid4().hex[:8]))
    server = rpc.get_server(target, [ApiEndpoint(attachment_ops)])
    server.start()
    return server
