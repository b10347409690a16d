"""Build the backup Service: topic ``ashlar-backup``, server ``host``."""

from oslo_config import cfg

from common import constants
from common import service
from services.backup import manager


def build_service(conf: cfg.ConfigOpts) -> service.Service:
    """Return an unstarted ``ashlar-backup`` Service."""
    return service.Service(conf, conf.host, constants.BACKUP_BINARY,
                           constants.BACKUP_TOPIC,
                           manager.BackupManager(conf, conf.host))
