"""The api's RPC endpoint for compute agents: attachments over the bus.

Every api worker serves topic ``ashlar-api``; a call goes to one of them.
Nothing the message says about its sender is believed: the context is
built from the credential it carries, verified as REST verifies it
(``services.api.auth.CredentialVerifier``).  Answers are the REST views,
with the request's id echoed so the caller can tell they are its own.
"""

import os
import uuid

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common import rpc
from common.context import RequestContext
from services.api import auth
from services.api import middleware
from services.api import rpcapi
from services.api import validation
from services.api.microversion import MAX_VERSION
from services.api.operations.attachments import AttachmentOperations
from services.api.operations.fencing import FencingOperations
from services.api.schemas import attachments as schemas
from services.api.views import attachments as views

LOG = logging.getLogger(__name__)


class DoorSerializer(rpc.ContextSerializer):
    """Turn a message's credential into a verified RequestContext."""

    def __init__(self, verifier: auth.CredentialVerifier) -> None:
        self.verifier = verifier

    def serialize_context(self, ctxt: object) -> dict:
        raise NotImplementedError("the door only answers")

    def deserialize_context(self, ctxt: dict) -> RequestContext:
        """:raises ExpectedException: of NotAuthenticated (no credential, or
            a refused one) or AuthenticationUnavailable."""
        caller = ctxt.get("request_id")
        caller = caller if isinstance(caller, str) and \
            middleware.REQUEST_ID.match(caller) else None
        request_id = "req-%s" % uuid.uuid4()
        auth.anonymous(request_id)
        try:
            return self.verifier.context(
                ctxt.get("credential"), global_request_id=caller,
                request_id=request_id)
        except exception.AuthenticationUnavailable:
            LOG.warning("RPC door: cannot check credentials now "
                        "(request %s)", caller)
            raise messaging.ExpectedException()
        except exception.NotAuthenticated:
            LOG.warning("RPC door: refused a call without a valid "
                        "credential (request %s)", caller)
            # NOTE(ashlar): answered to the caller without a traceback in
            # the log, as an endpoint's expected exception would be.
            raise messaging.ExpectedException()


def _answer(ctxt: RequestContext, **body: object) -> dict:
    return dict(body, request_id=ctxt.global_request_id)


def _valid(table: schemas.Versioned, **attachment: object) -> None:
    """Check a call's arguments against the REST body they stand for.

    :raises ValidationError:
    """
    validation.validate(validation.schema_for(table, MAX_VERSION),
                        {"attachment": {k: v for k, v in attachment.items()
                                        if v is not None}})


#: The backend clients an agent registers at ``attachment_complete``.
_CLIENTS = {"type": "array", "maxItems": 64, "items": {
    "type": "string", "minLength": 1, "maxLength": 255}}


class ApiEndpoint:
    """Attachment operations for RPC callers; thin over the operations."""

    target = messaging.Target(version=rpcapi.ApiAPI.RPC_API_VERSION)

    def __init__(self, attachment_ops: AttachmentOperations,
                 fencing_ops: FencingOperations) -> None:
        self.ops = attachment_ops
        self.fencing = fencing_ops

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_create(self, ctxt: RequestContext, volume_id: str,
                          instance_uuid: str | None = None,
                          connector: dict | None = None,
                          mode: str | None = None) -> dict:
        _valid(schemas.CREATE, volume_uuid=volume_id,
               instance_uuid=instance_uuid, connector=connector, mode=mode)
        row = self.ops.create(ctxt, volume_id, instance_uuid=instance_uuid,
                              connector=connector, mode=mode, leased=True)
        return _answer(ctxt, attachment=views.detail(row))

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_update(self, ctxt: RequestContext, attachment_id: str,
                          connector: dict) -> dict:
        _valid(schemas.UPDATE, connector=connector)
        row = self.ops.update(ctxt, attachment_id, connector, leased=True)
        return _answer(ctxt, attachment=views.detail(row))

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_complete(self, ctxt: RequestContext, attachment_id: str,
                            clients: list[str] | None = None) -> dict:
        if clients is not None:
            validation.validate(_CLIENTS, clients)
        self.ops.complete(ctxt, attachment_id, clients)
        return _answer(ctxt)

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_takeover(self, ctxt: RequestContext,
                            attachment_id: str) -> dict:
        row, fenced = self.fencing.takeover(ctxt, attachment_id)
        return _answer(ctxt, attachment=views.detail(row),
                       fenced=[views.detail(other) for other in fenced])

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_get(self, ctxt: RequestContext, attachment_id: str) -> dict:
        row, shared = self.ops.get(ctxt, attachment_id)
        return _answer(ctxt, attachment=views.show(row, shared))

    @messaging.expose
    @messaging.expected_exceptions(exception.AshlarException)
    def attachment_delete(self, ctxt: RequestContext,
                          attachment_id: str) -> dict:
        return _answer(ctxt, **views.deleted(self.ops.delete(ctxt,
                                                            attachment_id)))


def start(conf: cfg.ConfigOpts,
          attachment_ops: AttachmentOperations,
          fencing_ops: FencingOperations
          ) -> messaging.MessageHandlingServer:
    """Serve the door in this worker (after gunicorn's fork)."""
    target = messaging.Target(
        exchange=constants.DOOR_EXCHANGE, topic=constants.API_TOPIC,
        server="api-%s-%d-%s" % (conf.host, os.getpid(), uuid.uuid4().hex[:8]))
    server = rpc.get_server(
        target, [ApiEndpoint(attachment_ops, fencing_ops)],
        serializer=DoorSerializer(auth.CredentialVerifier(conf)))
    server.start()
    return server
