"""RPC plumbing: the transport, clients, servers and the context serializer.

Everything oslo.messaging-specific lives here.  oslo.messaging 18.3 reads the
option groups it registers (``oslo_messaging_*``) only on the global
``cfg.CONF``, so the transport is always built from that object.
"""

import functools
from typing import Any, Callable, Concatenate, ParamSpec, TypeVar

import oslo_messaging as messaging
from oslo_messaging.rpc import dispatcher
from oslo_config import cfg
from oslo_log import log as logging

from common import context as ashlar_context
from common import exception
from common import tested_versions

LOG = logging.getLogger(__name__)

ALLOWED_EXMODS = [exception.__name__]
EMBEDDED_TRANSPORT_URL = "fake:/"
#: What a service that lost the database raises, as its RPC caller sees
#: it (oslo.db is not in ``ALLOWED_EXMODS``: a ``RemoteError`` of it).
REMOTE_DATABASE_DOWN = "DBConnectionError"

#: Seconds a rabbit listener first waits for the broker after a message
#: before it looks up again (oslo.messaging's own floor is 1 ms).
LISTENER_POLL_FLOOR = 0.05
#: Most seconds an idle rabbit listener waits before it looks up again,
#: which bounds how long its stop waits (oslo.messaging's own is 5 s).
LISTENER_POLL_CEILING = 1.0
#: The oslo.messaging releases whose rabbit driver reads the floor as
#: ``_raise_listener_poll_floor`` expects.
MESSAGING_TESTED = tested_versions.ReleaseRange("oslo.messaging", "18.3", "19")
#: Whether the floor is raised (the installed oslo.messaging is in
#: ``MESSAGING_TESTED``), else the listeners keep oslo.messaging's own.
POLL_FLOOR_RAISED = MESSAGING_TESTED.holds()

#: Whether servers that ask for it dispatch on their listener's thread
#: (the installed oslo.messaging is in ``MESSAGING_TESTED``), else on the
#: threading executor as every other server.
INLINE_DISPATCH = POLL_FLOOR_RAISED

#: How a rabbit connection should pick its next node on a cluster
#: (``_warn_of_round_robin``).
FAILOVER_STRATEGY = "shuffle"

_TRANSPORT: messaging.Transport | None = None


def init(conf: cfg.ConfigOpts, embedded: bool = False) -> None:
    """Build this process's transport (idempotent).

    :param embedded: with no ``transport_url`` configured, use the in-process
        ``fake`` driver (the one-process embedded mode) instead of RabbitMQ.
    """
    global _TRANSPORT
    if _TRANSPORT is not None:
        return
    url = conf.transport_url
    # NOTE(ashlar): oslo.messaging defaults transport_url to rabbit://, so
    # "not configured" means "still the default", not "empty".
    location = conf.get_location("transport_url")
    assert location is not None  # None is for a group's name only
    defaulted = location.location == cfg.Locations.opt_default
    if embedded and (not url or defaulted):
        url = EMBEDDED_TRANSPORT_URL
    _raise_listener_poll_floor()
    _TRANSPORT = messaging.get_rpc_transport(
        cfg.CONF, url=url, allowed_remote_exmods=ALLOWED_EXMODS)
    _warn_of_round_robin(cfg.CONF, url)


def _warn_of_round_robin(conf: cfg.ConfigOpts, url: str | None) -> None:
    """Warn when a rabbit transport names several nodes and moves between
    them in turn (``kombu_failover_strategy`` other than
    ``FAILOVER_STRATEGY``).

    NOTE(ashlar): a listener whose poll ran out before it handled its
    node's death moves three nodes along per reconnect attempt (one
    switch in oslo.messaging 18.3's consume, one in kombu's ``ensure``,
    one after the failed connect), and its poll (at most
    ``LISTENER_POLL_CEILING``) runs out again in every one-second
    ``kombu_reconnect_delay``: on three nodes, in turn, it tries the dead
    one forever (docs/operations.md).
    """
    parsed = messaging.TransportURL.parse(conf, url)
    if parsed.transport != "rabbit" or len(parsed.hosts) < 2:
        return
    try:
        strategy = conf.oslo_messaging_rabbit.kombu_failover_strategy
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return
    if strategy != FAILOVER_STRATEGY:
        LOG.warning("transport_url names %d RabbitMQ nodes and "
                    "[oslo_messaging_rabbit] kombu_failover_strategy is "
                    "%s: a listener whose node dies may keep coming back "
                    "to it; set it to %s (docs/operations.md)",
                    len(parsed.hosts), strategy, FAILOVER_STRATEGY)


def _raise_listener_poll_floor() -> None:
    """Let idle rabbit listeners sleep ``LISTENER_POLL_FLOOR`` at first,
    and at most ``LISTENER_POLL_CEILING``.

    NOTE(ashlar): after every message, each listener of the rabbit driver
    (an RPC server's, a caller's reply waiter) polls the broker with a
    timeout that starts at ``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN``
    (1 ms) and doubles up to 5 s, so a message every 30 ms costs about five
    timed-out polls, each through kombu's retry wrappers: a quarter of the
    volume service's CPU in an attach cycle.  A message wakes a poll at
    once whatever its timeout; what the wake-ups are for is acknowledging
    notifications (Ashlar's RPC listeners acknowledge on receipt) and
    noticing a stop, which waits for the poll in progress: oslo.messaging's
    5 s ceiling made an idle volume service's stop take 4-5 s, so the
    ceiling is lowered to a second.  The module constants are read
    at every poll; oslo.messaging offers no option for them, so they are
    set only on the releases tested (``MESSAGING_TESTED``); on others the
    listeners poll between oslo.messaging's own bounds (more CPU, slower
    stops, nothing else changes).
    """
    tested_versions.announce(
        MESSAGING_TESTED, POLL_FLOOR_RAISED,
        "idle rabbit listeners wait %s-%s s, capability reports are "
        "handled on their listener's thread" % (LISTENER_POLL_FLOOR,
                                                 LISTENER_POLL_CEILING),
        "rabbit listeners poll from oslo.messaging's own floor, and every "
        "message goes through its threading executor")
    if not POLL_FLOOR_RAISED:
        return
    from oslo_messaging._drivers import amqpdriver
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = max(
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN, LISTENER_POLL_FLOOR)
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = min(
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX, LISTENER_POLL_CEILING)


def cleanup() -> None:
    """Close the transport (process shutdown, or before a fork)."""
    global _TRANSPORT
    if _TRANSPORT is not None:
        _TRANSPORT.cleanup()
        _TRANSPORT = None


def _transport() -> messaging.Transport:
    if _TRANSPORT is None:
        raise RuntimeError("common.rpc.init() was not called")
    return _TRANSPORT


class ContextSerializer(messaging.Serializer):
    """Arguments and answers cross as they are (JSON primitives); a
    subclass says what the context is on the wire."""

    def serialize_entity(self, ctxt: object, entity: Any) -> Any:
        return entity

    def deserialize_entity(self, ctxt: object, entity: Any) -> Any:
        return entity


class RequestContextSerializer(ContextSerializer):
    """Carry the RequestContext (project, user, roles, request id)."""

    def serialize_context(self, ctxt: ashlar_context.RequestContext) -> dict:
        return ctxt.to_dict()

    def deserialize_context(self, ctxt: dict) -> ashlar_context.RequestContext:
        return ashlar_context.RequestContext.from_dict(ctxt)


class LeanContextSerializer(RequestContextSerializer):
    """Carry only what ``RequestContext.from_dict`` reads of a context.

    NOTE(ashlar): oslo.messaging deep-copies the context of every message
    it receives; oslo.context's whole dict (two dozen keys, tokens and
    names no receiver reads) was a sixth of a capability report's cost at
    each of its receivers.  For casts at a high rate whose receivers read
    nothing of the caller (capability reports); receivers of any release
    build the same context from it.
    """

    def serialize_context(self, ctxt: ashlar_context.RequestContext) -> dict:
        return {"user_id": ctxt.user_id, "project_id": ctxt.project_id,
                "roles": list(ctxt.roles or []),
                "service_roles": list(ctxt.service_roles or []),
                "is_admin": ctxt.is_admin, "request_id": ctxt.request_id,
                "global_request_id": ctxt.global_request_id}


def get_client(target: messaging.Target, version_cap: str | None = None,
               timeout: int | None = None,
               serializer: messaging.Serializer | None = None
               ) -> messaging.RPCClient:
    return messaging.get_rpc_client(
        _transport(), target, version_cap=version_cap,
        serializer=serializer or RequestContextSerializer(), timeout=timeout)


class InlineExecutor:
    """Runs each message on the listener's own thread, in arrival order.

    NOTE(ashlar): the threading executor hands every message to a pool
    thread (a future, a queue, a wake-up): a quarter of what a capability
    report cost an API worker.  Only for endpoints that never block (the
    API's capability cache: a store update under a short lock); the
    listener polls for the next message once this one is handled.
    """

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers

    def submit(self, fn: Callable[..., object], *args: object,
               **kwargs: object) -> None:
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the listener must go on
            LOG.exception("Message handling failed")

    def shutdown(self, wait: bool = True) -> None:
        """Nothing runs once the listener stopped."""


def get_server(target: messaging.Target, endpoints: list,
               serializer: messaging.Serializer | None = None,
               inline: bool = False) -> messaging.MessageHandlingServer:
    """An RPC server that dispatches only methods marked
    ``@messaging.expose`` (lifecycle hooks and helpers stay private).

    :param serializer: how the context is read; by default the internal
        topics' ``RequestContextSerializer``, which believes the message.
    :param inline: handle messages on the listener's thread
        (:class:`InlineExecutor`) where ``INLINE_DISPATCH`` holds; for
        endpoints that never block.
    """
    server = messaging.get_rpc_server(
        _transport(), target, endpoints, executor="threading",
        serializer=serializer or RequestContextSerializer(),
        access_policy=dispatcher.ExplicitRPCAccessPolicy)
    if inline and INLINE_DISPATCH:
        # oslo.messaging builds its executor from this class at start().
        server._executor_cls = InlineExecutor
    return server


class ServiceTooOld(exception.ServiceUnavailable):
    """503: the service that would answer runs an older RPC API (a rolling
    upgrade in progress, or ``[upgrade_levels]`` pinned lower)."""

    msg_fmt = "The remote service is too old for %(method)s (needs %(version)s)."


class RPCAPI:
    """Base of every ``services/<name>/rpcapi.py`` client class.

    Subclasses set ``TOPIC``, ``BINARY`` and ``RPC_API_VERSION``; the
    ``[upgrade_levels]`` option named after the binary pins the version cap
    during a rolling upgrade.
    """

    TOPIC: str = ""
    BINARY: str = ""
    RPC_API_VERSION: str = "1.0"
    #: The exchange, when not the control exchange of the internal bus.
    EXCHANGE: str | None = None

    def __init__(self, conf: cfg.ConfigOpts | None = None,
                 serializer: messaging.Serializer | None = None) -> None:
        conf = conf or cfg.CONF
        target = messaging.Target(exchange=self.EXCHANGE, topic=self.TOPIC,
                                  version=self.RPC_API_VERSION)
        cap = _version_cap(conf, self.BINARY) or self.RPC_API_VERSION
        self.client = get_client(target, version_cap=cap,
                                 timeout=conf.rpc_call_timeout,
                                 serializer=serializer)

    def _prepare(self, **kwargs: object) -> messaging.RPCClient:
        return self.client.prepare(**kwargs)

    def require(self, version: str, method: str) -> None:
        """Refuse, before anything is changed, work whose calls need
        ``version``.

        :raises ServiceTooOld: the cap is lower.
        """
        if not self.client.can_send_version(version):
            raise ServiceTooOld(method=method, version=version)


_API = TypeVar("_API", bound=RPCAPI)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def assert_min_rpc_version(version: str) -> Callable[
        [Callable[Concatenate[_API, _P], _R]],
        Callable[Concatenate[_API, _P], _R]]:
    """Refuse to send a method the remote side cannot understand."""
    def decorator(method: Callable[Concatenate[_API, _P], _R]
                  ) -> Callable[Concatenate[_API, _P], _R]:
        @functools.wraps(method)
        def wrapper(self: _API, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            self.require(version, method.__name__)
            return method(self, *args, **kwargs)
        return wrapper
    return decorator


def _version_cap(conf: cfg.ConfigOpts, binary: str) -> str | None:
    return getattr(conf.upgrade_levels, binary.replace("-", "_"))
