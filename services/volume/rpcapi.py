"""Client side of the volume service's RPC API."""

from typing import Any

from common import constants
from common import rpc


def backend_of(host: str) -> str:
    """``host@backend#pool`` -> ``host@backend`` (the RPC server name)."""
    return host.partition("#")[0]


class VolumeAPI(rpc.RPCAPI):
    """Client of ``ashlar-volume`` servers named ``host@backend``.

    API version history::

        1.0 - Initial version: create_volume, delete_volume,
              publish_service_capabilities.
        1.1 - attachment_connect, attachment_disconnect (calls);
              extend_volume, retype_volume (casts).
    """

    TOPIC = constants.VOLUME_TOPIC
    BINARY = constants.VOLUME_BINARY
    RPC_API_VERSION = "1.1"

    def create_volume(self, ctxt: Any, volume_id: str, host: str) -> None:
        self._prepare(server=backend_of(host), version="1.0").cast(
            ctxt, "create_volume", volume_id=volume_id)

    def delete_volume(self, ctxt: Any, volume_id: str, host: str) -> None:
        self._prepare(server=backend_of(host), version="1.0").cast(
            ctxt, "delete_volume", volume_id=volume_id)

    def publish_service_capabilities(self, ctxt: Any) -> None:
        """Ask every volume backend to report now (fanout cast)."""
        self._prepare(fanout=True, version="1.0").cast(
            ctxt, "publish_service_capabilities")

    @rpc.assert_min_rpc_version("1.1")
    def attachment_connect(self, ctxt: Any, host: str,
                           attachment_id: str) -> dict:
        """Connect an attachment in flight; return its connection_info.

        A call, bounded by ``rpc_call_timeout``.
        """
        return self._prepare(server=backend_of(host), version="1.1").call(
            ctxt, "attachment_connect", attachment_id=attachment_id)

    @rpc.assert_min_rpc_version("1.1")
    def attachment_disconnect(self, ctxt: Any, host: str,
                              attachment_id: str) -> None:
        """Terminate the connection of an attachment being deleted (call)."""
        self._prepare(server=backend_of(host), version="1.1").call(
            ctxt, "attachment_disconnect", attachment_id=attachment_id)

    @rpc.assert_min_rpc_version("1.1")
    def extend_volume(self, ctxt: Any, volume_id: str, host: str,
                      new_size: int) -> None:
        self._prepare(server=backend_of(host), version="1.1").cast(
            ctxt, "extend_volume", volume_id=volume_id, new_size=new_size)

    @rpc.assert_min_rpc_version("1.1")
    def retype_volume(self, ctxt: Any, volume_id: str, host: str,
                      new_type_id: str, migration_policy: str) -> None:
        self._prepare(server=backend_of(host), version="1.1").cast(
            ctxt, "retype_volume", volume_id=volume_id,
            new_type_id=new_type_id, migration_policy=migration_policy)
