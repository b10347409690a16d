"""Least-privilege RabbitMQ users of compute hosts, on the real broker.

Each module fixture is a fresh vhost with the internal user (every right)
and compute-host users made by ``deploy/rabbitmq/compute-host-user.sh``;
real oslo.messaging servers run with the internal user on the api, volume,
scheduler and capabilities topics and record what reaches them.  A compute
host's user may call the api topic, on the door's own exchange, and
nothing else: every other cast or call is refused by the broker at once
(``MessageDeliveryFailure``), and a positive control (a message of the
internal user to the same server, waited for) shows nothing else arrived
there.  Server queues cannot be consumed, purged, deleted or redeclared by
a compute user, nor the internal bus's exchange.  ``test_known_limits``
pins what RabbitMQ's model leaves possible with the default patterns; the
hardened variant (per-host reply queues) closes the reply-queue part.
"""

import os
import threading
import time
import uuid

import amqp
import oslo_messaging as messaging
import pytest
from oslo_concurrency import lockutils  # noqa: F401 - registers lock_path
from oslo_config import cfg
from oslo_messaging._drivers import amqpdriver
from oslo_messaging.rpc import dispatcher

from common import constants
from common.conf import default as default_conf
from deploy.testbed import harness
from deploy.testbed.components import rabbit_users

API = constants.API_TOPIC
VOLUME = constants.VOLUME_TOPIC
SCHEDULER = constants.SCHEDULER_TOPIC
CAPABILITIES = constants.CAPABILITIES_TOPIC
#: The internal bus's exchange: Ashlar's [DEFAULT] control_exchange.
EXCHANGE = "ashlar"
#: The door's own exchange: the script's default CONTROL_EXCHANGE.
DOOR_EXCHANGE = constants.DOOR_EXCHANGE
API_SERVER = "api-host1-4242-0badcafe"
VOLUME_SERVER = "node1@file"
SCHEDULER_SERVER = "sched1"
CALL_TIMEOUT = 10           # seconds an allowed call may take
REFUSAL_BOUND = 5.0         # a refusal is immediate; the bound asserted
CONTROL_TIMEOUT = 10        # seconds to wait for a positive control
#: What the agent should use: a refusal is never retried, a lost
#: connection is, a few times (see deploy/rabbitmq/README.md).
AGENT_RETRY = 2


# -- the bus ----------------------------------------------------------------
class Recorder:
    """An endpoint that records every ping that reaches it."""

    target = messaging.Target(version="1.1")

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._tokens: list[str] = []

    @messaging.expose
    def ping(self, ctxt, token: str) -> dict:
        with self._lock:
            self._tokens.append(token)
        return {"pong": token, "by": self.name}

    def tokens(self) -> list[str]:
        with self._lock:
            return list(self._tokens)

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()


def transport(url: str) -> messaging.Transport:
    # NOTE: oslo.messaging reads its option groups only on the global
    # cfg.CONF (see common/rpc.py); it registers them there itself.
    return messaging.get_rpc_transport(cfg.CONF, url=url)


def client(trans: messaging.Transport, topic: str, exchange: str,
           **target) -> messaging.RPCClient:
    """A client as common.rpc builds them, on ``exchange``."""
    return messaging.get_rpc_client(
        trans, messaging.Target(topic=topic, exchange=exchange, version="1.1",
                                **target),
        version_cap="1.1", timeout=CALL_TIMEOUT)


def token() -> str:
    return uuid.uuid4().hex


class Bus:
    """Servers of the internal user on a broker made by rabbit_users."""

    def __init__(self, broker: rabbit_users.Broker) -> None:
        self.broker = broker
        self.internal = transport(broker.internal.url)
        self.recorders: dict[str, Recorder] = {}
        self.exchanges: dict[str, str] = {}
        self.servers: list[messaging.MessageHandlingServer] = []

    def serve(self, topic: str, server: str, exchange: str = EXCHANGE):
        recorder = self.recorders[topic] = Recorder(topic)
        self.exchanges[topic] = exchange
        rpc_server = messaging.get_rpc_server(
            self.internal, messaging.Target(topic=topic, server=server,
                                            exchange=exchange),
            [recorder], access_policy=dispatcher.ExplicitRPCAccessPolicy)
        rpc_server.start()
        self.servers.append(rpc_server)

    def client(self, trans, topic: str, **target) -> messaging.RPCClient:
        return client(trans, topic, self.exchanges[topic], **target)

    def control(self, kind: str, topic: str, **target) -> str:
        """Send a ping as the internal user to ``topic`` (as ``kind`` was
        sent) and wait until it reached the server; its token."""
        sent = token()
        internal = self.client(self.internal, topic, **target)
        if kind == "call":
            assert internal.call({}, "ping", token=sent)["pong"] == sent
        else:
            internal.cast({}, "ping", token=sent)
            harness.wait_for(lambda: sent in self.recorders[topic].tokens(),
                             timeout=CONTROL_TIMEOUT,
                             what="the control to reach %s" % topic)
        return sent

    def queues(self) -> list[str]:
        return rabbit_users.ctl("list_queues", "-p", self.broker.vhost,
                                "--no-table-headers", "name").split()

    def clear(self) -> None:
        for recorder in self.recorders.values():
            recorder.clear()

    def stop(self) -> None:
        for rpc_server in self.servers:
            rpc_server.stop()
        for rpc_server in self.servers:
            rpc_server.wait()
        self.internal.cleanup()


def standard_servers(bus: Bus, api_exchange: str = DOOR_EXCHANGE) -> Bus:
    bus.serve(API, API_SERVER, exchange=api_exchange)
    bus.serve(VOLUME, VOLUME_SERVER)
    bus.serve(SCHEDULER, SCHEDULER_SERVER)
    bus.serve(CAPABILITIES, SCHEDULER_SERVER)
    return bus


@pytest.fixture(scope="module", autouse=True)
def _prompt_listener_stop():
    """Idle listeners poll the broker at most every 0.5 s (instead of 5 s),
    so stopping the servers and the transports' reply waiters is quick."""
    saved = amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = 0.5
    yield
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = saved


@pytest.fixture(scope="module")
def bus():
    """Default patterns: two compute hosts."""
    broker = rabbit_users.make(computes=2)
    the_bus = Bus(broker)
    try:
        yield standard_servers(the_bus)
    finally:
        the_bus.stop()
        broker.remove()


@pytest.fixture
def transports():
    """Make transports (compute hosts' agents); all cleaned up after."""
    made = []

    def make(url: str) -> messaging.Transport:
        made.append(transport(url))
        return made[-1]
    yield make
    for trans in made:
        trans.cleanup()


@pytest.fixture(autouse=True)
def _clear_records(request):
    for name in ("bus", "hardened"):
        if name in request.fixturenames:
            request.getfixturevalue(name).clear()


def amqp_connection(broker: rabbit_users.Broker,
                    user: rabbit_users.User) -> amqp.Connection:
    conn = amqp.Connection("%s:%d" % (broker.host, broker.port),
                           userid=user.name, password=user.password,
                           virtual_host=broker.vhost, connect_timeout=10)
    conn.connect()
    return conn


def refused(conn: amqp.Connection, method: str, *args, **kwargs) -> str:
    """Call ``method`` of a new channel; the broker's refusal."""
    channel = conn.channel()
    if method == "basic_publish_confirm":
        channel.confirm_select()
    with pytest.raises(amqp.exceptions.AccessRefused) as refusal:
        getattr(channel, method)(*args, **kwargs)
    return str(refusal.value)


# -- (a) the api topic -------------------------------------------------------
def test_script_default_exchange_is_the_doors_not_the_internal_bus():
    opts = {opt.name: opt for opt in default_conf._messaging_opts()}
    assert opts["control_exchange"].default == EXCHANGE != DOOR_EXCHANGE
    with open(rabbit_users.SCRIPT) as script:
        assert "EXCHANGE=${4:-%s}" % DOOR_EXCHANGE in script.read()


@pytest.mark.parametrize("host", [0, 1])
def test_compute_host_calls_the_api(bus, transports, host):
    agent = transports(bus.broker.computes[host].url)
    sent = token()
    answer = bus.client(agent, API).prepare(
        version="1.1", retry=AGENT_RETRY).call({}, "ping", token=sent)
    assert answer == {"pong": sent, "by": API}
    assert bus.recorders[API].tokens() == [sent]
    # Its reply queue is oslo.messaging's reply_<uuid hex>.
    assert any(q.startswith("reply_") and len(q) == 38 for q in bus.queues())


# -- (b) every other topic ------------------------------------------------------
REFUSED = [
    ("cast", VOLUME, {}),
    ("call", VOLUME, {}),
    ("cast", VOLUME, {"server": VOLUME_SERVER}),
    ("call", VOLUME, {"server": VOLUME_SERVER}),
    ("cast", SCHEDULER, {}),
    ("call", SCHEDULER, {}),
    ("cast", SCHEDULER, {"server": SCHEDULER_SERVER}),
    ("cast", CAPABILITIES, {"fanout": True}),
    # The door only by its front: no api worker by name, no fanout.
    ("cast", API, {"server": API_SERVER}),
    ("call", API, {"server": API_SERVER}),
    ("cast", API, {"fanout": True}),
]


def _refusal_pattern(topic: str, target: dict, exchange: str) -> str:
    if target.get("fanout"):
        return ("ACCESS_REFUSED - access to exchange '%s_fanout'" % topic)
    if exchange != DOOR_EXCHANGE:
        # The internal bus's exchange: refused at its declaration already.
        return "ACCESS_REFUSED - access to exchange '%s'" % exchange
    key = topic + ("." + target["server"] if "server" in target else "")
    return ("ACCESS_REFUSED - access to topic '%s' in exchange '%s'"
            % (key, exchange))


@pytest.mark.parametrize("retry", [None, AGENT_RETRY])
@pytest.mark.parametrize(
    "kind,topic,target", REFUSED,
    ids=["%s-%s%s" % (k, t, "".join("-%s" % x for x in sorted(g)))
         for k, t, g in REFUSED])
def test_compute_host_is_refused(bus, transports, kind, topic, target,
                                 retry):
    agent = transports(bus.broker.computes[0].url)
    sent = token()
    method = getattr(bus.client(agent, topic, **target).prepare(
        retry=retry), kind)
    started = time.monotonic()
    with pytest.raises(messaging.MessageDeliveryFailure) as refusal:
        method({}, "ping", token=sent)
    elapsed = time.monotonic() - started
    assert _refusal_pattern(topic, target, bus.exchanges[topic]) in \
        str(refusal.value)
    assert elapsed < REFUSAL_BOUND, elapsed
    control = bus.control(kind, topic, **target)
    assert bus.recorders[topic].tokens() == [control]


def test_transport_still_calls_the_api_after_refusals(bus, transports):
    """Two refusals on one pooled connection leave kombu a closed channel:
    the next send reconnects (kombu_reconnect_delay, 1 s) when it may
    retry; with retry=0 it would fail with "connection already closed"."""
    agent = transports(bus.broker.computes[0].url)
    for _ in range(2):
        with pytest.raises(messaging.MessageDeliveryFailure):
            bus.client(agent, VOLUME).prepare(retry=AGENT_RETRY).cast(
                {}, "ping", token=token())
    sent = token()
    started = time.monotonic()
    answer = bus.client(agent, API).prepare(retry=AGENT_RETRY).call(
        {}, "ping", token=sent)
    assert answer["pong"] == sent
    assert time.monotonic() - started < REFUSAL_BOUND
    assert bus.recorders[VOLUME].tokens() == []


@pytest.mark.parametrize("kind", ["cast", "call"])
def test_wrong_password_fails_at_once(bus, transports, kind):
    """Refused logins are not retried (whatever ``retry``): the raw py-amqp
    error reaches the caller, not a MessagingException."""
    user = bus.broker.computes[0]
    agent = transports(user.url.replace(user.password, "not-" + user.password))
    started = time.monotonic()
    with pytest.raises(amqp.exceptions.AccessRefused,
                       match="ACCESS_REFUSED - Login was refused"):
        getattr(bus.client(agent, API).prepare(retry=None), kind)(
            {}, "ping", token=token())
    assert time.monotonic() - started < REFUSAL_BOUND
    assert bus.recorders[API].tokens() == []


# -- (c) the servers' queues and the exchanges ------------------------------------
def test_compute_host_cannot_serve_a_server_topic(bus, transports):
    """An RPC server of a compute user cannot declare (so never consumes)
    the volume node's or the api's queues."""
    agent = transports(bus.broker.computes[0].url)
    for topic, server in ((VOLUME, VOLUME_SERVER), (API, API_SERVER)):
        thief = messaging.get_rpc_server(
            agent, messaging.Target(topic=topic, server=server,
                                    exchange=bus.exchanges[topic]),
            [Recorder("thief")],
            access_policy=dispatcher.ExplicitRPCAccessPolicy)
        # The internal bus's exchange is refused first, at its declaration.
        with pytest.raises(messaging.MessageDeliveryFailure,
                           match="ACCESS_REFUSED - access to (queue '%s'|"
                           "exchange '%s')" % (topic, EXCHANGE)):
            thief.start()
        control = bus.control("cast", topic)
        assert bus.recorders[topic].tokens() == [control]


def test_compute_host_cannot_touch_server_queues(bus):
    queues = bus.queues()
    api_fanout = [q for q in queues if q.startswith(API + "_fanout_")]
    assert len(api_fanout) == 1, queues
    targets = [API, "%s.%s" % (API, API_SERVER), api_fanout[0], VOLUME,
               "%s.%s" % (VOLUME, VOLUME_SERVER), SCHEDULER]
    conn = amqp_connection(bus.broker, bus.broker.computes[0])
    try:
        for queue in targets:
            for method, kwargs in (("basic_consume", {"callback": print}),
                                   ("basic_get", {}), ("queue_purge", {}),
                                   ("queue_delete", {}),
                                   ("queue_declare", {"auto_delete": False})):
                assert "access to queue '%s'" % queue in refused(
                    conn, method, queue, **kwargs)
        # Its own queue cannot be bound to listen to another topic ...
        mine = "reply_" + uuid.uuid4().hex
        conn.channel().queue_declare(mine, auto_delete=False)
        for key in (VOLUME, "#"):
            assert "access to queue '%s'" % mine in refused(
                conn, "queue_bind", mine, EXCHANGE, key)
        # ... nor a message put in a queue by its name, or elsewhere.
        for exchange in ("", "amq.topic", "amq.direct"):
            assert "access to exchange '%s'" % (exchange or "amq.default") \
                in refused(conn, "basic_publish_confirm", amqp.Message("x"),
                           exchange=exchange, routing_key=VOLUME)
        assert "access to queue 'evil'" in refused(
            conn, "queue_declare", "evil", auto_delete=False)
        for exchange in (CAPABILITIES + "_fanout", VOLUME + "_fanout",
                         EXCHANGE):
            assert "access to exchange '%s'" % exchange in refused(
                conn, "exchange_delete", exchange)
        assert "access to exchange '%s'" % EXCHANGE in refused(
            conn, "exchange_declare", EXCHANGE, "topic")
    finally:
        conn.close()
    # The servers still serve, and got nothing else.
    for topic in (API, VOLUME, SCHEDULER):
        control = bus.control("call", topic)
        assert bus.recorders[topic].tokens() == [control]
    assert set(targets) <= set(bus.queues())


def test_known_limits():
    """What RabbitMQ's model leaves to a compute user with the default
    patterns (deploy/rabbitmq/README.md, "What cannot be refused")."""
    broker = rabbit_users.make(computes=1)
    limits = Bus(broker)
    try:
        standard_servers(limits)
        # The internal user's reply queue (the api calling a volume node).
        assert limits.client(limits.internal, VOLUME).call(
            {}, "ping", token=token())
        internal_reply = [q for q in limits.queues()
                          if q.startswith("reply_")]
        assert len(internal_reply) == 1
        conn = amqp_connection(broker, broker.computes[0])
        try:
            # 1. Any reply_<hex> queue, by its name (128 random bits).
            channel = conn.channel()
            assert channel.basic_get(internal_reply[0]) is None
            # 2. Dead-lettering routes around the topic permissions, on
            #    the door's exchange: what the api answers into such a
            #    queue goes on under any routing key (a witness queue of
            #    the internal user shows it); the internal bus's exchange
            #    is out of reach (test_compute_host_cannot_touch_...).
            probe = amqp_connection(broker, broker.internal)
            try:
                witness = probe.channel()
                witness.queue_declare("witness", auto_delete=False)
                witness.queue_bind("witness", DOOR_EXCHANGE, VOLUME)
                trap = "reply_" + uuid.uuid4().hex
                channel.queue_declare(trap, auto_delete=False, arguments={
                    "x-dead-letter-exchange": DOOR_EXCHANGE,
                    "x-dead-letter-routing-key": VOLUME,
                    "x-message-ttl": 0})
                witness.basic_publish(amqp.Message("an answer"),
                                      exchange="", routing_key=trap)
                got = harness.wait_for(
                    lambda: witness.basic_get("witness", no_ack=True),
                    timeout=CONTROL_TIMEOUT, what="the dead-lettered message")
                assert got.body in (b"an answer", "an answer")
            finally:
                probe.close()
            # 3. The door's exchange can be deleted (configure is needed
            #    to declare it, and also allows deleting it): the door
            #    stops until the api workers reconnect; the internal bus
            #    goes on.
            channel.exchange_delete(DOOR_EXCHANGE)
            exchanges = rabbit_users.ctl("list_exchanges", "-p", broker.vhost,
                                         "--no-table-headers", "name")
            assert DOOR_EXCHANGE not in exchanges.split()
            assert EXCHANGE in exchanges.split()
        finally:
            conn.close()
    finally:
        limits.stop()
        broker.remove()


# -- hardened: the door on its own exchange, per-host reply queues --------------
AGENT_PROCESS = "ashlar-agent"


@pytest.fixture(scope="module")
def hardened(tmp_path_factory):
    """REPLY_QUEUE_HOST for two compute hosts, whose agents run with
    ``use_queue_manager`` (reply_<host>:<process>:<n> queues)."""
    hosts = ["cmp%d-%s" % (n, uuid.uuid4().hex[:8]) for n in (1, 2)]
    broker = rabbit_users.make(computes=2, control_exchange=DOOR_EXCHANGE,
                               reply_hosts=hosts)
    # NOTE: use_queue_manager counts reply queues under an external lock.
    cfg.CONF.set_override("lock_path", str(tmp_path_factory.mktemp("locks")),
                          group="oslo_concurrency")
    the_bus = Bus(broker)
    the_bus.hosts = hosts
    try:
        yield standard_servers(the_bus, api_exchange=DOOR_EXCHANGE)
    finally:
        the_bus.stop()
        broker.remove()
        cfg.CONF.clear_override("lock_path", group="oslo_concurrency")
        for host in hosts:
            path = "/dev/shm/%s_%s_qmanager" % (host, AGENT_PROCESS)
            if os.path.exists(path):
                os.remove(path)


def agent_url(bus: Bus, host: int) -> str:
    """The transport URL of a hardened compute host's agent."""
    return "%s?use_queue_manager=true&hostname=%s&processname=%s" % (
        bus.broker.computes[host].url, bus.hosts[host], AGENT_PROCESS)


def test_hardened_compute_hosts_call_the_door(hardened, transports):
    for host in (0, 1):
        agent = transports(agent_url(hardened, host))
        sent = token()
        answer = hardened.client(agent, API).prepare(
            version="1.1", retry=AGENT_RETRY).call({}, "ping", token=sent)
        assert answer == {"pong": sent, "by": API}
    assert len(hardened.recorders[API].tokens()) == 2
    replies = [q for q in hardened.queues() if q.startswith("reply_")]
    for host in hardened.hosts:
        assert any(q.startswith("reply_%s:%s:" % (host, AGENT_PROCESS))
                   for q in replies), replies


@pytest.mark.parametrize("kind,topic,target", [
    ("cast", VOLUME, {}), ("call", VOLUME, {"server": VOLUME_SERVER}),
    ("cast", SCHEDULER, {}), ("cast", CAPABILITIES, {"fanout": True}),
    ("cast", API, {"server": API_SERVER})])
def test_hardened_compute_host_is_refused(hardened, transports, kind, topic,
                                          target):
    agent = transports(agent_url(hardened, 0))
    method = getattr(hardened.client(agent, topic, **target).prepare(
        retry=AGENT_RETRY), kind)
    started = time.monotonic()
    with pytest.raises(messaging.MessageDeliveryFailure,
                       match="ACCESS_REFUSED"):
        method({}, "ping", token=token())
    assert time.monotonic() - started < REFUSAL_BOUND
    control = hardened.control(kind, topic, **target)
    assert hardened.recorders[topic].tokens() == [control]


def test_hardened_reply_queues_are_each_hosts_own(hardened, transports):
    """A compute user can neither read another host's reply queue nor the
    internal user's, nor touch the internal control exchange."""
    agent = transports(agent_url(hardened, 0))
    assert hardened.client(agent, API).call({}, "ping", token=token())
    assert hardened.client(hardened.internal, VOLUME).call(
        {}, "ping", token=token())
    replies = [q for q in hardened.queues() if q.startswith("reply_")]
    first = [q for q in replies if q.startswith(
        "reply_%s:" % hardened.hosts[0])]
    internal = [q for q in replies if len(q) == 38]
    assert first and internal, replies
    conn = amqp_connection(hardened.broker, hardened.broker.computes[1])
    try:
        for queue in first + internal:
            for method in ("basic_get", "queue_delete"):
                assert "access to queue '%s'" % queue in refused(
                    conn, method, queue)
        for queue in ("reply_" + uuid.uuid4().hex,
                      "reply_%s:%s:9" % (hardened.hosts[0], AGENT_PROCESS)):
            assert "access to queue '%s'" % queue in refused(
                conn, "queue_declare", queue, auto_delete=False)
        for method, args, kwargs in (
                ("exchange_delete", (EXCHANGE,), {}),
                ("exchange_declare", (EXCHANGE, "topic"), {}),
                ("basic_publish_confirm", (amqp.Message("x"),),
                 {"exchange": EXCHANGE, "routing_key": VOLUME}),
                # No dead-lettering onto the internal exchange either.
                ("queue_declare", ("reply_%s:%s:8" % (hardened.hosts[1],
                                                      AGENT_PROCESS),),
                 {"auto_delete": False, "arguments": {
                     "x-dead-letter-exchange": EXCHANGE,
                     "x-dead-letter-routing-key": VOLUME}})):
            assert "access to exchange '%s'" % EXCHANGE in refused(
                conn, method, *args, **kwargs)
    finally:
        conn.close()
