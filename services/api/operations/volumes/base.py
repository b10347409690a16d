"""What every part of the volume operations stands on: the collaborators,
the reads (a volume, and the snapshot, group and type a create or an
action names), update, and the compare-and-swap and quota check that the
parts share."""

from typing import Any, Callable

from oslo_config import cfg

from common import exception
from common import quota
from common.context import RequestContext
from common.db.api import groups as groups_db
from common.db.api import quotas as quotas_db
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.api import operations
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

#: Checks a type and a size against what the backends of some availability
#: zones can do; raises when none can.
EarlyCheck = Callable[[Any, Any, dict, int, tuple[str, ...] | None], None]


class VolumeBase:
    """The state and the shared steps of :class:`VolumeOperations`."""

    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 volume: volume_rpcapi.VolumeAPI,
                 early_check: EarlyCheck | None = None,
                 cache: Any = None) -> None:
        self.conf = conf
        self.scheduler = scheduler
        self.volume = volume
        self.early_check = early_check
        #: The capability cache (``services.api.capability_cache``), to tell
        #: whether a retype would have to move the data.
        self.cache = cache or getattr(early_check, "__self__", None)

    def get(self, ctxt: RequestContext, volume_id: str) -> Any:
        """Return a volume ``volume:get`` lets the caller see, else
        VolumeNotFound (another project's volume does not exist for it)."""
        return operations.visible(
            ctxt, volumes_db.volume_get(ctxt, volume_id), "volume:get",
            exception.VolumeNotFound(volume_id=volume_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             tenant: str | None = None, **kwargs: Any) -> list:
        """The volumes the caller may list: its project's, or with
        ``all_tenants`` (admins) every project's, or ``tenant``'s only."""
        project = operations.listed_project(ctxt, all_tenants) or tenant
        ctxt.can("volume:get_all", {"project_id": project})
        return volumes_db.volume_list(ctxt, project_id=project, **kwargs)

    def resolve_type(self, ctxt: RequestContext, name_or_id: str | None
                     ) -> tuple[Any, dict]:
        """The type a create names (else the default) and its specs.

        :raises VolumeTypeNotFoundByName: no such type, or a private one
            the caller's project has no access to.
        """
        return types_db.type_resolve(
            ctxt, name_or_id or self.conf.default_volume_type,
            project_id=None if ctxt.is_admin else ctxt.project_id)

    def group(self, ctxt: RequestContext, group_id: str) -> Any:
        """Return a group ``group:get`` lets the caller see, else
        GroupNotFound."""
        return operations.visible(
            ctxt, groups_db.group_get(ctxt, group_id), "group:get",
            exception.GroupNotFound(group_id=group_id))

    def snapshot(self, ctxt: RequestContext, snapshot_id: str) -> Any:
        """Return a snapshot ``volume:get_snapshot`` lets the caller see,
        else SnapshotNotFound."""
        return operations.visible(
            ctxt, snapshots_db.snapshot_get(ctxt, snapshot_id),
            "volume:get_snapshot",
            exception.SnapshotNotFound(snapshot_id=snapshot_id))

    def update(self, ctxt: RequestContext, volume_id: str, values: dict,
               metadata: dict | None) -> Any:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        return volumes_db.volume_update(ctxt, volume_id, values, metadata)

    def quota_check(self, project_id: str, type_id: str,
                    change: quota.Change) -> volumes_db.Check:
        """The quota check of ``change``, for the writer transaction that
        makes it."""
        def check(session: Any) -> None:
            quotas_db.enforce(session, self.conf, project_id, type_id, change)
        return check

    def _cas(self, row: Any, expected: dict, values: dict, what: str,
             ctxt: RequestContext,
             check: volumes_db.Check | None = None) -> None:
        """Compare-and-swap with the read value; a lost race is a 400.

        :param check: runs first in the same transaction (a quota check).
        """
        if not volumes_db.volume_cas(ctxt, row.id, expected, values,
                                     check=check):
            now = volumes_db.volume_get(ctxt, row.id)
            raise exception.InvalidVolume(
                reason="Volume %s changed while %s was requested; its status "
                       "is now %s." % (row.id, what, now.status))
