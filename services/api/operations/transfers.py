"""Volume transfer operations (``/os-volume-transfer``, 3.55+
``/volume-transfers``): offer an ``available`` volume to another project,
list, show and cancel offers, and accept one with its auth key."""

import hashlib
import hmac
import secrets
import uuid
from typing import Any

from oslo_log import log as logging

from common import constants
from common import exception
from common import quota
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import snapshots as snapshots_db
from common.db.api import transfers as transfers_db
from common.db.api import volumes as volumes_db
from services.api import operations
from services.api.operations import volumes as volume_ops

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
#: Hex digits of an auth key and of its salt (Cinder's lengths).
KEY_LENGTH = 16
SALT_LENGTH = 8


def _hash(salt: str, auth_key: str) -> str:
    return hmac.new(salt.encode(), auth_key.encode(),
                    hashlib.sha256).hexdigest()


class TransferOperations:
    def __init__(self, volumes: volume_ops.VolumeOperations) -> None:
        self.volumes = volumes

    def create(self, ctxt: RequestContext, volume_id: str, name: str | None,
               no_snapshots: bool = False) -> tuple[models.Transfer, str]:
        """Offer the volume; ``awaiting-transfer`` until accepted or
        cancelled.

        :returns: the transfer and its auth key (shown this once).
        :raises InvalidVolume: the volume is not ``available``, or is in
            a group (a group's volumes stay in its project).
        :raises InvalidSnapshot: a snapshot going along is not available,
            or belongs to a group snapshot.
        """
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can("volume:create_transfer", {"project_id": volume.project_id})
        if volume.status != STATUS.AVAILABLE:
            raise exception.InvalidVolume(
                reason="status must be available")
        if volume.group_id:
            raise exception.InvalidVolume(
                reason="Volume %s is in group %s; remove it from the group "
                       "to transfer it." % (volume_id, volume.group_id))
        snapshots = ([] if no_snapshots else
                     snapshots_db.snapshots_of_volume(ctxt, volume_id))
        for snap in snapshots:
            if snap.status != SNAP.AVAILABLE:
                raise exception.InvalidSnapshot(
                    reason="snapshot: %s status must be available" % snap.id)
            if snap.group_snapshot_id:
                # NOTE(ashlar): the group snapshot stays the giver's: its
                # delete would delete the taker's snapshot.
                raise exception.InvalidSnapshot(
                    reason="snapshot: %s belongs to group snapshot %s; "
                           "delete the group snapshot, or transfer the "
                           "volume without its snapshots" % (
                               snap.id, snap.group_snapshot_id))
        # NOTE(ashlar): the count makes the snapshots checked above the
        # ones that go along: a snapshot made meanwhile fails the swap.
        expected = {"status": STATUS.AVAILABLE, "attachment_count": 0,
                    "migration_status": states.MIGRATION_SETTLED, "group_id": None}
        if not no_snapshots:
            expected["snapshot_count"] = len(snapshots)
        auth_key = secrets.token_hex(KEY_LENGTH // 2)
        salt = secrets.token_hex(SALT_LENGTH // 2)
        row: models.Transfer | None = transfers_db.transfer_create(ctxt, {
            "id": str(uuid.uuid4()), "volume_id": volume_id,
            "project_id": volume.project_id, "display_name": name,
            "salt": salt, "crypt_hash": _hash(salt, auth_key),
            "no_snapshots": no_snapshots}, expected)
        if row is None:
            raise exception.InvalidVolume(
                reason="Volume %s changed meanwhile; status must be "
                       "available" % volume_id)
        LOG.info("Volume %(vol)s offered in transfer %(id)s",
                 {"vol": volume_id, "id": row.id})
        return row, auth_key

    def get(self, ctxt: RequestContext,
            transfer_id: str) -> models.Transfer:
        """A transfer of the caller's project (another's does not exist
        for it)."""
        row: models.Transfer = transfers_db.transfer_get(ctxt, transfer_id)
        return operations.visible(
            ctxt, row, "volume:get_transfer",
            exception.TransferNotFound(transfer_id=transfer_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.Transfer]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("volume:get_all_transfers", {"project_id": project})
        rows: list[models.Transfer] = transfers_db.transfer_list(
            ctxt, project_id=project, **kwargs)
        return rows

    def delete(self, ctxt: RequestContext, transfer_id: str) -> None:
        """Cancel: the volume is ``available`` again."""
        row = self.get(ctxt, transfer_id)
        ctxt.can("volume:delete_transfer", {"project_id": row.project_id})
        if not transfers_db.transfer_destroy(ctxt, row):
            raise exception.TransferNotFound(transfer_id=transfer_id)
        LOG.info("Transfer %s cancelled", transfer_id)

    def accept(self, ctxt: RequestContext, transfer_id: str,
               auth_key: str) -> models.Transfer:
        """Take the volume into the caller's project, within its quota.

        :raises TransferNotFound: no such transfer (any more).
        :raises InvalidAuthKey: the key is not the transfer's.
        :raises QuotaError: the caller's project has no room for it.
        """
        project = ctxt.require_project()
        ctxt.can("volume:accept_transfer", {"project_id": project})
        row: models.Transfer = transfers_db.transfer_get(ctxt, transfer_id)
        if not hmac.compare_digest(_hash(row.salt, auth_key), row.crypt_hash):
            raise exception.InvalidAuthKey(
                reason="Attempt to transfer %s with invalid auth key."
                       % transfer_id)
        volume = volumes_db.volume_get(ctxt, row.volume_id)
        snapshots = ([] if row.no_snapshots else
                     snapshots_db.snapshots_of_volume(ctxt, row.volume_id))
        assert volume.volume_type is not None  # every volume has a type
        change = quota.Change(
            volume.volume_type.name, volumes=1, size=volume.size,
            snapshots=len(snapshots), gigabytes=volume.size + sum(
                snap.volume_size for snap in snapshots))
        if not transfers_db.transfer_accept(
                ctxt, row, project, ctxt.user_id, self.volumes.quota_check(
                    project, volume.volume_type_id, change)):
            raise exception.TransferNotFound(transfer_id=transfer_id)
        LOG.info("Transfer %(id)s accepted: volume %(vol)s moved from "
                 "project %(from)s to %(to)s",
                 {"id": transfer_id, "vol": row.volume_id,
                  "from": row.project_id, "to": project})
        return row
