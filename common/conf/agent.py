"""[agent] and [agent_auth] options of ``ashlar-agent`` on compute hosts.

``[agent_auth]`` is a keystoneauth1 auth section: ``auth_type = password``
(a Keystone user named ``<[api] agent_user_prefix><host>`` with the
``service`` role) or ``http_basic`` (an htpasswd user of that name), and the
plugin's options.  Without ``auth_type`` the agent sends no credential,
which only an api in noauth mode accepts.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = "agent"
AUTH_GROUP = "agent_auth"
#: The auth plugins whose options the sample config lists.
SAMPLE_PLUGINS = ("password", "http_basic")

opts = [
    cfg.StrOpt("root_helper", default="sudo",
               help="Command prefix os-brick uses to run privileged commands."),
    cfg.HostAddressOpt("my_ip", default="127.0.0.1",
                       help="This host's address, sent in the connector."),
    cfg.BoolOpt("multipath", default=False,
                help="Ask for multipath connections."),
    cfg.StrOpt("lock_path", default="$state_path/agent-locks",
               help="Folder of the file locks that keep an attach and a "
                    "detach of one volume on this host from interleaving."),
    cfg.StrOpt("rbd_keyring_dir", default="/etc/ceph",
               help="Folder of this host's Ceph keyrings, named "
                    "<cluster>.client.<user>.keyring as os-brick expects; "
                    "connection_info never carries the key."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    ks_loading.register_auth_conf_options(conf, AUTH_GROUP)
    ks_loading.register_session_conf_options(conf, AUTH_GROUP)


def _auth_sample_opts() -> list:
    """The auth section's options as the sample shows them."""
    found: dict = {}
    for opt in (ks_loading.get_session_conf_options()
                + ks_loading.get_auth_common_conf_options()):
        found.setdefault(opt.dest, opt)
    for plugin in SAMPLE_PLUGINS:
        for opt in ks_loading.get_auth_plugin_conf_options(plugin):
            found.setdefault(opt.dest, opt)
    return list(found.values())


def list_opts() -> list:
    return [(GROUP, opts), (AUTH_GROUP, _auth_sample_opts())]
