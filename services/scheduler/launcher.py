"""Build the scheduler Service: its own topic plus the capability fanout."""

import os
import uuid

import oslo_messaging as messaging
from oslo_config import cfg

from common import constants
from common import service
from services.scheduler import manager


def build_service(conf: cfg.ConfigOpts) -> service.Service:
    """Return an unstarted ``ashlar-scheduler`` Service."""
    listener = messaging.Target(
        topic=constants.CAPABILITIES_TOPIC,
        server="scheduler-%s-%d-%s" % (conf.host, os.getpid(),
                                       uuid.uuid4().hex[:8]))
    return service.Service(conf, conf.host, constants.SCHEDULER_BINARY,
                           constants.SCHEDULER_TOPIC,
                           manager.SchedulerManager(conf),
                           extra_targets=[listener])
