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
import threading
import time
from typing import Any
from typing import Iterator

from oslo_config import cfg
from oslo_log import log as logging

from common import backup_record
from common import constants
from common import context as ashlar_context
from common import exception
from common import messages
from common.db.api import backups as backups_db
from common.db.api import volumes as volumes_db
from drivers.backup import base as backup_base
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


class ConnectFailed(exception.AshlarException):
    """The volume's node did not connect the volume (or snapshot)."""

    msg_fmt = "%(reason)s"


class BackupWorker:
    def __init__(self, conf: cfg.ConfigOpts, host: str,
                 driver: backup_base.BackupDriver,
                 volume_rpc: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.host = host
        self.driver = driver
        self.volume_rpc = volume_rpc
        #: This host as the volume node sees it: an iSCSI volume's target
        #: lets in the initiator volume_io logs in as.
        self.connector = {"host": host, "multipath": False,
                          "initiator": iscsi_io.initiator_name(conf)}
        #: Backups this process is creating (a delete waits for them).
        self._creating: set[str] = set()
        self._lock = threading.Lock()

    # -- the data path ---------------------------------------------------------
    @contextlib.contextmanager
    def _open(self, ctxt: Context, volume: Any, read_only: bool,
              snapshot_id: str | None = None
              ) -> Iterator[volume_io.VolumeHandle]:
        """The volume (or its snapshot ``snapshot_id``, read only) through
        the connection its node makes for this service."""
        rpc = self.volume_rpc
        try:
            if snapshot_id:
                info = rpc.backup_connect_snapshot(
                    ctxt, volume.host, snapshot_id, self.connector)
            else:
                info = rpc.backup_connect(ctxt, volume.host, volume.id,
                                          self.connector)
        except Exception as exc:
            raise ConnectFailed(reason=str(exc)) from exc
        try:
            flat = dict(info.get("data") or {},
                        driver_volume_type=info.get("driver_volume_type"),
                        access_mode="ro" if read_only else "rw")
            if flat.get("format", "raw") != "raw":
                raise exception.InvalidVolume(
                    reason="Volume %s is %s; backups read raw volumes."
                    % (volume.id, flat["format"]))
            with volume_io.open_volume(self.conf, {
                    "id": "backup-of-%s" % (snapshot_id or volume.id),
                    "connection_info": flat}) as handle:
                yield handle
        finally:
            if snapshot_id:
                rpc.backup_disconnect_snapshot(ctxt, volume.host, snapshot_id,
                                               self.connector)
            else:
                rpc.backup_disconnect(ctxt, volume.host, volume.id,
                                      self.connector)

    def _ref(self, row: Any) -> backup_base.BackupRef:
        return backup_base.BackupRef(row.id, row.container, row.volume_id)

    # -- create ----------------------------------------------------------------
    def create(self, ctxt: Context, backup_id: str) -> None:
        """Read the volume (or snapshot) into the store; ``available``,
        else ``error`` with a user message.  A backup deleted meanwhile (an
        admin's force delete) stops, and its data and row go."""
        row = backups_db.backup_get(ctxt, backup_id)
        if row.status != BAK.CREATING:
            return
        with self._lock:
            self._creating.add(backup_id)
        try:
            self._create(ctxt, row)
        finally:
            with self._lock:
                self._creating.discard(backup_id)

    def _create(self, ctxt: Context, row: Any) -> None:
        # As Cinder's manager: the driver is named before it writes, so a
        # delete knows whether the store may hold anything of it.
        if not backups_db.backup_cas(ctxt, row.id, {"status": BAK.CREATING},
                                     {"service": self.driver.SERVICE}):
            LOG.warning("Backup %s changed before it started", row.id)
            backups_db.release_source(ctxt, row.volume_id, row.snapshot_id)
            self._finish_cancelled(ctxt, row)
            return
        volume = volumes_db.volume_get(ctxt, row.volume_id)
        parent = (self._ref(backups_db.backup_get(ctxt, row.parent_id))
                  if row.parent_id else None)
        try:
            # NOTE(ashlar): a driver that snapshots the source (Ceph's, on
            # an RBD volume) opens it writable; a snapshot stays read-only.
            read_only = bool(row.snapshot_id) or \
                not self.driver.SNAPSHOTS_SOURCE
            with self._open(ctxt, volume, read_only,
                            row.snapshot_id) as handle:
                meta = self.driver.backup(
                    self._ref(row), handle, row.size * GIB, parent,
                    cancelled=lambda: self._deleting(ctxt, row.id))
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Backup %s failed", row.id)
            if not self._settle(ctxt, row, {"status": BAK.ERROR,
                                             "fail_reason": str(exc)}):
                self._finish_cancelled(ctxt, row)
                return
            self._tell(ctxt, row, messages.BACKUP_ATTACH_FAILED
                       if isinstance(exc, ConnectFailed)
                       else messages.BACKUP_CREATE_FAILED)
            return
        if not self._settle(ctxt, row, {
                "status": BAK.AVAILABLE, "object_count": meta["object_count"],
                "service": self.driver.SERVICE}):
            self._finish_cancelled(ctxt, row)

    def _tell(self, ctxt: Context, row: Any,
              event: messages.Event) -> None:
        """A user message about the backup for its project."""
        messages.record(ctxt, self.conf.message_ttl, event, row.id,
                        row.project_id)

    def _deleting(self, ctxt: Context, backup_id: str) -> bool:
        try:
            row = backups_db.backup_get(ctxt, backup_id)
        except exception.BackupNotFound:
            return True
        return row.status == BAK.DELETING

    def _settle(self, ctxt: Context, row: Any, values: dict[str, Any]) -> bool:
        """``creating`` to ``values``; the volume (or snapshot) out of
        ``backing-up`` either way.

        :returns: whether the backup was still ``creating``.
        """
        settled = backups_db.backup_cas(ctxt, row.id,
                                        {"status": BAK.CREATING}, values)
        if not settled:
            LOG.warning("Backup %s changed meanwhile", row.id)
        backups_db.release_source(ctxt, row.volume_id, row.snapshot_id)
        return settled

    def _finish_cancelled(self, ctxt: Context, row: Any) -> None:
        """A backup deleted while it was read: remove what was written,
        then the row (its delete left it to this step)."""
        with self._lock:
            self._creating.discard(row.id)
        if not self._deleting(ctxt, row.id):
            return
        LOG.info("Backup %s was deleted while created; removing it", row.id)
        self.delete(ctxt, row.id)

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
            if backups_db.backup_cas(
                    ctxt, backup_id, {"status": BAK.RESTORING},
                    {"status": BAK.AVAILABLE, "restore_volume_id": None,
                     "fail_reason": str(exc)}):
                self._tell(ctxt, row, messages.RESTORE_ATTACH_FAILED
                           if isinstance(exc, ConnectFailed)
                           else messages.BACKUP_RESTORE_FAILED)
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
            # NOTE(ashlar): ``available`` now means it became so after
            # the settle above was tried: try it again.
            if status not in (VOL.CREATING, VOL.AVAILABLE) \
                    or time.monotonic() > deadline:
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
            self.resume_one(ctxt, row)
        return len(rows)

    def resume_one(self, ctxt: Context, row: Any) -> None:
        """Run again the step ``row`` (this host's, in flight) was in."""
        LOG.info("Resuming %s of backup %s", row.status, row.id)
        if row.status == BAK.CREATING and \
                row.volume_id == backup_record.IMPORT_VOLUME_ID:
            backups_db.backup_cas(ctxt, row.id, {"status": BAK.CREATING},
                                  {"status": BAK.ERROR, "fail_reason":
                                   "The import was interrupted; delete "
                                   "this backup (its data stays) and "
                                   "import the record again."})
        elif row.status == BAK.CREATING:
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

    # -- import ----------------------------------------------------------------
    def import_record(self, ctxt: Context, backup_id: str,
                      backup_service: str, backup_url: str) -> None:
        """A ``creating`` import: check the record against the store, then
        ``available`` with the record's columns (else ``error``), as
        Cinder's backup manager does."""
        row = backups_db.backup_get(ctxt, backup_id)
        if row.status != BAK.CREATING:
            return
        try:
            values, metadata = self._checked_record(backup_id,
                                                    backup_service,
                                                    backup_url)
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Import of backup %s failed", backup_id)
            backups_db.backup_cas(ctxt, backup_id, {"status": BAK.CREATING},
                                  {"status": BAK.ERROR,
                                   "fail_reason": str(exc)})
            return
        if not backups_db.backup_import_settle(ctxt, backup_id, values,
                                               metadata):
            LOG.warning("Imported backup %s changed meanwhile", backup_id)

    def _checked_record(self, backup_id: str, backup_service: str,
                        backup_url: str) -> tuple[dict, dict]:
        """The columns and metadata of a record that matches the store.

        :raises ServiceNotFound: the record is another driver's.
        :raises InvalidBackup: it does not match the store or the row.
        """
        if not self.driver.SERVICE.startswith(backup_service or "-"):
            raise exception.ServiceNotFound(service_id=backup_service)
        record = backup_record.decode(backup_url)
        missing = backup_record.REQUIRED - set(record)
        if missing:
            raise exception.InvalidBackup(
                reason="Driver successfully decoded imported backup data, "
                "but there are missing fields (%s)."
                % ", ".join(sorted(missing)))
        if record["id"] != backup_id:
            raise exception.InvalidBackup(
                reason="Trying to import backup metadata from id %s into "
                "backup %s." % (record["id"], backup_id))
        values = backup_record.columns(record)
        self.driver.check_import(
            backup_base.BackupRef(backup_id, str(values["container"]),
                                  str(values.get("volume_id") or "")),
            int(values["size"]) * GIB, values["object_count"],
            values["parent_id"])
        values.update(service=self.driver.SERVICE, host=self.host,
                      availability_zone=self.conf.storage_availability_zone)
        return values, dict(record.get("metadata") or {})

    # -- delete ----------------------------------------------------------------
    def delete(self, ctxt: Context, backup_id: str) -> None:
        """Remove the data, then the row (``error_deleting`` on failure).
        A backup this service is still creating is left to that step,
        which stops at its next chunk and comes here."""
        with self._lock:
            if backup_id in self._creating:
                return
        try:
            row = backups_db.backup_get(ctxt, backup_id)
        except exception.BackupNotFound:
            return
        if row.status != BAK.DELETING:
            return
        try:
            # No driver named: nothing was written, or it is an import not
            # checked, whose data stays for the next import (as Cinder).
            if row.service:
                self.driver.delete(self._ref(row))
        except Exception as exc:  # noqa: BLE001 - a cast ends as a status
            LOG.exception("Delete of backup %s failed", backup_id)
            if backups_db.backup_cas(ctxt, backup_id,
                                     {"status": BAK.DELETING},
                                     {"status": BAK.ERROR_DELETING,
                                      "fail_reason": str(exc)}):
                self._tell(ctxt, row, messages.BACKUP_DELETE_FAILED)
            return
        # a create cut short (a force delete, then a restart) held its source
        backups_db.release_source(ctxt, row.volume_id, row.snapshot_id)
        backups_db.backup_destroy(ctxt, backup_id)
