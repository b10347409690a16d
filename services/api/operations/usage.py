"""Usage: limits, the volume summary and availability zones."""

from oslo_config import cfg

from common import quota
from common import zones
from common.context import RequestContext
from common.db import models
from common.db.api import quotas as quotas_db
from common.db.api import volumes as volumes_db
from services.api import operations

#: Cinder's absolute limits, in its order, and their quota resources.
_MAXIMA = (("maxTotalVolumes", quota.VOLUMES),
           ("maxTotalSnapshots", quota.SNAPSHOTS),
           ("maxTotalVolumeGigabytes", quota.GIGABYTES),
           ("maxTotalBackups", "backups"),
           ("maxTotalBackupGigabytes", "backup_gigabytes"))


class UsageOperations:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def absolute(self, ctxt: RequestContext,
                 project_id: str | None = None) -> dict[str, int]:
        """Return ``limits.absolute`` for the caller's project.

        :param project_id: another project, honoured for administrators
            only (Cinder's 3.39 rule); anyone else gets their own.  The
            ``total*Used`` values need ``limits_extension:used_limits``.
        """
        if project_id is None or not ctxt.is_admin:
            project_id = ctxt.require_project()
        limits: dict[str, int] = quotas_db.project_limits(ctxt, self.conf,
                                                          project_id)
        result = {name: limits[resource] for name, resource in _MAXIMA}
        if not ctxt.can("limits_extension:used_limits",
                        {"project_id": project_id}, fatal=False):
            return result
        used = quotas_db.usage(ctxt, project_id)
        result.update(totalVolumesUsed=used[quota.VOLUMES],
                      totalGigabytesUsed=used[quota.GIGABYTES],
                      totalSnapshotsUsed=used[quota.SNAPSHOTS],
                      totalBackupsUsed=0,
                      totalBackupGigabytesUsed=0)
        return result

    def volume_summary(self, ctxt: RequestContext, all_tenants: bool = False
                       ) -> tuple[int, int, dict[str, list[str | None]]]:
        """Return the count, total GiB and metadata values of volumes.

        :param all_tenants: every project's volumes, for administrators.
        :returns: ``(count, size, {key: [distinct values]})``.
        """
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("volume:get_all", {"project_id": project})
        volumes: list[models.Volume] = volumes_db.volume_list(
            ctxt, project_id=project)
        metadata: dict[str, list[str | None]] = {}
        for row in volumes:
            for key, value in volumes_db.metadata_of(row).items():
                values = metadata.setdefault(key, [])
                if value not in values:
                    values.append(value)
        return len(volumes), sum(v.size or 0 for v in volumes), metadata

    def availability_zones(self,
                           ctxt: RequestContext) -> list[tuple[str, bool]]:
        """Return ``(zone, available)`` for each zone with a volume service
        (``zones.listed``)."""
        return zones.listed(ctxt, self.conf)
