"""A running service: its RPC server, its heartbeat and its periodic tasks.

One process may run several (a volume node runs one per backend; the
embedded mode runs the scheduler and the volume backends together).
"""

import concurrent.futures
import dataclasses
import functools
import logging as std_logging
import os
import signal
import socket
import sys
import threading
import time
import types
from typing import Any, Callable

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import conf as ashlar_conf
from common import context as ashlar_context
from common import rpc
from common import version
from common.db.api import engine as db_engine
from common.db.api import services as services_db

LOG = logging.getLogger(__name__)

#: Seconds a stop waits for a heartbeat being written.
HEARTBEAT_JOIN_TIMEOUT = 10.0

#: Seconds without a call starting or ending after which a stopped
#: service's calls in progress count as finished (see _Calls.wait_settled).
CALLS_SETTLE = 0.05


class Manager:
    """What a Service runs: an RPC endpoint plus optional periodic tasks."""

    target = messaging.Target(version="1.0")

    def init_host(self, service_uuid: str) -> None:
        """Prepare before the RPC server starts consuming messages."""

    def after_start(self) -> None:
        """Run once the RPC server consumes (e.g. announce capabilities)."""

    def warm_up(self) -> None:
        """Run last at start: do what the first requests would pay for
        (``common.warmup``)."""

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        """Return (interval seconds, function) pairs to run in the background."""
        return []

    def before_stop(self) -> None:
        """Run as a graceful stop begins (e.g. withdraw capabilities)."""


class _Calls:
    """The RPC calls a service's manager is running."""

    def __init__(self) -> None:
        self._running = 0
        self._changed = threading.Condition()

    def __enter__(self) -> None:
        with self._changed:
            self._running += 1
            self._changed.notify_all()

    def __exit__(self, *exc_info: object) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()

    def wait_settled(self, settle: float = CALLS_SETTLE,
                     timeout: float | None = None) -> bool:
        """Return True once no call runs and none started or ended for
        ``settle`` seconds; False if ``timeout`` seconds passed first.

        NOTE(ashlar): after ``server.stop()`` the listener takes nothing
        more, but a message it handed over just before may not have reached
        the manager yet (a worker thread picks it up); ``settle`` gives it
        the time to, and the call is then waited for like any other.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while True:
                left = None if deadline is None else (
                    deadline - time.monotonic())
                if left is not None and left <= 0:
                    return False
                wait = settle if left is None else min(settle, left)
                if self._running:
                    self._changed.wait(left)
                elif not self._changed.wait(wait) and wait == settle:
                    return True


#: Every RPC call the services of this process run (see wait_until_quiet).
_PROCESS_CALLS = _Calls()


class _Endpoint:
    """The manager as its RPC servers see it: each exposed method counted in
    ``calls`` while it runs, every other attribute the manager's own."""

    def __init__(self, manager: Manager, calls: _Calls) -> None:
        self._manager = manager
        self._calls = calls

    @property
    def target(self) -> messaging.Target:
        return self._manager.target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._manager, name)
        if not hasattr(attr, "exposed"):
            return attr

        @functools.wraps(attr)
        def counted(*args: Any, **kwargs: Any) -> Any:
            with self._calls, _PROCESS_CALLS:
                return attr(*args, **kwargs)
        counted.exposed = True  # type: ignore[attr-defined]
        return counted


class Service:
    """Register, heartbeat, serve RPC on ``topic`` as ``server=host``."""

    def __init__(self, conf: cfg.ConfigOpts, host: str, binary: str,
                 topic: str, manager: Manager,
                 extra_targets: list | None = None,
                 cluster_name: str | None = None) -> None:
        """:param extra_targets: more RPC targets to serve (a member of a
            cluster: the cluster's).
        :param cluster_name: the cluster this service is a member of."""
        self.conf = conf
        self.host = host
        self.binary = binary
        self.topic = topic
        self.cluster_name = cluster_name
        self.manager = manager
        self.extra_targets = extra_targets or []
        self._servers: list = []
        self._calls = _Calls()
        self._stop = threading.Event()
        self.service_id: int | None = None
        self._heartbeats: threading.Thread | None = None

    def start(self) -> None:
        ctxt = ashlar_context.get_admin_context()
        row = services_db.service_register(
            ctxt, self.host, self.binary, self.topic,
            self.conf.storage_availability_zone, version.release(),
            cluster_name=self.cluster_name)
        self.service_id = row.id
        self.manager.init_host(row.uuid)
        targets = [messaging.Target(topic=self.topic, server=self.host)]
        targets += self.extra_targets
        for target in targets:
            server = rpc.get_server(target,
                                    [_Endpoint(self.manager, self._calls)])
            server.start()
            self._servers.append(server)
        self._heartbeats = self._spawn(self.conf.report_interval,
                                       self._heartbeat)
        for interval, task in self.manager.periodic_tasks():
            self._spawn(interval, task)
        self.manager.after_start()
        LOG.info("Started %(binary)s on %(host)s",
                 {"binary": self.binary, "host": self.host})
        self.manager.warm_up()

    def _heartbeat(self) -> None:
        if self.service_id is not None:  # set by start(), before this runs
            services_db.service_heartbeat(
                ashlar_context.get_admin_context(), self.service_id)

    def _spawn(self, interval: float,
               task: Callable[[], object]) -> threading.Thread:
        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    task()
                except Exception:
                    LOG.exception("Periodic task %s failed", task)
        thread = threading.Thread(target=loop, daemon=True,
                                  name="%s-%s" % (self.binary, task.__name__))
        thread.start()
        return thread

    def _stop_servers(self) -> None:
        """Stop every RPC server at once: each waits for its listener's
        poll to notice, up to ``rpc.LISTENER_POLL_CEILING`` when idle."""
        if not self._servers:
            return
        with concurrent.futures.ThreadPoolExecutor(
                len(self._servers), thread_name_prefix="rpc-stop") as pool:
            for done in [pool.submit(server.stop)
                         for server in self._servers]:
                done.result()

    def stop(self, release: bool = True) -> None:
        """Stop gracefully: periodic tasks, the service row marked stopped
        (``down`` at once, not after ``service_down_time``), the manager's
        farewell, then RPC: no message is taken any more and the calls in
        progress finish.

        :param release: also wait for the RPC servers to let go of their
            threads and connections (``MessageHandlingServer.wait``).  That
            wait includes up to a second of idle worker threads noticing the
            stop (futurist polls its queue every second), which a process
            that ends right after (``os._exit``) need not spend: without
            ``release`` the stop ends once the calls in progress have
            returned.

        NOTE(ashlar): the row goes down before the farewell, so that no
        moment has the backend's pools withdrawn while its service still
        counts as running (APIs would let creates through and schedulers
        wait for a report that never comes).
        """
        self._stop.set()
        if self._heartbeats is not None:
            # A heartbeat being written must not land after the stop mark.
            self._heartbeats.join(timeout=HEARTBEAT_JOIN_TIMEOUT)
        if self.service_id is not None:
            try:
                services_db.service_stopped(
                    ashlar_context.get_admin_context(), self.service_id)
            except Exception:  # noqa: BLE001 - down after the timeout then
                LOG.exception("Could not mark %s stopped", self.host)
        try:
            self.manager.before_stop()
        except Exception:  # noqa: BLE001 - the stop goes on regardless
            LOG.exception("%s could not say goodbye", self.binary)
        self._stop_servers()
        if release:
            for server in self._servers:
                server.wait()
        else:
            self._calls.wait_settled()
        LOG.info("Stopped %(binary)s on %(host)s",
                 {"binary": self.binary, "host": self.host})


def serve_until_signal(services: list[Service],
                       before_stop: Callable[[], None] | None = None) -> None:
    """A process's life after its services started: serve until SIGTERM or
    SIGINT, run ``before_stop`` (a server's drain), stop the services
    together (the calls in progress finish; ``Service.stop`` without
    ``release``), end the process at once (``exit_now``)."""
    _wait_for_stop_signal()
    if before_stop is not None:
        before_stop()
    stopping = [threading.Thread(target=service.stop, args=(False,),
                                 name="stop-%s" % service.binary)
                for service in services]
    for thread in stopping:
        thread.start()
    for thread in stopping:
        thread.join()
    exit_now()


def exit_now() -> None:
    """End the process, everything in it stopped: the logs flushed and no
    interpreter teardown.

    NOTE(ashlar): the teardown, and ``MessageHandlingServer.wait``, would
    cost seconds for nothing: oslo.messaging's executor (futurist) joins
    every RPC worker thread, each of which notices the stop only at its
    next one-second poll of an empty queue, each listener's connection is
    closed in turn, and collecting some 1,600 modules takes about 0.4 s.
    What the stop finished is on disk already (the database, the
    backend's files), and a message taken but not yet handled is
    unacknowledged: the broker hands it to another consumer when the
    connection drops.  A call's answer is sent on the call's thread as the
    call returns, within the ``CALLS_SETTLE`` the stop waits after it; one
    still on its way then costs its caller a timeout, as a crash would.
    """
    std_logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def wait_until_quiet(quiet: float, timeout: float) -> bool:
    """Wait until the services of this process have run no RPC call for
    ``quiet`` seconds (False: still busy after ``timeout`` seconds)."""
    return _PROCESS_CALLS.wait_settled(quiet, timeout)


class _StopSignal:
    """SIGTERM and SIGINT, caught from :func:`catch_stop_signals` on.

    NOTE(ashlar): the kernel hands a process's signal to any of its threads;
    Python runs the handler in the main thread, but only once that thread
    wakes up, which a wait with a timeout does only at its timeout.  The
    wakeup fd is written whichever thread got the signal, so the main thread
    blocks reading it.
    """

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.reader, self.writer = socket.socketpair()
        self.writer.setblocking(False)
        signal.set_wakeup_fd(self.writer.fileno())
        signal.signal(signal.SIGTERM, self._handler)
        signal.signal(signal.SIGINT, self._handler)

    def _handler(self, signum: int, _frame: types.FrameType | None) -> None:
        self.stopped.set()

    def wait(self) -> None:
        """Block until a stop signal came (at once if one already did)."""
        while not self.stopped.is_set():
            self.reader.recv(1)


_STOP_SIGNAL: _StopSignal | None = None


def catch_stop_signals() -> None:
    """From now on SIGTERM and SIGINT only mark the process stopping (main
    thread only).  A process calls it before its services start: a signal
    that arrives while they start (a supervisor's stop right after their
    first report) is kept, and :func:`serve_until_signal` stops them
    gracefully once they run, instead of the default action killing the
    process before its pools are withdrawn and its row marked stopped."""
    global _STOP_SIGNAL
    if _STOP_SIGNAL is None:
        _STOP_SIGNAL = _StopSignal()


def _wait_for_stop_signal() -> None:
    """Block until SIGTERM or SIGINT, and return as it comes (at once for
    one caught since :func:`catch_stop_signals`)."""
    catch_stop_signals()
    assert _STOP_SIGNAL is not None
    _STOP_SIGNAL.wait()


@dataclasses.dataclass(frozen=True)
class CommandLine:
    """A command's own flags (``opts``, registered as CLI options), the
    help around them, and ``apply``, which turns the flags given into the
    options they stand for."""

    opts: list[cfg.Opt]
    description: str
    epilog: str
    apply: Callable[[cfg.ConfigOpts], None]


def prepare_process(argv: list[str] | None, project: str = "ashlar",
                    embedded: bool = False, database: bool = True,
                    command: CommandLine | None = None) -> cfg.ConfigOpts:
    """Parse config files and arguments, set up logging, the DB and the bus.

    :param database: False for processes without database access (the
        compute-host agent).
    :param command: a command's own flags and help, applied after parsing
        and before anything reads the options.
    """
    conf = ashlar_conf.CONF
    logging.register_options(conf)
    if command is not None:
        conf.register_cli_opts(command.opts)
    conf(sys.argv[1:] if argv is None else argv, project=project,
         description=command.description if command else None,
         epilog=command.epilog if command else None)
    if command is not None:
        command.apply(conf)
    logging.setup(conf, project)
    if database:
        db_engine.configure(conf)
    rpc.init(conf, embedded=embedded)
    return conf


def run_service(build: Callable[[cfg.ConfigOpts], Service],
                argv: list[str] | None = None) -> None:
    """A process of one service: prepare it, build and start the service
    (``build(conf)``), serve until SIGTERM."""
    conf = prepare_process(argv)
    catch_stop_signals()
    svc = build(conf)
    svc.start()
    serve_until_signal([svc])
