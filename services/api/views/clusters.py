"""Cluster and worker-cleanup bodies, as Cinder's
``cinder/api/v3/views/clusters.py`` and ``workers.py`` build them."""

import datetime

from common import constants
from common.db import models
from common.db.api import clusters as clusters_db
from services.api import views
from services.api.operations import clusters as cluster_ops


def _time(value: datetime.datetime | None) -> str:
    """Cinder's ``_normalize``: a missing time is an empty string."""
    return views.timestamp(value) or ""


def summary(state: clusters_db.ClusterState, replication: bool) -> dict:
    """Name, binary, state and status (and, from 3.26, the replication
    status)."""
    row = state.row
    body: dict[str, object] = {
        "name": row.name, "binary": constants.cinder_binary(row.binary),
        "state": "up" if state.is_up else "down",
        "status": "disabled" if row.disabled else "enabled"}
    if replication:
        body["replication_status"] = cluster_ops.REPLICATION[
            "replication_status"]
    return body


def detail(state: clusters_db.ClusterState, replication: bool) -> dict:
    """The summary with the members' counts, times and disabled reason
    (and, from 3.26, every replication field)."""
    row = state.row
    body = summary(state, False)
    body.update(num_hosts=state.num_hosts,
                num_down_hosts=state.num_down_hosts,
                last_heartbeat=_time(state.last_heartbeat),
                created_at=_time(row.created_at),
                updated_at=_time(row.updated_at),
                disabled_reason=row.disabled_reason)
    if replication:
        body.update(cluster_ops.REPLICATION)
    return body


def updated(state: clusters_db.ClusterState, replication: bool) -> dict:
    """The answer to an enable or disable: the summary and the reason."""
    return dict(summary(state, replication),
                disabled_reason=state.row.disabled_reason)


def services(rows: list[models.Service]) -> list[dict]:
    """The services of a cleanup answer."""
    return [{"id": row.id, "host": row.host,
             "binary": constants.cinder_binary(row.binary),
             "cluster_name": row.cluster_name} for row in rows]
