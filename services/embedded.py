"""``ashlar``: the embedded default, every service in one process.

With no ``transport_url`` and no ``[database] connection`` it runs on
oslo.messaging's in-process transport, an SQLite file and the file backend,
all under ``state_path``.  The code paths are those of the separate
processes; only the transport and the WSGI server differ.
"""

import socketserver
import sys
import threading
from wsgiref import simple_server

from oslo_log import log as logging

from common import exception
from common import service
from common.db import api as db_api
from common.db import migrations
from services.api import app
from services.api import auth
from services.scheduler import launcher as scheduler_launcher
from services.volume import launcher as volume_launcher

LOG = logging.getLogger(__name__)


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        LOG.debug(format, *args)


def main(argv: list[str] | None = None) -> None:
    conf = service.prepare_process(sys.argv[1:] if argv is None else argv,
                                   embedded=True)
    try:
        auth.check_bind(conf)
    except exception.NoAuthNotLoopback as exc:
        sys.exit("ashlar: %s" % exc)
    migrations.upgrade(db_api.get_engine())
    services = [scheduler_launcher.build_service(conf)]
    services += volume_launcher.build_services(conf)
    for svc in services:
        svc.start()
    wsgi_app = auth.wrap(conf, app.create_app(conf,
                                              app.build_operations(conf)))
    server = simple_server.make_server(
        conf.api.bind_host, conf.api.bind_port, wsgi_app,
        server_class=_ThreadingServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True,
                     name="wsgi").start()
    LOG.info("Ashlar (embedded) listening on http://%(host)s:%(port)d/",
             {"host": conf.api.bind_host, "port": conf.api.bind_port})
    service.wait_for_signal(services)
    server.shutdown()


if __name__ == "__main__":
    main()
