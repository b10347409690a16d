"""[agent_auth]: the credential of ``ashlar-agent`` on compute hosts.

A keystoneauth1 auth section: ``auth_type = password`` (a Keystone user
named ``<[api] agent_user_prefix><host>`` with the ``service`` role) or
``http_basic`` (an htpasswd user of that name), and the plugin's options.
Without ``auth_type`` the agent sends no credential, which only an api in
noauth mode accepts.

Only the agent registers it (``common.conf`` does not): importing
keystoneauth1 costs every other process about 50 ms of its start.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = "agent_auth"
#: The auth plugins whose options the sample config lists.
SAMPLE_PLUGINS = ("password", "http_basic")


def register_opts(conf: cfg.ConfigOpts) -> None:
    ks_loading.register_auth_conf_options(conf, GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)


def _sample_opts() -> list:
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
    return [(GROUP, _sample_opts())]
