"""Build one Service per enabled backend of this node."""

from oslo_config import cfg

from common import constants
from common import service
from common.conf import volume as volume_conf
from drivers import base as driver_base
from services.volume import manager


def build_services(conf: cfg.ConfigOpts) -> list[service.Service]:
    """Return an unstarted ``ashlar-volume`` Service for each backend."""
    services = []
    for backend in conf.enabled_backends:
        volume_conf.register_backend_opts(conf, backend)
        group = conf[backend]
        driver_cls = driver_base.load_driver(group.volume_driver)
        driver_cls.register_opts(conf, backend)
        driver = driver_cls(group, group.volume_backend_name or backend,
                            conf.host)
        mgr = manager.VolumeManager(conf, conf.host, backend, driver)
        services.append(service.Service(
            conf, mgr.service_host, constants.VOLUME_BINARY,
            constants.VOLUME_TOPIC, mgr))
    return services
