"""Client side of the api's RPC door (topic ``ashlar-api``).

Compute agents use it to manage attachments over the bus instead of REST;
the api answers with the same operations layer that serves REST.  The door
believes nothing a message says about its sender: each message carries a
credential (``CredentialSerializer``) that the door verifies as REST would,
and each answer echoes the request's id so the agent can tell it belongs to
its request.
"""

import uuid
from collections.abc import Callable
from typing import Any

from oslo_config import cfg

from common import constants
from common import exception
from common import rpc

#: Returns the authentication headers of this caller's credential
#: (``X-Auth-Token``, or ``Authorization: Basic``), ``{}`` for none.
Credentials = Callable[[], dict[str, str]]


class CredentialSerializer(rpc.ContextSerializer):
    """Send only a request id and the caller's credential as the context."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials

    def serialize_context(self, ctxt: "_Request") -> dict[str, object]:
        return {"request_id": ctxt.request_id,
                "credential": dict(self.credentials() or {})}

    def deserialize_context(self, ctxt: dict[str, object]
                            ) -> dict[str, object]:
        return ctxt


class ForeignReply(exception.AshlarException):
    """An answer that does not belong to the request it came back for."""

    msg_fmt = ("Refused an answer from the api that does not belong to this "
               "request: %(reason)s")


class ApiAPI(rpc.RPCAPI):
    """Client of the ``ashlar-api`` topic (any api worker answers).

    API version history::

        1.0 - Initial version: attachment_create, attachment_update,
              attachment_complete, attachment_delete, attachment_get.
        1.1 - The context is a credential the door verifies; every answer
              is a dict carrying the request's id (``request_id``); the
              door is on an exchange of its own (``ashlar-door``).
        1.2 - attachment_complete takes the host's ``clients`` (what a
              fence revokes); attachment_takeover.
    """

    TOPIC = constants.API_TOPIC
    EXCHANGE = constants.DOOR_EXCHANGE
    BINARY = constants.API_BINARY
    RPC_API_VERSION = "1.2"

    def __init__(self, conf: cfg.ConfigOpts,
                 credentials: Credentials) -> None:
        super().__init__(conf, serializer=CredentialSerializer(credentials))

    def _call(self, method: str, version: str = "1.1",
              **kwargs: object) -> dict[str, Any]:
        """Call with a fresh request id; the answer must echo it.

        :raises ForeignReply: it does not.
        """
        ctxt = _Request()
        answer = self._prepare(version=version).call(ctxt, method, **kwargs)
        if not isinstance(answer, dict) or \
                answer.get("request_id") != ctxt.request_id:
            raise ForeignReply(reason="request id %s not echoed"
                               % ctxt.request_id)
        return answer

    def _attachment(self, method: str, **kwargs: object) -> dict[str, Any]:
        """``_call``'s ``attachment``: the view of the row."""
        view: dict[str, Any] = self._call(method, "1.1",
                                          **kwargs)["attachment"]
        return view

    def attachment_create(self, volume_id: str,
                          instance_uuid: str | None = None,
                          connector: dict[str, Any] | None = None,
                          mode: str | None = None) -> dict[str, Any]:
        """Reserve (and with a connector, connect); the detail view."""
        return self._attachment("attachment_create", volume_id=volume_id,
                                instance_uuid=instance_uuid,
                                connector=connector, mode=mode)

    def attachment_update(self, attachment_id: str,
                          connector: dict[str, Any]) -> dict[str, Any]:
        return self._attachment("attachment_update",
                                attachment_id=attachment_id,
                                connector=connector)

    def attachment_complete(self, attachment_id: str,
                            clients: list[str] | None = None) -> None:
        """Mark it attached; ``clients``: the backend clients this host
        uses it through (1.2; without them, 1.1)."""
        if clients is None:
            self._call("attachment_complete", attachment_id=attachment_id)
            return
        self._call("attachment_complete", "1.2",
                   attachment_id=attachment_id, clients=clients)

    def attachment_takeover(self, attachment_id: str) -> dict[str, Any]:
        """Fence the volume's other writers, make this one read/write;
        ``{"attachment", "fenced"}``."""
        return self._call("attachment_takeover", "1.2",
                          attachment_id=attachment_id)

    def attachment_get(self, attachment_id: str) -> dict[str, Any]:
        """Detail view plus ``shared_connections_by_attachment``."""
        return self._attachment("attachment_get",
                                attachment_id=attachment_id)

    def attachment_delete(self, attachment_id: str) -> dict[str, Any]:
        """The remaining attachments and the shared connections."""
        return self._call("attachment_delete", attachment_id=attachment_id)


class _Request:
    """The context of one call: its id (``req-<uuid>``)."""

    def __init__(self) -> None:
        self.request_id = "req-%s" % uuid.uuid4()
