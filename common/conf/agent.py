"""[agent] options of ``ashlar-agent`` on compute hosts (its credential is
``common.conf.agent_auth``); volume and backup nodes read volumes through
the same data path, with the same options (a moving volume's source, a
backed-up volume)."""

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
    cfg.StrOpt("iscsi_initiator",
               help="This host's iSCSI initiator IQN when open-iscsi's "
                    "/etc/iscsi/initiatorname.iscsi gives none (iSCSI "
                    "volumes are used through libiscsi, without a kernel "
                    "initiator). Unset: iqn.2010-10.org.openstack.ashlar:"
                    "<host>."),
    cfg.StrOpt("rbd_user",
               help="The cephx user this host opens RBD volumes as (as "
                    "Nova's [libvirt] rbd_user); unset: the user the "
                    "attachment's connection_info names, the volume "
                    "service's. Give compute hosts a user of their own "
                    "whose mon caps are 'profile rbd' alone, so that a "
                    "fenced host cannot lift its blocklist entry "
                    "(docs/fencing.md)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> list:
    return [(GROUP, opts)]
