"""Build one Service per enabled backend of this node.

A member of a cluster (``[DEFAULT] cluster``) serves each backend twice
over the bus: as itself (``host@backend``) and as the cluster
(``cluster@backend``, a queue every member takes from), with the locks of
the cluster (``common.coordination``).
"""

import os

import oslo_messaging as messaging
from oslo_config import cfg

from common import constants
from common import coordination
from common import service
from common.conf import volume as volume_conf
from drivers import base as driver_base
from services.volume import manager


def build_services(conf: cfg.ConfigOpts) -> list[service.Service]:
    """Return an unstarted ``ashlar-volume`` Service for each backend."""
    host = conf.backend_host or conf.host
    locks = coordination.Locks(
        conf.coordination.backend_url if conf.cluster else None,
        "%s-%d" % (host, os.getpid()))
    services = []
    for backend in conf.enabled_backends:
        volume_conf.register_backend_opts(conf, backend)
        group = conf[backend]
        driver_cls = driver_base.load_driver(group.volume_driver)
        driver_cls.register_opts(conf, backend)
        driver = driver_cls(group, group.volume_backend_name or backend,
                            host)
        mgr = manager.VolumeManager(conf, host, backend, driver,
                                    cluster=conf.cluster, locks=locks)
        cluster_host = mgr.here.cluster_host
        services.append(service.Service(
            conf, mgr.here.member_host, constants.VOLUME_BINARY,
            constants.VOLUME_TOPIC, mgr, cluster_name=cluster_host,
            extra_targets=[messaging.Target(topic=constants.VOLUME_TOPIC,
                                            server=cluster_host)]
            if cluster_host else None))
    return services
