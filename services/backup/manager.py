"""The backup service's RPC endpoint; the work is in ``work.py``."""

import threading
from typing import Any, Callable

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import context as ashlar_context
from common import service
from drivers.backup import base as backup_base
from drivers.backup import ceph
from drivers.backup import posix
from services.backup import rpcapi as backup_rpcapi
from services.backup import takeover
from services.backup import work
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
Context = ashlar_context.RequestContext


def load_driver(conf: cfg.ConfigOpts) -> backup_base.BackupDriver:
    """The driver ``backup_driver`` names (a choice of the option)."""
    if conf.backup_driver == ceph.SERVICE:
        return ceph.CephBackupDriver.from_conf(conf)
    return posix.PosixBackupDriver.from_conf(conf)


class BackupManager(service.Manager):
    """Serves ``ashlar-backup`` as ``host`` with its ``backup_driver``."""

    target = messaging.Target(version=backup_rpcapi.BackupAPI.RPC_API_VERSION)

    def __init__(self, conf: cfg.ConfigOpts, host: str) -> None:
        self.worker = work.BackupWorker(
            conf, host, load_driver(conf), volume_rpcapi.VolumeAPI(conf))

    def after_start(self) -> None:
        """Resume what this host left in flight, beside new messages (a
        backup may take long; the service answers meanwhile)."""
        threading.Thread(target=self.worker.resume,
                         args=(ashlar_context.get_admin_context(),),
                         name="resume-backups", daemon=True).start()

    def periodic_tasks(self) -> list[tuple[float, Callable[[], None]]]:
        if not self.worker.conf.backup_takeover:
            return []
        return [(self.worker.conf.backup_takeover_interval,
                 self.take_over_dead)]

    def take_over_dead(self) -> None:
        """Take the in-flight backups of backup services seen down (with
        ``backup_takeover``) and resume them beside this check."""
        ctxt = ashlar_context.get_admin_context()
        rows = takeover.take_over(ctxt, self.worker.conf, self.worker.host,
                                  self.worker.driver.SERVICE)
        if rows:
            threading.Thread(target=self._resume_rows, args=(ctxt, rows),
                             name="takeover-backups", daemon=True).start()

    def _resume_rows(self, ctxt: Context, rows: list[Any]) -> None:
        for row in rows:
            try:
                self.worker.resume_one(ctxt, row)
            except Exception:
                LOG.exception("Resuming backup %s taken over failed", row.id)

    @messaging.expose
    def create_backup(self, ctxt: Context, backup_id: str) -> None:
        """``creating`` -> ``available`` (or ``error``)."""
        self.worker.create(ctxt, backup_id)

    @messaging.expose
    def restore_backup(self, ctxt: Context, backup_id: str, volume_id: str,
                       new_volume: bool) -> None:
        """``restoring`` -> ``available``; the volume ``available`` (or
        ``error_restoring``)."""
        self.worker.restore(ctxt, backup_id, volume_id, new_volume)

    @messaging.expose
    def import_record(self, ctxt: Context, backup_id: str,
                      backup_service: str, backup_url: str) -> None:
        """An imported ``creating`` backup -> ``available`` once its record
        matches the store (or ``error``)."""
        self.worker.import_record(ctxt, backup_id, backup_service,
                                  backup_url)

    @messaging.expose
    def delete_backup(self, ctxt: Context, backup_id: str) -> None:
        """Remove the data, then the row (or ``error_deleting``)."""
        self.worker.delete(ctxt, backup_id)
