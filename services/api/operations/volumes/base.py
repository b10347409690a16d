"""What every part of the volume operations stands on: the collaborators,
the reads (a volume, and the snapshot, group and type a create or an
action names), update, and the compare-and-swap and quota check that the
parts share."""

from typing import Any, Callable

import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy import orm

from common import exception
from common import quota
from common import zones
from common.context import RequestContext
from common.db import models
from common.db.api import groups as groups_db
from common.db.api import quotas as quotas_db
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.api import capability_cache
from services.api import operations
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

#: Checks a type (as ``types_db.type_resolve`` reads it, and its specs) and
#: a size against what the backends of some availability zones can do;
#: raises when none can.
EarlyCheck = Callable[[RequestContext, Any, dict[str, str | None], int,
                       zones.Zones], None]


class VolumeBase:
    """The state and the shared steps of :class:`VolumeOperations`."""

    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 volume: volume_rpcapi.VolumeAPI,
                 early_check: EarlyCheck | None = None,
                 cache: capability_cache.CapabilityCache | None = None
                 ) -> None:
        self.conf = conf
        self.scheduler = scheduler
        self.volume = volume
        self.early_check = early_check
        #: The capability cache (``services.api.capability_cache``), to tell
        #: whether a retype would have to move the data.
        self.cache = cache or getattr(early_check, "__self__", None)

    def get(self, ctxt: RequestContext, volume_id: str,
            shown: bool = False) -> Any:
        """Return a volume ``volume:get`` lets the caller see, else
        VolumeNotFound (another project's volume does not exist for it);
        ``shown``: read as the views show it (``volumes_db.volume_shown``,
        fewer columns), for ``GET /volumes/{id}``."""
        read = volumes_db.volume_shown if shown else volumes_db.volume_get
        return operations.visible(
            ctxt, read(ctxt, volume_id), "volume:get",
            exception.VolumeNotFound(volume_id=volume_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             tenant: str | None = None,
             **kwargs: Any) -> list[Any]:
        """The volumes the caller may list: its project's, or with
        ``all_tenants`` (admins) every project's, or ``tenant``'s only;
        read as the list views show them (``volumes_db.volume_page``)."""
        project = operations.listed_project(ctxt, all_tenants) or tenant
        ctxt.can("volume:get_all", {"project_id": project})
        rows: list[Any] = volumes_db.volume_page(
            ctxt, project_id=project, **kwargs)
        return rows

    def count(self, ctxt: RequestContext, all_tenants: bool = False,
              tenant: str | None = None,
              filters: dict[str, Any] | None = None) -> int:
        """How many volumes ``list`` lists without a page."""
        project = operations.listed_project(ctxt, all_tenants) or tenant
        ctxt.can("volume:get_all", {"project_id": project})
        return volumes_db.volume_count(ctxt, project_id=project,
                                       filters=filters)

    def resolve_type(self, ctxt: RequestContext, name_or_id: str | None
                     ) -> tuple[Any, dict[str, str | None]]:
        """The type a create names (else the default) and its specs.

        :raises VolumeTypeNotFoundByName: no such type, or a private one
            the caller's project has no access to.
        """
        found: tuple[Any, dict[str, str | None]] = types_db.type_resolve(
            ctxt, name_or_id or self.conf.default_volume_type,
            project_id=None if ctxt.is_admin else ctxt.project_id)
        return found

    def group(self, ctxt: RequestContext, group_id: str) -> models.Group:
        """Return a group ``group:get`` lets the caller see, else
        GroupNotFound."""
        row: models.Group = groups_db.group_get(ctxt, group_id)
        return operations.visible(ctxt, row, "group:get",
                                  exception.GroupNotFound(group_id=group_id))

    def snapshot(self, ctxt: RequestContext,
                 snapshot_id: str) -> models.Snapshot:
        """Return a snapshot ``volume:get_snapshot`` lets the caller see,
        else SnapshotNotFound."""
        row: models.Snapshot = snapshots_db.snapshot_get(ctxt, snapshot_id)
        return operations.visible(
            ctxt, row, "volume:get_snapshot",
            exception.SnapshotNotFound(snapshot_id=snapshot_id))

    def update(self, ctxt: RequestContext, volume_id: str,
               values: dict[str, object],
               metadata: dict[str, str] | None) -> models.Volume:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        updated: models.Volume = volumes_db.volume_update(
            ctxt, volume_id, values, metadata)
        return updated

    def quota_check(self, project_id: str, type_id: str,
                    change: quota.Change) -> volumes_db.Check:
        """The quota check of ``change``, for the writer transaction that
        makes it."""
        def check(session: orm.Session | sa.engine.Connection) -> None:
            quotas_db.enforce(session, self.conf, project_id, type_id, change)
        return check

    def _cas(self, row: Any, expected: dict[str, object],
             values: dict[str, object], what: str,
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
