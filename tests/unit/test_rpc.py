"""common.rpc on oslo.messaging's in-process transport."""

import inspect
import threading
import uuid

import oslo_messaging as messaging
import pytest
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts
from common import conf as ashlar_conf
from common import context as ashlar_context
from common import exception
from common import rpc


class _Endpoint:
    target = messaging.Target(version="1.0")

    @messaging.expose
    def echo(self, ctxt, value):
        return {"value": value, "project": ctxt.project_id,
                "request_id": ctxt.request_id,
                "service_roles": ctxt.service_roles,
                "is_admin": ctxt.is_admin}

    @messaging.expose
    def fail(self, ctxt):
        raise exception.VolumeNotFound(volume_id="v1")

    def init_host(self, service_uuid):
        return "hook"


@pytest.fixture
def client():
    rpc.cleanup()
    conf = ashlar_conf.CONF
    conf([], project="ashlar")
    rpc.init(conf, embedded=True)
    topic = "test-%s" % uuid.uuid4().hex[:8]
    server = rpc.get_server(messaging.Target(topic=topic, server="s1"),
                            [_Endpoint()])
    server.start()
    yield rpc.get_client(messaging.Target(topic=topic, version="1.0"),
                         timeout=5)
    server.stop()
    server.wait()
    rpc.cleanup()
    # NOTE: no conf.reset(): it would leave the process's CONF un-invoked,
    # and a later test that finds a file through it (oslo.policy's)
    # would fail with NotInitializedError.


def _ctxt():
    return ashlar_context.RequestContext(user_id="u", project_id="p1",
                                         roles=["member"], is_admin=False)


def test_context_crosses_the_bus(client):
    ctxt = _ctxt()
    answer = client.call(ctxt, "echo", value=3)
    assert answer == {"value": 3, "project": "p1",
                      "request_id": ctxt.request_id, "service_roles": [],
                      "is_admin": False}


def test_a_service_token_crosses_the_bus(client):
    """A caller acting for a service (not admin) stays one on the far side,
    where ``privileged`` lets it delete a connected attachment."""
    ctxt = _ctxt()
    ctxt.service_roles = ["service"]
    answer = client.call(ctxt, "echo", value=1)
    assert (answer["service_roles"], answer["is_admin"]) == (["service"],
                                                            False)


def test_a_lean_context_crosses_the_bus_alike(client):
    """The capability fanout's serializer sends only what ``from_dict``
    reads: the far side builds the same context."""
    lean = rpc.get_client(client.target, timeout=5,
                          serializer=rpc.LeanContextSerializer())
    ctxt = _ctxt()
    ctxt.service_roles = ["service"]
    assert lean.call(ctxt, "echo", value=2) == client.call(ctxt, "echo",
                                                           value=2)
    sent = rpc.LeanContextSerializer().serialize_context(ctxt)
    assert "auth_token" not in sent and sent["roles"] == ["member"]


def test_domain_exceptions_keep_their_class(client):
    with pytest.raises(exception.VolumeNotFound):
        client.call(_ctxt(), "fail")


def test_only_exposed_methods_are_reachable(client):
    with pytest.raises(messaging.NoSuchMethod):
        client.call(_ctxt(), "init_host", service_uuid="x")


def _names_read(fn) -> set:
    """Global names ``fn`` reads, and those of functions it wraps (the
    listener's ``poll`` is inside oslo.messaging's batch helper)."""
    names = set(fn.__code__.co_names)
    for cell in fn.__closure__ or ():
        if inspect.isfunction(cell.cell_contents):
            names |= _names_read(cell.cell_contents)
    return names


@pytest.mark.skipif(not rpc.POLL_FLOOR_RAISED, reason="oslo.messaging "
                    "outside the tested range: its own floor stays")
def test_listeners_back_off_from_the_poll_floor(client):
    """The floor and ceiling are oslo.messaging's private module
    constants (set only on the releases in ``rpc.MESSAGING_TESTED``): this
    fails on a tested release that renames them, or that stops reading
    them where the listeners start, reset and back off their poll
    timeouts, instead of the tuning silently doing nothing."""
    from oslo_messaging._drivers import amqpdriver
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == rpc.LISTENER_POLL_FLOOR
    assert (amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX
            == rpc.LISTENER_POLL_CEILING)
    for reader in (amqpdriver.AMQPListener.__init__,
                   amqpdriver.AMQPListener.poll,
                   amqpdriver.ReplyWaiter.poll):
        assert "ACK_REQUEUE_EVERY_SECONDS_MIN" in _names_read(reader), \
            reader.__qualname__
    for reader in (amqpdriver.AMQPListener.poll, amqpdriver.ReplyWaiter.poll):
        assert "ACK_REQUEUE_EVERY_SECONDS_MAX" in _names_read(reader), \
            reader.__qualname__


def test_outside_the_tested_range_the_listeners_keep_their_own_floor(
        monkeypatch):
    """The public path: oslo.messaging's floor is left as it is; inside
    the range it is raised."""
    amqpdriver = pytest.importorskip("oslo_messaging._drivers.amqpdriver")
    monkeypatch.setattr(amqpdriver, "ACK_REQUEUE_EVERY_SECONDS_MIN", 0.001)
    monkeypatch.setattr(rpc, "POLL_FLOOR_RAISED", False)
    rpc._raise_listener_poll_floor()
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == 0.001
    monkeypatch.setattr(rpc, "POLL_FLOOR_RAISED", True)
    rpc._raise_listener_poll_floor()
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == rpc.LISTENER_POLL_FLOOR


def _serve_thread_names(inline: bool) -> tuple[object, set]:
    """A server asking for ``inline`` dispatch: its executor class and
    the threads that handled two calls."""
    threads: set = set()

    class Endpoint(_Endpoint):
        @messaging.expose
        def where(self, ctxt):
            threads.add(threading.current_thread().name)
            return True

    topic = "test-%s" % uuid.uuid4().hex[:8]
    server = rpc.get_server(messaging.Target(topic=topic, server="s1"),
                            [Endpoint()], inline=inline)
    server.start()
    try:
        caller = rpc.get_client(messaging.Target(topic=topic), timeout=5)
        assert caller.call(_ctxt(), "where") and caller.call(_ctxt(),
                                                             "where")
        return server._executor_cls, threads
    finally:
        server.stop()
        server.wait()


@pytest.mark.skipif(not rpc.INLINE_DISPATCH, reason="oslo.messaging "
                    "outside the tested range: the threading executor stays")
def test_an_inline_server_handles_messages_on_its_listener(client):
    """The executor class is oslo.messaging's private attribute, read as
    the server starts: this fails on a tested release that stops reading
    it, instead of the tuning silently doing nothing."""
    from oslo_messaging import server as messaging_server
    start = messaging_server.MessageHandlingServer.start
    assert "_executor_cls" in _names_read(start)
    executor, threads = _serve_thread_names(inline=True)
    assert executor is rpc.InlineExecutor and len(threads) == 1


def test_outside_the_tested_range_servers_keep_the_threading_executor(
        client, monkeypatch):
    monkeypatch.setattr(rpc, "INLINE_DISPATCH", False)
    executor, threads = _serve_thread_names(inline=True)
    assert executor is not rpc.InlineExecutor and threads


def test_an_inline_handler_s_failure_leaves_the_listener_going():
    handled = []

    def fail() -> None:
        handled.append(1)
        raise RuntimeError("boom")
    executor = rpc.InlineExecutor(max_workers=4)
    executor.submit(fail)
    executor.submit(fail)
    executor.shutdown(wait=True)
    assert handled == [1, 1]


def test_each_message_context_becomes_the_threads_logging_context():
    """Log lines of a pooled thread carry the message it serves now."""
    from oslo_context import context as oslo_context
    serializer = rpc.RequestContextSerializer()
    for user in ("a", "b"):
        serializer.deserialize_context({"user_id": user, "roles": [],
                                        "is_admin": False,
                                        "request_id": "req-" + user})
        assert oslo_context.get_current().user_id == user


def _rabbit_conf(strategy: str | None) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf([])
    if strategy is not None:
        conf.set_override("kombu_failover_strategy", strategy,
                          group="oslo_messaging_rabbit")
    return conf


THREE_NODES = "rabbit://u:p@127.0.0.1:5672,u:p@127.0.0.1:5673,u:p@127.0.0.1:5674/"


@pytest.mark.parametrize("strategy, url, warned", [
    (None, THREE_NODES, True),
    ("round-robin", THREE_NODES, True),
    ("shuffle", THREE_NODES, False),
    (None, "rabbit://u:p@127.0.0.1:5672/", False),
    (None, rpc.EMBEDDED_TRANSPORT_URL, False),
])
def test_round_robin_over_several_nodes_is_warned_of(caplog, strategy, url,
                                                     warned):
    """oslo.messaging's default moves a listener whose node died back to
    it on three nodes (docs/operations.md): a start names the fix."""
    with caplog.at_level("WARNING", logger=rpc.__name__):
        rpc._warn_of_round_robin(_rabbit_conf(strategy), url)
    said = [r.getMessage() for r in caplog.records
            if "kombu_failover_strategy" in r.getMessage()]
    assert len(said) == int(warned), said
    if warned:
        assert "names 3 RabbitMQ nodes" in said[0]
        assert "set it to shuffle" in said[0]
