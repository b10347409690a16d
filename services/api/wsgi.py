"""WSGI entry point: ``gunicorn services.api.wsgi:application``.

Imported in each gunicorn worker after the fork (run without ``--preload``),
so every worker opens its own broker and database connections.  The config
files come from ``ASHLAR_CONFIG_FILES`` (comma-separated).  With
``[api] auth_strategy`` keystone or http_basic the app runs behind that
mode's middleware (``auth.wrap``).
"""

import os

from common import service
from services.api import app
from services.api import auth


def _args() -> list[str]:
    files = os.environ.get("ASHLAR_CONFIG_FILES", "")
    args = []
    for path in filter(None, files.split(",")):
        args += ["--config-file", path]
    return args


def _build() -> auth.WSGIApp:
    conf = service.prepare_process(_args())
    return auth.wrap(conf, app.create_app(conf, app.build_operations(conf)))


application = _build()
