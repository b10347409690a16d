"""Backup views: Cinder's summary (lists, create) and detail
(``cinder/api/views/backups.py``)."""

from typing import Any

from common.context import RequestContext
from common.db import models
from services.api import microversion as mv
from services.api import views

V = mv.APIVersion


def summary(row: models.Backup, base_url: str,
            url_project: str | None) -> dict:
    return {"id": row.id, "name": row.display_name,
            "links": views.links(base_url, url_project, "backups", row.id)}


def detail(row: models.Backup, ctxt: RequestContext, version: V,
           base_url: str, url_project: str | None) -> dict:
    body = {
        "id": row.id, "status": row.status, "size": row.size,
        # NOTE: Cinder's Backup object reads a null integer column as 0,
        # so a backup still being created shows 0 objects (Tempest's
        # schema wants an integer), not null.
        "object_count": row.object_count or 0,
        "availability_zone": row.availability_zone,
        "container": row.container,
        "created_at": views.timestamp(row.created_at),
        "updated_at": views.timestamp(row.updated_at),
        "name": row.display_name, "description": row.display_description,
        "fail_reason": row.fail_reason, "volume_id": row.volume_id,
        "links": views.links(base_url, url_project, "backups", row.id),
        "is_incremental": row.parent_id is not None,
        "has_dependent_backups": row.num_dependent_backups > 0,
        "snapshot_id": row.snapshot_id,
        "data_timestamp": views.timestamp(row.data_timestamp),
    }
    if version >= mv.BACKUP_METADATA:
        body["metadata"] = {item.key: item.value
                            for item in row.backup_metadata}
    if version >= mv.BACKUP_PROJECT and ctxt.can(
            "backup:backup_project_attribute",
            {"project_id": row.project_id}, fatal=False):
        body["os-backup-project-attr:project_id"] = row.project_id
    if version >= mv.BACKUP_PROJECT_USER_ID:
        body["user_id"] = row.user_id
    return body


def restore(row: models.Backup, volume: Any) -> dict:
    return {"backup_id": row.id, "volume_id": volume.id,
            "volume_name": volume.display_name}
