"""Backups, restores and deletes, as a backup service runs them.

The volume is read (or written) through the data path a compute host
uses (``services.agent.volume_io``: the file, or librbd), over a
connection its volume node makes for this service (``backup_connect``,
volume RPC 1.8) while the volume is ``backing-up`` (or
``restoring-backup``); never through a compute host's attachment.  A
cast has no caller to answer: a failure ends as a status with a
``fail_reason``, as in Cinder (backup ``error``, or the volume
``error_restoring`` and the backup ``available`` again).
"""

import contextlib
import time
from typing import Any
from typing import Iterator

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common import exception
from common.db.api import attachments as attachments_db
from common.db.api import backups as backups_db
from common.db.api import volumes as volumes_db
from drivers.backup import posix
from services.agent import iscsi_io
from services.agent import volume_io
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
Context = ashlar_context.RequestContext
BAK = constants.BackupStatus
VOL = constants.VolumeStatus
GIB = 1024 ** 3
#: Seconds between reads of a new volume a restore waits for.
NEW_VOLUME_POLL = 0.5


class BackupWorker:
    def __init__(self, conf: cfg.ConfigOpts, host: str,
                 driver: posix.PosixBackupDriver,
                 volume_rpc: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.host = host
        self.driver = driver
        self.volume_rpc = volume_rpc
        #: This host as the volume node sees it: an iSCSI volume's target
        #: lets in the initiator volume_io logs in as.
        self.connector = {"host": host, "multipath": False,
                          "initiator": iscsi_io.initiator_name(conf)}

    # -- the data path ---------------------------------------------------------
    @contextlib.contextmanager
    def _open(self, ctxt: Context, volume: Any,
              read_only: bool) -> Iterator[volume_io.VolumeHandle]:
        info = self.volume_rpc.backup_connect(ctxt, volume.host, volume.id,
                                              self.connector)
        try:
            flat = dict(info.get("data") or {},
                        driver_volume_type=info.get("driver_volume_type"),
                        access_mode="ro" if read_only else "rw")
            if flat.get("format", "raw") != "raw":
                raise exception.InvalidVolume(
                    reason="Volume %s is %s; backups read raw volumes."
                    % (volume.id, flat["format"]))
            with volume_io.open_volume(self.conf, {
                    "id": "backup-of-%s" % volume.id,
                    "connection_info": flat}) as handle:
                yield handle
        finally:
            self.volume_rpc.backup_disconnect(ctxt, volume.host, volume.id,
                                              self.connector)

    def _ref(self, row: Any) -> posix.BackupRef:
        return posix.BackupRef(row.id, row.container)

    # -- create ----------------------------------------------------------------
    def create(self, ctxt: Context, backup_id: str) -> None:
        row = backups_db.backup_get(ctxt, backup_id)
        if row.status != BAK.CREATING:
            return
        volume = volumes_db.volume_get(ctxt, row.volume_id)
        parent = (self._ref(backups_db.backup_get(ctxt, row.parent_id))
                  if row.parent_id else None)
        try:
            with self._open(ctxt, volume, read_only=True) as handle:
                meta = self.driver.backup(self._ref(row), handle,
                                          volume.size * GIB, parent)
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Backup %s failed", backup_id)
            self._settle(ctxt, backup_id, BAK.CREATING,
                         {"status": BAK.ERROR, "fail_reason": str(exc)},
                         row.volume_id)
            return
        self._settle(ctxt, backup_id, BAK.CREATING,
                     {"status": BAK.AVAILABLE,
                      "object_count": meta["object_count"],
                      "service": "drivers.backup.posix"},
                     row.volume_id)

    def _settle(self, ctxt: Context, backup_id: str, expected: str,
                values: dict[str, Any], volume_id: str) -> None:
        """The backup to ``values``; the volume out of ``backing-up`` to
        what its attachments say (``available`` or ``in-use``)."""
        if not backups_db.backup_cas(ctxt, backup_id, {"status": expected},
                                     values):
            LOG.warning("Backup %s changed meanwhile", backup_id)
        attachments_db.volume_leave_status(ctxt, volume_id, VOL.BACKING_UP)

    # -- restore ---------------------------------------------------------------
    def restore(self, ctxt: Context, backup_id: str, volume_id: str,
                new_volume: bool) -> None:
        row = backups_db.backup_get(ctxt, backup_id)
        try:
            if new_volume:
                self._claim_new_volume(ctxt, volume_id)
            volume = volumes_db.volume_get(ctxt, volume_id)
            with self._open(ctxt, volume, read_only=False) as handle:
                self.driver.restore(self._ref(row), handle)
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Restore of backup %s failed", backup_id)
            backups_db.volume_settle(ctxt, volume_id, VOL.RESTORING_BACKUP,
                                     VOL.ERROR_RESTORING)
            backups_db.backup_cas(ctxt, backup_id, {"status": BAK.RESTORING},
                                  {"status": BAK.AVAILABLE,
                                   "restore_volume_id": None,
                                   "fail_reason": str(exc)})
            return
        backups_db.volume_settle(ctxt, volume_id, VOL.RESTORING_BACKUP,
                                 VOL.AVAILABLE)
        backups_db.backup_cas(ctxt, backup_id, {"status": BAK.RESTORING},
                              {"status": BAK.AVAILABLE,
                               "restore_volume_id": None})

    def _claim_new_volume(self, ctxt: Context, volume_id: str) -> None:
        """Wait (``backup_restore_wait`` seconds at most) for the volume made
        for this restore to be created, then hold it ``restoring-backup``.

        :raises InvalidVolume: it failed, or did not come in time.
        """
        deadline = time.monotonic() + self.conf.backup_restore_wait
        while True:
            if backups_db.volume_settle(ctxt, volume_id, VOL.AVAILABLE,
                                        VOL.RESTORING_BACKUP):
                return
            status = volumes_db.volume_get(ctxt, volume_id).status
            if status != VOL.CREATING or time.monotonic() > deadline:
                raise exception.InvalidVolume(
                    reason="Volume %s made for the restore is %s."
                    % (volume_id, status))
            time.sleep(NEW_VOLUME_POLL)

    # -- resume ----------------------------------------------------------------
    def resume(self, ctxt: Context) -> int:
        """Run again every step this host left in flight (it stopped or
        died mid-way): each is idempotent, and one whose message is still
        queued finds the row settled and returns.

        :returns: how many it resumed.
        """
        rows = backups_db.backups_in_flight(ctxt, self.host)
        for row in rows:
            LOG.info("Resuming %s of backup %s", row.status, row.id)
            if row.status == BAK.CREATING:
                self.create(ctxt, row.id)
            elif row.status == BAK.DELETING:
                self.delete(ctxt, row.id)
            elif row.restore_volume_id:
                target = volumes_db.volume_get(ctxt, row.restore_volume_id)
                self.restore(ctxt, row.id, target.id, new_volume=(
                    target.status != VOL.RESTORING_BACKUP))
            else:  # the api stopped before it made the new volume
                backups_db.backup_cas(
                    ctxt, row.id, {"status": BAK.RESTORING,
                                   "restore_volume_id": None},
                    {"status": BAK.AVAILABLE})
        return len(rows)

    # -- delete ----------------------------------------------------------------
    def delete(self, ctxt: Context, backup_id: str) -> None:
        row = backups_db.backup_get(ctxt, backup_id)
        if row.status != BAK.DELETING:
            return
        try:
            self.driver.delete(self._ref(row))
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Delete of backup %s failed", backup_id)
            backups_db.backup_cas(ctxt, backup_id, {"status": BAK.DELETING},
                                  {"status": BAK.ERROR_DELETING,
                                   "fail_reason": str(exc)})
            return
        backups_db.backup_destroy(ctxt, backup_id)

