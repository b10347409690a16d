"""Services, pools and capabilities: what operators look at."""

from typing import Any

from oslo_config import cfg

from common import exception
from common.db.api import services as services_db
from services.scheduler import rpcapi as scheduler_rpcapi


class BackendOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI) -> None:
        self.conf = conf
        self.scheduler = scheduler

    def services(self, ctxt: Any, host: str | None,
                 binary: str | None) -> list[tuple[Any, bool]]:
        """(row, is up) for each service."""
        ctxt.can("volume_extension:services:index")
        return [(row, services_db.is_up(row, self.conf.service_down_time))
                for row in services_db.service_list(ctxt, host, binary)]

    def set_disabled(self, ctxt: Any, host: str, binary: str, disabled: bool,
                     reason: str | None) -> Any:
        ctxt.can("volume_extension:services:update")
        try:
            return services_db.service_set_disabled(ctxt, host, binary,
                                                    disabled, reason)
        except exception.ServiceNotFound:
            raise exception.NotFound("Service %s could not be found on host "
                                     "%s." % (binary, host))

    def reports(self, ctxt: Any) -> dict:
        """Each backend's last report, from a scheduler."""
        return self.scheduler.get_pools(ctxt)

    def pools(self, ctxt: Any) -> dict[str, dict]:
        """``{host@backend#pool: capabilities}`` as the scheduler holds them."""
        ctxt.can("scheduler_extension:scheduler_stats:get_pools")
        result = {}
        for host, entry in sorted(self.reports(ctxt).items()):
            report = entry["capabilities"]
            backend = {k: v for k, v in report.items() if k != "pools"}
            for pool in report.get("pools") or []:
                caps = dict(backend, **pool)
                caps["timestamp"] = entry["timestamp"]
                result["%s#%s" % (host, pool["pool_name"])] = caps
        return result

    def capabilities(self, ctxt: Any, host: str) -> tuple[str, dict]:
        """The report of ``host@backend`` (a ``#pool`` suffix is ignored)."""
        ctxt.can("volume_extension:capabilities")
        host = host.partition("#")[0]
        reports = self.reports(ctxt)
        matches = [h for h in sorted(reports)
                   if h == host or h.startswith(host + "@")]
        if not matches:
            raise exception.HostNotFound(host=host)
        return matches[0], reports[matches[0]]["capabilities"]


