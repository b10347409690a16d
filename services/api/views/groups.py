"""Group type, group and group snapshot views: Cinder's bodies."""

from common.context import RequestContext
from common.db import models
from common.db.api import group_types as gtypes_db
from common.db.api import groups as groups_db
from services.api import microversion as mv
from services.api import views

V = mv.APIVersion


def group_type(row: models.GroupType, ctxt: RequestContext) -> dict:
    """A group type; its specs if the caller may see them."""
    body: dict[str, object] = {
        "id": row.id, "name": row.name, "description": row.description,
        "is_public": bool(row.is_public)}
    if ctxt.can("group:access_group_types_specs", {}, fatal=False):
        body["group_specs"] = gtypes_db.specs_of(row)
    return body


def group_summary(row: models.Group) -> dict:
    return {"id": row.id, "name": row.name}


def group(row: models.Group, ctxt: RequestContext, version: V,
          volume_ids: list[str] | None = None) -> dict:
    """The detail view; ``volume_ids`` from 3.25 when asked for
    (``list_volume``)."""
    body = {"id": row.id, "status": row.status,
            "availability_zone": row.availability_zone,
            "created_at": views.timestamp(row.created_at),
            "name": row.name, "description": row.description,
            "group_type": row.group_type_id,
            "volume_types": groups_db.type_ids(row)}
    if version >= mv.GROUP_SNAPSHOTS:
        body["group_snapshot_id"] = row.group_snapshot_id
        body["source_group_id"] = row.source_group_id
    if volume_ids is not None and version >= mv.GROUP_VOLUME_LIST:
        body["volumes"] = volume_ids
    if version >= mv.GROUP_REPLICATION:
        body["replication_status"] = None
    if version >= mv.GROUP_GROUPSNAPSHOT_PROJECT_ID and ctxt.can(
            "group:group_project_attribute",
            {"project_id": row.project_id}, fatal=False):
        body["project_id"] = row.project_id
    return body


def group_snapshot_summary(row: models.GroupSnapshot) -> dict:
    return {"id": row.id, "name": row.name,
            "group_type_id": row.group_type_id}


def group_snapshot(row: models.GroupSnapshot, ctxt: RequestContext, version: V) -> dict:
    body = {"id": row.id, "group_id": row.group_id,
            "group_type_id": row.group_type_id, "status": row.status,
            "created_at": views.timestamp(row.created_at),
            "name": row.name, "description": row.description}
    if version >= mv.GROUP_GROUPSNAPSHOT_PROJECT_ID and ctxt.can(
            "group:group_snapshot_project_attribute",
            {"project_id": row.project_id}, fatal=False):
        body["project_id"] = row.project_id
    return body
