"""Quota operations: a project's limits and usage, the defaults (quota
class ``default``), and their changes (``os-quota-sets``,
``os-quota-class-sets``)."""

from collections.abc import Mapping

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from common import quota
from common.context import RequestContext
from common.db.api import quotas as quotas_db
from services.api.schemas import DB_MAX_INT

LOG = logging.getLogger(__name__)
#: Keys a quota set body may carry besides resources (Cinder's).
NON_QUOTA_KEYS = ("tenant_id", "id")


def _limit(value: object) -> int:
    """Cinder's checks of one limit.

    :raises Invalid: not an integer (or its text), below -1, or above
        what the database holds.
    """
    try:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(value)
        limit = int(value)
    except ValueError:
        raise exception.Invalid(
            "Quota limit must be specified as an integer value.")
    if limit < quota.UNLIMITED:
        raise exception.Invalid("Quota limit must be -1 or greater.")
    if limit > DB_MAX_INT:
        raise exception.Invalid("Quota limit must be %d or less."
                                % DB_MAX_INT)
    return limit


class QuotaOperations:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def _valid(self, ctxt: RequestContext,
               values: Mapping[str, object]) -> dict[str, int]:
        """``values`` as resource -> limit.

        :raises Invalid: an unknown resource or a bad limit.
        """
        names = set(quotas_db.resource_names(ctxt))
        bad = sorted(key for key in values
                     if key not in names and key not in NON_QUOTA_KEYS)
        if bad:
            raise exception.Invalid("Bad key(s) in quota set: %s"
                                    % ",".join(bad))
        return {key: _limit(value) for key, value in values.items()
                if key not in NON_QUOTA_KEYS}

    def show(self, ctxt: RequestContext, project_id: str,
             usage: bool = False
             ) -> dict[str, int] | dict[str, dict[str, int]]:
        """Each resource's limit, or ``{limit, in_use, reserved}``."""
        ctxt.can("volume_extension:quotas:show", {"project_id": project_id})
        limits: dict[str, int] = quotas_db.project_limits(ctxt, self.conf,
                                                          project_id)
        if not usage:
            return limits
        used: dict[str, int] = quotas_db.usage(ctxt, project_id)
        return {name: {"limit": limit, "in_use": used.get(name, 0),
                       "reserved": 0} for name, limit in limits.items()}

    def defaults(self, ctxt: RequestContext,
                 project_id: str) -> dict[str, int]:
        ctxt.can("volume_extension:quotas:show", {"project_id": project_id})
        limits: dict[str, int] = quotas_db.class_limits(ctxt, self.conf)
        return limits

    def update(self, ctxt: RequestContext, project_id: str,
               values: Mapping[str, object]) -> dict[str, int]:
        """Set the project's own limits; the new limits.

        :raises Invalid: a bad key or limit, or a limit below what the
            project has already.
        """
        ctxt.can("volume_extension:quotas:update", {"project_id": project_id})
        limits = self._valid(ctxt, values)
        used: dict[str, int] = quotas_db.usage(ctxt, project_id)
        for name, limit in limits.items():
            if limit != quota.UNLIMITED and limit < used.get(name, 0):
                raise exception.Invalid(
                    "Quota limit %d for %s must be greater than or equal to "
                    "already used and reserved %d."
                    % (limit, name, used[name]))
        quotas_db.project_set(ctxt, project_id, limits)
        LOG.info("Quotas of project %(project)s set: %(limits)s",
                 {"project": project_id, "limits": limits})
        now: dict[str, int] = quotas_db.project_limits(ctxt, self.conf,
                                                       project_id)
        return now

    def delete(self, ctxt: RequestContext, project_id: str) -> None:
        """Back to the defaults."""
        ctxt.can("volume_extension:quotas:delete", {"project_id": project_id})
        quotas_db.project_reset(ctxt, project_id)
        LOG.info("Quotas of project %s reset to the defaults", project_id)

    def class_show(self, ctxt: RequestContext,
                   class_name: str) -> dict[str, int]:
        ctxt.can("volume_extension:quota_classes", {})
        limits: dict[str, int] = quotas_db.class_limits(ctxt, self.conf,
                                                        class_name)
        return limits

    def class_update(self, ctxt: RequestContext, class_name: str,
                     values: Mapping[str, object]) -> dict[str, int]:
        ctxt.can("volume_extension:quota_classes", {})
        limits = self._valid(ctxt, values)
        quotas_db.class_set(ctxt, class_name, limits)
        LOG.info("Quota class %(name)s set: %(limits)s",
                 {"name": class_name, "limits": limits})
        now: dict[str, int] = quotas_db.class_limits(ctxt, self.conf,
                                                     class_name)
        return now
