"""[agent] options of ``ashlar-agent`` on compute hosts (its credential is
``common.conf.agent_auth``)."""

from oslo_config import cfg

GROUP = "agent"

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


def list_opts() -> list:
    return [(GROUP, opts)]
