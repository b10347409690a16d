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
    """

    TOPIC = constants.VOLUME_TOPIC
    BINARY = constants.VOLUME_BINARY
    RPC_API_VERSION = "1.0"

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
