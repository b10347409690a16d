"""Backup operations: create (of a volume or a snapshot), show, list,
update, delete, restore, the admin actions (reset-status, force-delete),
and the export and import of a backup's record.

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

from common import backup_record
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
        running = sorted(services_db.running_backends(
            ctxt, self.conf.service_down_time, constants.BACKUP_BINARY))
        if not running:
            raise exception.ServiceUnavailable(
                reason="no backup service is up.")
        return running[0]

    def _parent(self, ctxt: RequestContext, volume_id: str,
                snapshot: models.Snapshot | None) -> models.Backup:
        # NOTE: the requester's project's backups only, as Cinder's
        # filter: an administrator's backup of another project's volume
        # is no parent of that project's incremental one, nor the reverse.
        parent = backups_db.latest_backup(
            ctxt, volume_id, ctxt.project_id,
            snapshot.id if snapshot else None)
        if parent is None:
            raise exception.InvalidBackup(
                reason="No backups available to do an incremental backup.")
        return parent

    def _check_source(self, ctxt: RequestContext, volume: Any,
                      snapshot_id: str | None,
                      force: bool) -> models.Snapshot | None:
        """The volume's status (``available``, or ``in-use`` with
        ``force``), or the snapshot of it to read instead (``available``),
        in Cinder's words.

        :returns: the snapshot, if any.
        """
        if snapshot_id:
            self.volume.require(self.volume.SNAPSHOT_BACKUP_VERSION,
                                "create_backup")
            snapshot = self.volumes.snapshot(ctxt, snapshot_id)
            if snapshot.volume_id != volume.id:
                raise exception.InvalidVolume(
                    reason="Volume %s does not match with snapshot.volume_id "
                    "%s." % (volume.id, snapshot.volume_id))
            if snapshot.status not in states.SNAPSHOT_BACKUPABLE:
                raise exception.InvalidSnapshot(
                    reason="Snapshot to be backed up must be available, but "
                    "the current status is \"%s\"." % snapshot.status)
            return snapshot
        allowed = (states.VOLUME_BACKUPABLE_FORCED if force
                   else states.VOLUME_BACKUPABLE)
        if volume.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume to be backed up must be available or in-use, "
                "but the current status is \"%s\"." % volume.status
                if force else "Volume to be backed up must be available, "
                "but the current status is \"%s\"." % volume.status)
        return None

    def create(self, ctxt: RequestContext, volume_id: str,
               name: str | None = None, description: str | None = None,
               container: str | None = None, incremental: bool = False,
               force: bool = False, snapshot_id: str | None = None,
               metadata: dict[str, str] | None = None) -> models.Backup:
        """Write a ``creating`` backup (the volume, or its snapshot
        ``snapshot_id``, ``backing-up``) and cast it to a backup service.

        :raises InvalidVolume: the volume is not ``available`` (or, with
            ``force``, ``in-use``), or is not the snapshot's.
        :raises InvalidSnapshot: the snapshot is not ``available``.
        :raises InvalidBackup: incremental, and no available backup.
        :raises ServiceUnavailable: no backup service is up.
        """
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can("backup:create", {"project_id": volume.project_id})
        self.volume.require(self.volume.BACKUP_VERSION, "create_backup")
        snapshot = self._check_source(ctxt, volume, snapshot_id, force)
        parent = self._parent(ctxt, volume_id, snapshot) \
            if incremental else None
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
            "container": container,
            "size": snapshot.volume_size if snapshot else volume.size,
            "parent_id": parent.id if parent else None,
            "snapshot_id": snapshot_id or None,
            "data_timestamp": snapshot.created_at if snapshot
            else timeutils.utcnow()},
            volume_expected={} if snapshot else {
                "status": states.VOLUME_BACKUPABLE_FORCED if force
                else states.VOLUME_BACKUPABLE,
                "migration_status": states.MIGRATION_SETTLED},
            metadata=metadata)
        self.backup.create_backup(ctxt, host, row.id)
        LOG.info("Backup %(id)s of volume %(vol)s accepted on %(host)s",
                 {"id": row.id, "vol": volume_id, "host": host})
        return row

    def update(self, ctxt: RequestContext, backup_id: str,
               values: dict[str, Any],
               metadata: dict[str, str] | None = None) -> models.Backup:
        """Name, description (3.9) and metadata, replaced whole (3.43)."""
        row = self.get(ctxt, backup_id)
        ctxt.can("backup:update", {"project_id": row.project_id})
        updated: models.Backup = backups_db.backup_update(
            ctxt, backup_id, values, metadata)
        return updated

    def delete(self, ctxt: RequestContext, backup_id: str,
               force: bool = False) -> None:
        """``deleting``, then its backup service removes it.

        With ``force`` (an admin's ``os-force_delete``), any status but
        ``restoring`` (``states.BACKUP_BUSY``): a ``creating`` backup is
        cancelled (its service stops reading and removes what it wrote), a
        ``deleting`` one is cast again, as Cinder's force delete does.

        :raises InvalidBackup: not ``available`` or ``error`` (busy, with
            ``force``), or incremental backups depend on it.
        """
        row = self.get(ctxt, backup_id)
        ctxt.can("backup:delete", {"project_id": row.project_id})
        if force:
            ctxt.can("volume_extension:backup_admin_actions:force_delete",
                     {"project_id": row.project_id})
        if row.status in states.BACKUP_BUSY if force else \
                row.status not in states.BACKUP_DELETABLE:
            raise exception.InvalidBackup(
                reason="Backup status must be other than restoring"
                if force else "Backup status must be available or error")
        if not backups_db.backup_cas(
                ctxt, backup_id, {"status": row.status if force
                                  else states.BACKUP_DELETABLE,
                                  "num_dependent_backups": 0},
                {"status": BAK.DELETING}):
            raise exception.InvalidBackup(
                reason="Incremental backups exist for this backup."
                if backups_db.backup_get(ctxt, backup_id).num_dependent_backups
                else "Backup %s changed status meanwhile; try again."
                % backup_id)
        self.backup.delete_backup(ctxt, row.host or "", backup_id)

    def reset_status(self, ctxt: RequestContext, backup_id: str,
                     status: str) -> None:
        """An admin's ``os-reset_status``: the row only, as Cinder's backup
        service does (a step still running finds it changed and stops).

        :raises InvalidInput: not ``available`` or ``error``.
        """
        row = self.get(ctxt, backup_id)
        ctxt.can("volume_extension:backup_admin_actions:reset_status",
                 {"project_id": row.project_id})
        if status.lower() not in states.BACKUP_RESET_STATUSES:
            raise exception.InvalidInput(
                reason="Backup status: %s is invalid, valid statuses are: "
                "%s." % (status, list(states.BACKUP_RESET_STATUSES)))
        if not backups_db.backup_cas(ctxt, backup_id, {"status": row.status},
                                     {"status": status.lower()}):
            raise exception.InvalidBackup(
                reason="Backup %s changed status meanwhile; try again."
                % backup_id)
        LOG.info("Backup %(id)s reset from %(old)s to %(new)s",
                 {"id": backup_id, "old": row.status, "new": status.lower()})

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

    # -- export and import of a backup's record --------------------------------
    def export_record(self, ctxt: RequestContext,
                      backup_id: str) -> dict[str, str]:
        """Cinder's export: ``backup_service`` (the driver that wrote it)
        and ``backup_url`` (``common.backup_record``).

        :raises InvalidBackup: not ``available``.
        """
        row = self.get(ctxt, backup_id)
        ctxt.can("backup:export-import", {"project_id": row.project_id})
        if row.status not in states.BACKUP_USABLE:
            raise exception.InvalidBackup(
                reason="Backup status must be available and not %s."
                % row.status)
        return {"backup_service": row.service or "",
                "backup_url": backup_record.encode(row, driver_info={})}

    def import_record(self, ctxt: RequestContext, backup_service: str,
                      backup_url: str) -> models.Backup:
        """Write the record's backup ``creating`` in the caller's project
        (under its quotas) and cast it to a backup service, which checks
        the record against its store (Cinder's import).

        :raises InvalidInput: the record cannot be read, or lacks its id
            or size.
        :raises InvalidBackup: a backup with that id exists.
        :raises ServiceUnavailable: no backup service is up.
        """
        ctxt.can("backup:backup-import")
        # NOTE(ashlar): the record first: a record that cannot be read is
        # the caller's 400 whatever the backup services' state.
        record = backup_record.decode(backup_url)
        backup_record.check(record)
        self.backup.require(self.backup.IMPORT_VERSION, "import_record")
        host = self._service_host(ctxt)
        row = backups_db.backup_import_create(ctxt, self.conf, {
            "id": record["id"], "project_id": ctxt.project_id,
            "user_id": ctxt.user_id, "host": host,
            "volume_id": backup_record.IMPORT_VOLUME_ID,
            "size": record["size"]})
        self.backup.import_record(ctxt, host, row.id, backup_service,
                                  backup_url)
        LOG.info("Import of backup %(id)s accepted on %(host)s",
                 {"id": row.id, "host": host})
        return row
