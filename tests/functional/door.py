"""A raw oslo.messaging client of the api's RPC door, as an attacker (or a
test) on the bus holds one: it sends whatever context it is given."""

import uuid

import oslo_messaging
from oslo_config import cfg

from common import constants

API_TOPIC = constants.API_TOPIC
#: The door's own exchange, apart from the internal bus's.
EXCHANGE = constants.DOOR_EXCHANGE


class AsIs(oslo_messaging.Serializer):
    """Send the context dict given to ``call`` exactly as it is."""

    def serialize_entity(self, ctxt, entity):
        return entity

    def deserialize_entity(self, ctxt, entity):
        return entity

    def serialize_context(self, ctxt):
        return dict(ctxt)

    def deserialize_context(self, ctxt):
        return ctxt


def transport(url: str) -> oslo_messaging.Transport:
    # NOTE: oslo.messaging reads its option groups only on the global
    # cfg.CONF (common.rpc says so too); it registers them there itself.
    return oslo_messaging.get_rpc_transport(
        cfg.CONF, url=url, allowed_remote_exmods=["common.exception"])


def call(trans, ctxt: dict, method: str, timeout: float = 30, **kwargs):
    """Call ``method`` on the door with exactly ``ctxt`` as the context."""
    client = oslo_messaging.get_rpc_client(
        trans, oslo_messaging.Target(exchange=EXCHANGE, topic=API_TOPIC,
                                     version="1.1"),
        serializer=AsIs(), timeout=timeout)
    return client.call(ctxt, method, **kwargs)


def request_id() -> str:
    return "req-%s" % uuid.uuid4()
