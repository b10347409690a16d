"""Client side of the api's RPC door (topic ``ashlar-api``).

Compute agents use it to manage attachments over the bus instead of REST;
the api answers with the same operations layer that serves REST.
"""

from typing import Any

from common import constants
from common import rpc


class ApiAPI(rpc.RPCAPI):
    """Client of the ``ashlar-api`` topic (any api worker answers).

    API version history::

        1.0 - Initial version: attachment_create, attachment_update,
              attachment_complete, attachment_delete, attachment_get.
    """

    TOPIC = constants.API_TOPIC
    BINARY = "ashlar-api"
    RPC_API_VERSION = "1.0"

    def attachment_create(self, ctxt: Any, volume_id: str,
                          instance_uuid: str | None = None,
                          connector: dict | None = None,
                          mode: str | None = None) -> dict:
        """Reserve (and with a connector, connect); returns the detail view."""
        return self._prepare(version="1.0").call(
            ctxt, "attachment_create", volume_id=volume_id,
            instance_uuid=instance_uuid, connector=connector, mode=mode)

    def attachment_update(self, ctxt: Any, attachment_id: str,
                          connector: dict) -> dict:
        return self._prepare(version="1.0").call(
            ctxt, "attachment_update", attachment_id=attachment_id,
            connector=connector)

    def attachment_complete(self, ctxt: Any, attachment_id: str) -> None:
        self._prepare(version="1.0").call(ctxt, "attachment_complete",
                                          attachment_id=attachment_id)

    def attachment_get(self, ctxt: Any, attachment_id: str) -> dict:
        """Detail view plus ``shared_connections_by_attachment``."""
        return self._prepare(version="1.0").call(
            ctxt, "attachment_get", attachment_id=attachment_id)

    def attachment_delete(self, ctxt: Any, attachment_id: str) -> dict:
        """Returns the remaining attachments and the shared connections."""
        return self._prepare(version="1.0").call(
            ctxt, "attachment_delete", attachment_id=attachment_id)
