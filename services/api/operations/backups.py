"""Backup operations: create, show, list, delete, restore.

A backup goes to the first backup service (by host) that is enabled and
heartbeats: the api picks it, as Cinder's backup API does, and names it
in the row's ``host``.  The row, the quota check and the volume's
``backing-up`` are one transaction (``common/db/api/backups.py``).
"""

import uuid
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from common import constants
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import backups as backups_db
from common.db.api import services as services_db
from services.api import operations
from services.api.operations import volumes as volume_ops
from services.backup import rpcapi as backup_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
BAK = constants.BackupStatus
VOL = constants.VolumeStatus


class BackupOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volumes: volume_ops.VolumeOperations,
                 backup: backup_rpcapi.BackupAPI,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volumes = volumes
        self.backup = backup
        self.volume = volume

    def get(self, ctxt: RequestContext, backup_id: str) -> models.Backup:
        """A backup ``backup:get`` lets the caller see, else
        BackupNotFound."""
        row: models.Backup = backups_db.backup_get(ctxt, backup_id)
        return operations.visible(ctxt, row, "backup:get",
                                  exception.BackupNotFound(
                                      backup_id=backup_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.Backup]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("backup:get_all", {"project_id": project})
        rows: list[models.Backup] = backups_db.backup_list(
            ctxt, project_id=project, **kwargs)
        return rows

    def _service_host(self, ctxt: RequestContext) -> str:
        """:raises ServiceUnavailable: no backup service runs."""
        running = sorted(
            row.host for row in services_db.service_liveness(
                ctxt, constants.BACKUP_BINARY)
            if not row.disabled and services_db.is_up(
                row, self.conf.service_down_time))
        if not running:
            raise exception.ServiceUnavailable(
                reason="no backup service is up.")
        return running[0]

    def _parent(self, ctxt: RequestContext, volume_id: str) -> models.Backup:
        parent = backups_db.latest_backup(ctxt, volume_id)
        if parent is None:
            raise exception.InvalidBackup(
                reason="No backups available to do an incremental backup.")
        return parent

    def create(self, ctxt: RequestContext, volume_id: str,
               name: str | None = None, description: str | None = None,
               container: str | None = None, incremental: bool = False,
               force: bool = False) -> models.Backup:
        """Write a ``creating`` backup (the volume ``backing-up``) and cast
        it to a backup service.

        :raises InvalidVolume: the volume is not ``available`` (or, with
            ``force``, ``in-use``).
        :raises InvalidBackup: incremental, and no available backup.
        :raises ServiceUnavailable: no backup service is up.
        """
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can("backup:create", {"project_id": volume.project_id})
        self.volume.require(self.volume.BACKUP_VERSION, "create_backup")
        allowed = (states.VOLUME_BACKUPABLE_FORCED if force
                   else states.VOLUME_BACKUPABLE)
        if volume.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume to be backed up must be available or in-use, "
                "but the current status is \"%s\"." % volume.status
                if force else "Volume to be backed up must be available, "
                "but the current status is \"%s\"." % volume.status)
        parent = self._parent(ctxt, volume_id) if incremental else None
        # NOTE(ashlar): the backup driver judges the container's name (a
        # POSIX folder), as in Cinder: a name it refuses ends as ``error``.
        container = (parent.container if parent else None) or \
            container or str(self.conf.backup_container)
        host = self._service_host(ctxt)
        row = backups_db.backup_create(ctxt, self.conf, {
            "id": str(uuid.uuid4()), "volume_id": volume_id,
            # As Cinder's: the backup (and its quota) is the requester's
            # project's, which is the volume's but for an administrator's.
            "project_id": ctxt.project_id or volume.project_id,
            "user_id": ctxt.user_id, "host": host,
            "availability_zone": volume.availability_zone,
            "display_name": name, "display_description": description,
            "container": container, "size": volume.size,
            "parent_id": parent.id if parent else None,
            "data_timestamp": timeutils.utcnow()},
            volume_expected={"status": allowed,
                             "migration_status": states.MIGRATION_SETTLED})
        self.backup.create_backup(ctxt, host, row.id)
        LOG.info("Backup %(id)s of volume %(vol)s accepted on %(host)s",
                 {"id": row.id, "vol": volume_id, "host": host})
        return row

    def delete(self, ctxt: RequestContext, backup_id: str) -> None:
        """``deleting``, then its backup service removes it.

        :raises InvalidBackup: not ``available`` or ``error``, or
            incremental backups depend on it.
        """
        row = self.get(ctxt, backup_id)
        ctxt.can("backup:delete", {"project_id": row.project_id})
        if row.status not in states.BACKUP_DELETABLE:
            raise exception.InvalidBackup(
                reason="Backup status must be available or error")
        if not backups_db.backup_cas(
                ctxt, backup_id, {"status": states.BACKUP_DELETABLE,
                                  "num_dependent_backups": 0},
                {"status": BAK.DELETING}):
            raise exception.InvalidBackup(
                reason="Incremental backups exist for this backup.")
        self.backup.delete_backup(ctxt, row.host or "", backup_id)

    def restore(self, ctxt: RequestContext, backup_id: str,
                volume_id: str | None = None,
                name: str | None = None) -> tuple[models.Backup, Any]:
        """Restore into ``volume_id`` (``available``, at least the
        backup's size), or into a new volume.

        :returns: the backup and the volume restored into.
        :raises InvalidBackup: the backup is not ``available``.
        :raises InvalidVolume: the volume is not ``available``, or small.
        """
        row = self.get(ctxt, backup_id)
        ctxt.can("backup:restore", {"project_id": row.project_id})
        self.volume.require(self.volume.BACKUP_VERSION, "restore_backup")
        if row.status not in states.BACKUP_USABLE:
            raise exception.InvalidBackup(
                reason="Backup status must be available")
        if volume_id is None:
            return row, self._restore_new(ctxt, row, name)
        volume = self.volumes.get(ctxt, volume_id)
        if volume.size < row.size:
            raise exception.InvalidVolume(
                reason="volume size %d is too small to restore backup of "
                "size %d." % (volume.size, row.size))
        if not backups_db.backup_cas(
                ctxt, backup_id, {"status": states.BACKUP_USABLE},
                {"status": BAK.RESTORING, "restore_volume_id": volume_id},
                (volume_id, {"status": states.VOLUME_RESTORABLE},
                 VOL.RESTORING_BACKUP)):
            raise exception.InvalidBackup(
                reason="Backup status must be available")
        self.backup.restore_backup(ctxt, row.host or "", backup_id,
                                   volume_id, new_volume=False)
        return row, self.volumes.get(ctxt, volume_id)

    def _restore_new(self, ctxt: RequestContext, row: models.Backup,
                     name: str | None) -> Any:
        if not backups_db.backup_cas(
                ctxt, row.id, {"status": states.BACKUP_USABLE},
                {"status": BAK.RESTORING}):
            raise exception.InvalidBackup(
                reason="Backup status must be available")
        try:
            volume = self.volumes.create(
                ctxt, row.size, name=name or "restore_backup_%s" % row.id,
                description="auto-created_from_restore_from_backup")
        except exception.AshlarException:
            backups_db.backup_cas(ctxt, row.id, {"status": BAK.RESTORING},
                                  {"status": BAK.AVAILABLE})
            raise
        backups_db.backup_cas(ctxt, row.id, {"status": BAK.RESTORING},
                              {"restore_volume_id": volume.id})
        self.backup.restore_backup(ctxt, row.host or "", row.id, volume.id,
                                   new_volume=True)
        return volume
