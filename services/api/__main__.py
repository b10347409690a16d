"""``ashlar-api``: serve the REST API with gunicorn workers.

The app is built in each worker after the fork (no preload), so broker,
database and fanout listener connections are per worker; its modules are
imported once, in the master, before the fork (``_import_before_fork``).
"""

import gc
import importlib
import os
import sys

from gunicorn.app import base as gunicorn_base
from gunicorn.workers import base as workers_base
from oslo_config import cfg

from common import exception
from common import service
from common.conf import api as api_conf
from services.api import auth
from services.api import keepalive


class _Server(gunicorn_base.BaseApplication):
    def __init__(self, options: dict) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> auth.WSGIApp:
        from services.api import wsgi
        return wsgi.application


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # NOTE(ashlar): the master reads only [api] into a private ConfigOpts;
    # each worker parses the global CONF itself after the fork (wsgi.py).
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf(argv, project="ashlar")
    try:
        auth.check_bind(conf)
    except exception.NoAuthNotLoopback as exc:
        sys.exit("ashlar-api: %s" % exc)
    os.environ["ASHLAR_CONFIG_FILES"] = ",".join(conf.config_file or [])
    _import_before_fork(conf)
    _Server({"bind": "%s:%d" % (conf.api.bind_host, conf.api.bind_port),
             "workers": conf.api.workers, "threads": conf.api.threads,
             "worker_class": keepalive.worker_class(),
             "on_starting": keepalive.announce, "worker_exit": _worker_exit,
             "preload_app": False, "keepalive": 30, "graceful_timeout": 10,
             "accesslog": None, "worker_tmp_dir": _worker_tmp_dir()}).run()


def _import_before_fork(conf: cfg.ConfigOpts) -> None:
    """Import the app's modules in the master, with keystonemiddleware's
    ``auth_token`` in keystone mode, then move every object the imports
    made out of the garbage collector's sight (``gc.freeze``), as Python's
    documentation advises before forking.  The workers then share those
    pages with the master instead of each importing its own copy (about
    11 MiB and 60 ms for ``auth_token``), and a worker (re)starts without
    the imports.  Importing opens nothing: each worker still builds its app
    and connections (``wsgi.py``)."""
    importlib.import_module("services.api.app")
    if conf.api.auth_strategy == "keystone":
        try:
            importlib.import_module("keystonemiddleware.auth_token")
        except ImportError:
            pass  # each worker says so as it builds its app (auth.wrap)
    gc.freeze()


def _worker_exit(_server: object, worker: workers_base.Worker) -> None:
    """gunicorn's ``worker_exit`` hook, run in the worker as it ends: a
    worker that booted and ends normally (its requests answered) ends at
    once (``service.exit_now``), without the interpreter's teardown, which
    waits for each RPC server's idle threads; any other end keeps its exit
    code, by which the master tells a worker that cannot boot."""
    ending = sys.exc_info()[1]
    if worker.booted and isinstance(ending, SystemExit) and \
            ending.code in (0, None):
        service.exit_now()


def _worker_tmp_dir() -> str | None:
    """Where workers touch their heartbeat file at every loop: memory
    (``/dev/shm``) when the system has it, as gunicorn advises, not a
    disk-backed ``/tmp``."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else None


if __name__ == "__main__":
    main()


