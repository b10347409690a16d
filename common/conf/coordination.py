"""[coordination]: where the volume nodes of a cluster take the locks
they share (``common.coordination``), and the [DEFAULT] options that make a
volume node a member of a cluster."""

from oslo_config import cfg

GROUP = "coordination"

opts = [
    cfg.StrOpt("backend_url", default="file://$state_path/coordination",
               help="tooz URL of the lock service the members of a "
                    "cluster share: etcd through its gRPC gateway "
                    "(etcd3+http://HOST:2379?lock_timeout=SECONDS, the "
                    "etcd3gw driver), Redis (redis://HOST:6379), or "
                    "file://FOLDER for members on one host. A member that "
                    "dies holds its locks until their lease lapses "
                    "(lock_timeout, 30 s by default): that is how long "
                    "before another member resumes its work. Unused by a "
                    "volume node outside a cluster."),
]

#: [DEFAULT] options of a volume node (Cinder's names and meanings).
cluster_opts = [
    cfg.StrOpt("cluster",
               help="Name of the cluster this volume node belongs to: "
                    "every member serves the volumes of each backend it "
                    "runs as CLUSTER@BACKEND, any live member takes a "
                    "message for them, and a dead member's interrupted "
                    "work is resumed by a live one. Members must run the "
                    "same backends on the same storage."),
    cfg.StrOpt("backend_host",
               help="Host name the volume node's backends report and are "
                    "addressed by, instead of [DEFAULT] host: an "
                    "active/passive pair gives both nodes the same one."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    conf.register_opts(cluster_opts)


def list_opts() -> list:
    return [(GROUP, opts), ("DEFAULT", cluster_opts)]
