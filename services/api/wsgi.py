"""WSGI entry point: ``gunicorn services.api.wsgi:application``.

Imported in each gunicorn worker after the fork (run without ``--preload``),
so every worker opens its own broker and database connections.  The config
files come from ``ASHLAR_CONFIG_FILES`` (comma-separated).  With
``[api] auth_strategy = keystone`` the app runs behind keystonemiddleware
(``app.wrap_auth``).
"""

import os

from common import service
from services.api import app


def _args() -> list[str]:
    files = os.environ.get("ASHLAR_CONFIG_FILES", "")
    args = []
    for path in filter(None, files.split(",")):
        args += ["--config-file", path]
    return args


def _build() -> app.WSGIApp:
    conf = service.prepare_process(_args())
    return app.wrap_auth(conf, app.create_app(conf, app.build_operations(conf)))


application = _build()
