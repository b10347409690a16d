"""[api] options: the REST front door."""

from oslo_config import cfg

GROUP = "api"

opts = [
    cfg.HostAddressOpt("bind_host", default="127.0.0.1",
                       help="Address the REST API listens on."),
    cfg.PortOpt("bind_port", default=8776, help="Port the REST API listens on."),
    cfg.IntOpt("workers", default=2, min=1,
               help="gunicorn worker processes for ashlar-api."),
    cfg.IntOpt("threads", default=8, min=1,
               help="Threads per gunicorn worker."),
    cfg.IntOpt("max_limit", default=1000, min=1,
               help="Most items a list returns in one page."),
    cfg.StrOpt("auth_strategy", default="noauth", choices=["noauth", "keystone"],
               help="noauth: Cinder's development scheme (token user:project, "
                    "admin unless X-Roles says otherwise); keystone: run "
                    "behind keystonemiddleware's auth_token."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> list:
    return [(GROUP, opts)]
