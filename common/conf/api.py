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
    cfg.StrOpt("auth_strategy", default="noauth",
               choices=[("noauth", "Cinder's development scheme: the token "
                                   "user:project, admin unless X-Roles says "
                                   "otherwise; loopback addresses only"),
                        ("keystone", "keystonemiddleware's auth_token "
                                     "([keystone_authtoken])"),
                        ("http_basic", "HTTP basic authentication against "
                                       "an htpasswd file ([http_basic])")],
               help="How callers of the REST API and of the RPC door for "
                    "compute agents prove who they are."),
    cfg.BoolOpt("noauth_allow_remote", default=False,
                help="Let noauth serve on an address other than loopback. "
                     "Anyone who reaches it is then an administrator of "
                     "every project: for a throwaway lab only."),
    cfg.StrOpt("agent_user_prefix", default="ashlar-agent-",
               help="A verified user named <prefix><host> (with the "
                    "service role in keystone mode) is the compute agent "
                    "of <host>: it manages the attachments whose connector "
                    "is that host's, in any project, and nothing else."),
    cfg.StrOpt("agent_user_domain_id", default="default",
               help="keystone mode: the domain compute agents' users are in "
                    "(user names are unique per domain only)."),
]

#: HTTP basic authentication for a single operator's deployment.
BASIC_GROUP = "http_basic"
basic_opts = [
    cfg.StrOpt("user_file", default="/etc/ashlar/htpasswd",
               help="htpasswd file of bcrypt entries (htpasswd -B), as "
                    "oslo.middleware's basic auth reads it; changes take "
                    "effect without a restart."),
    cfg.StrOpt("project_id", default="admin",
               help="The project every http_basic user (but agents) works "
                    "in."),
    cfg.ListOpt("roles", default=["admin"],
                help="The roles of every http_basic user but agents "
                     "(admin implies member and reader). Agents "
                     "(agent_user_prefix) have the service role only."),
    cfg.IntOpt("cache_time", default=300, min=0,
               help="Seconds a verified user:password pair is remembered "
                    "(bcrypt costs ~0.2 s per check); a change to the file "
                    "ends it at once."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    conf.register_opts(basic_opts, group=BASIC_GROUP)


def list_opts() -> list:
    return [(GROUP, opts), (BASIC_GROUP, basic_opts)]
