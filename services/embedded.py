"""``ashlar``: the embedded default, every service in one process.

With no ``transport_url`` and no ``[database] connection`` it runs on
oslo.messaging's in-process transport, an SQLite file, the file backend and
the backup service with its POSIX driver, all under ``state_path``.  The
code paths are those of the separate processes; only the transport and the
WSGI server differ.
"""

import os
import socketserver
import sys
import threading
from typing import Callable
from wsgiref import simple_server

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from common import service
from common.db import migrations
from common.db.api import engine as db_engine
from services.api import app
from services.api import auth
from services.backup import launcher as backup_launcher
from services.scheduler import launcher as scheduler_launcher
from services.volume import launcher as volume_launcher

LOG = logging.getLogger(__name__)

#: Seconds the HTTP server's loop waits between looks at a stop request.
SERVE_POLL_INTERVAL = 0.05
#: Seconds without an RPC call after which the in-process bus counts as
#: empty (twice the fake driver's 50 ms poll of its queues) ...
BUS_QUIET = 0.1
#: ... and the longest a stop waits for that before the services stop.
BUS_QUIET_LIMIT = 0.5


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    # NOTE(ashlar): not daemon threads, so that server_close() waits for the
    # requests in flight when the process is asked to stop.
    daemon_threads = False
    # NOTE(ashlar): socketserver's listen backlog is 5; 16 clients
    # connecting at once on a loaded machine got connections reset.
    request_queue_size = 128
    block_on_close = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        LOG.debug(format, *args)


def _listen(conf: cfg.ConfigOpts) -> _ThreadingServer:
    """The HTTP server, bound before anything starts.

    :raises SystemExit: the address is taken (one line, exit 1).
    """
    try:
        return simple_server.make_server(
            conf.api.bind_host, conf.api.bind_port, _not_ready,
            server_class=_ThreadingServer, handler_class=_QuietHandler)
    except OSError as exc:
        sys.exit("ashlar: cannot listen on %s:%d: %s (another Ashlar or "
                 "Cinder? set [api] bind_port)" % (
                     conf.api.bind_host, conf.api.bind_port,
                     exc.strerror or exc))


def _not_ready(environ: dict, start_response: Callable) -> list[bytes]:
    start_response("503 Service Unavailable", [("Retry-After", "1")])
    return [b""]


def _apply_flags(conf: cfg.ConfigOpts) -> None:
    """``--port`` and ``--data-dir`` stand for ``[api] bind_port`` and
    ``[DEFAULT] state_path``."""
    if conf.port is not None:
        conf.set_override("bind_port", conf.port, "api")
    if conf.data_dir is not None:
        conf.set_override("state_path", conf.data_dir)


COMMAND = service.CommandLine(
    opts=[cfg.PortOpt("port", help="Port of the REST API (default: "
                                   "[api] bind_port, 8776)."),
          cfg.StrOpt("data-dir", metavar="DIR",
                     help="Folder of the SQLite database and the volumes' "
                          "files (default: [DEFAULT] state_path, "
                          "./ashlar-data).")],
    description="Ashlar in one process: the Cinder v3 API on "
                "http://127.0.0.1:8776/v3, its scheduler, a file "
                "backend and backups, on SQLite and an in-process bus.",
    epilog="Every option of the configuration file (deploy/ashlar.conf."
           "sample) can be set in a file given with --config-file, or in "
           "the environment as OS_<GROUP>__<OPTION>, e.g. "
           "OS_API__BIND_HOST=127.0.0.2 or OS_API__AUTH_STRATEGY=http_basic. "
           "Name a broker ([DEFAULT] transport_url) and a database "
           "([database] connection) to run the services as separate "
           "processes instead (ashlar-api, ashlar-scheduler, ashlar-volume).",
    apply=_apply_flags)


def main(argv: list[str] | None = None) -> None:
    conf = service.prepare_process(sys.argv[1:] if argv is None else argv,
                                   embedded=True, command=COMMAND)
    try:
        auth.check_bind(conf)
    except exception.NoAuthNotLoopback as exc:
        sys.exit("ashlar: %s" % exc)
    server = _listen(conf)
    migrations.upgrade(db_engine.get_engine())
    services = [scheduler_launcher.build_service(conf)]
    services += volume_launcher.build_services(conf)
    backup = backup_launcher.build_service(conf)
    service.catch_stop_signals()
    for svc in services + [backup]:
        svc.start()
    ops = app.build_operations(conf)
    server.set_app(auth.wrap(conf, app.create_app(conf, ops)))
    threading.Thread(target=server.serve_forever,
                     args=(SERVE_POLL_INTERVAL,), daemon=True,
                     name="wsgi").start()
    url = "http://%s:%d/v3" % (conf.api.bind_host, conf.api.bind_port)
    LOG.info("Ashlar (embedded) listening on %s", url)
    print("Ashlar serves the Cinder v3 API at %s (auth: %s)\n"
          "Its data is in %s\nCtrl-C (or SIGTERM) stops it."
          % (url, conf.api.auth_strategy, os.path.abspath(conf.state_path)),
          flush=True)

    def drain() -> None:
        # No new connection; the requests in progress get their answers.
        server.shutdown()
        server.server_close()
        # NOTE(ashlar): the in-process bus forgets what it holds when the
        # process ends: the casts of the requests just answered (a create on
        # its way from the scheduler to the volume service) get a moment to
        # arrive, or they would wait for the recovery after a restart.
        if not service.wait_until_quiet(BUS_QUIET, BUS_QUIET_LIMIT):
            LOG.info("RPC work still running after %.1f s; stopping the "
                     "services (they finish the calls in progress)",
                     BUS_QUIET_LIMIT)
        # NOTE(ashlar): ops.stop() waits for its RPC servers' idle worker
        # threads (up to a second).  Nothing there outlives the process: the
        # capability cache is memory, and the door serves compute agents,
        # who retry a call that times out (on the in-process bus none can
        # reach it).  It runs beside the services' stop and is not waited
        # for.
        threading.Thread(target=ops.stop, daemon=True,
                         name="stop-api").start()
        # A backup or restore in progress ends with calls to the volume
        # service: the backup service stops (finishing it) before the rest.
        backup.stop(release=False)
    service.serve_until_signal(services, before_stop=drain)


if __name__ == "__main__":
    main()
