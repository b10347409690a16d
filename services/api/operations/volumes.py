"""Volume operations: create, show, list, update, delete."""

import uuid
from typing import Any, Callable

from oslo_config import cfg
from oslo_log import log as logging

from common import constants
from common import exception
from common import extra_specs
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus

DELETABLE = (STATUS.AVAILABLE, STATUS.ERROR, "error_restoring",
             STATUS.ERROR_EXTENDING, "error_managing")
_DELETE_REFUSED = ("Volume %sstatus must be available or error or "
                   "error_restoring or error_extending or error_managing and "
                   "must not be migrating, attached, belong to a group, have "
                   "snapshots, awaiting a transfer, or be disassociated from "
                   "snapshots after volume transfer.")
_MULTIATTACH_REMOVED = (
    "multiattach parameter has been removed. The default behavior is to use "
    "multiattach enabled volume types. Contact your administrator to create "
    "a multiattach enabled volume type and use it to create multiattach "
    "volumes.")

#: Checks a type against what backends can do; raises when none can.
EarlyCheck = Callable[[Any, Any, dict], None]


class VolumeOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 volume: volume_rpcapi.VolumeAPI,
                 early_check: EarlyCheck | None = None) -> None:
        self.conf = conf
        self.scheduler = scheduler
        self.volume = volume
        self.early_check = early_check

    def get(self, ctxt: Any, volume_id: str) -> Any:
        """Return a volume the caller may see, else VolumeNotFound."""
        row = volumes_db.volume_get(ctxt, volume_id)
        if not ctxt.is_admin and row.project_id != ctxt.project_id:
            raise exception.VolumeNotFound(volume_id=volume_id)
        ctxt.can("volume:get", {"project_id": row.project_id})
        return row

    def list(self, ctxt: Any, all_tenants: bool = False, **kwargs: Any) -> list:
        ctxt.can("volume:get_all")
        project = None if (all_tenants and ctxt.is_admin) else ctxt.project_id
        return volumes_db.volume_list(ctxt, project_id=project, **kwargs)

    def _resolve_type(self, ctxt: Any, name_or_id: str | None) -> Any:
        if name_or_id:
            return types_db.type_get_by_name_or_id(ctxt, name_or_id)
        return types_db.type_get_by_name(ctxt, self.conf.default_volume_type)

    def create(self, ctxt: Any, size: int, name: str | None = None,
               description: str | None = None, volume_type: str | None = None,
               availability_zone: str | None = None,
               metadata: dict | None = None,
               multiattach: bool = False) -> Any:
        """Write a ``creating`` row and cast it to the scheduler.

        :raises InvalidInput: the removed ``multiattach`` flag was set.
        :raises UnsatisfiableVolumeType: no fresh pool could place the type.
        """
        ctxt.can("volume:create")
        if multiattach:
            raise exception.InvalidInput(reason=_MULTIATTACH_REMOVED)
        vtype = self._resolve_type(ctxt, volume_type)
        specs = types_db.specs_of(vtype)
        is_multiattach = extra_specs.is_multiattach_spec(specs)
        if is_multiattach:
            ctxt.can("volume:multiattach")
        if self.early_check is not None:
            self.early_check(ctxt, vtype, specs)
        row = volumes_db.volume_create(ctxt, {
            "id": str(uuid.uuid4()), "project_id": ctxt.project_id,
            "user_id": ctxt.user_id, "display_name": name,
            "display_description": description, "size": size,
            "status": STATUS.CREATING,
            "attach_status": constants.AttachStatus.DETACHED,
            "availability_zone": (availability_zone
                                  or self.conf.storage_availability_zone),
            "volume_type_id": vtype.id, "multiattach": is_multiattach,
        }, metadata)
        self.scheduler.create_volume(ctxt, row.id)
        LOG.info("Volume %(id)s of %(size)s GiB accepted",
                 {"id": row.id, "size": size})
        return row

    def update(self, ctxt: Any, volume_id: str, values: dict,
               metadata: dict | None) -> Any:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        return volumes_db.volume_update(ctxt, volume_id, values, metadata)

    def delete(self, ctxt: Any, volume_id: str, force: bool = False) -> None:
        """``deleting``, then the volume service removes it.

        :raises InvalidVolume: wrong status, attached, or migrating.
        """
        row = self.get(ctxt, volume_id)
        if force:
            ctxt.can("volume_extension:volume_admin_actions:force_delete",
                     {"project_id": row.project_id})
        else:
            ctxt.can("volume:delete", {"project_id": row.project_id})
        expected: dict = {"attach_status": constants.AttachStatus.DETACHED,
                          "migration_status": None}
        if not force:
            expected["status"] = DELETABLE
        if row.attachments or not volumes_db.volume_cas(
                ctxt, volume_id, expected, {"status": STATUS.DELETING}):
            raise exception.InvalidVolume(
                reason=_DELETE_REFUSED % ("" if not force else " "))
        if row.host is None or (row.status == STATUS.ERROR
                                and row.provider_location is None):
            # Nothing was made on a backend: no volume service is needed.
            volumes_db.volume_destroy(ctxt, volume_id)
        else:
            self.volume.delete_volume(ctxt, volume_id, row.host)
        LOG.info("Volume %s deleting", volume_id)
