"""Snapshot views: Cinder's summary (lists, create) and detail."""

from common import constants
from common.context import RequestContext
from common.db import models
from common.db.api import snapshots as snapshots_db
from services.api import microversion as mv
from services.api import views

V = mv.APIVersion


def summary(row: models.Snapshot, version: V) -> dict:
    body = {
        "id": row.id, "created_at": views.timestamp(row.created_at),
        "updated_at": views.timestamp(row.updated_at),
        "name": row.display_name, "description": row.display_description,
        "volume_id": row.volume_id, "status": constants.shown_status(row.status),
        "size": row.volume_size, "metadata": snapshots_db.metadata_of(row),
    }
    if version >= mv.GROUP_SNAPSHOTS:
        body["group_snapshot_id"] = row.group_snapshot_id
    if version >= mv.SNAPSHOT_LIST_USER_ID:
        body["user_id"] = row.user_id
    if version >= mv.USE_QUOTA:
        body["consumes_quota"] = True
    return body


def detail(row: models.Snapshot, ctxt: RequestContext, version: V) -> dict:
    """The summary plus the extended attributes the caller may see."""
    body = summary(row, version)
    if ctxt.can("volume_extension:extended_snapshot_attributes",
                {"project_id": row.project_id}, fatal=False):
        body["os-extended-snapshot-attributes:progress"] = row.progress
        body["os-extended-snapshot-attributes:project_id"] = row.project_id
    return body
