"""WSGI entry point: ``gunicorn services.api.wsgi:application``.

Imported in each gunicorn worker after the fork (run without ``--preload``),
so every worker opens its own broker and database connections.  The config
files come from ``ASHLAR_CONFIG_FILES`` (comma-separated).
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


def _build() -> object:
    conf = service.prepare_process(_args())
    wrapped = app.create_app(conf, app.build_operations(conf))
    if conf.api.auth_strategy == "keystone":
        from keystonemiddleware import auth_token
        return auth_token.AuthProtocol(wrapped, {"oslo_config_config": conf})
    return wrapped


application = _build()

