"""Volume views: summary, detail, and the attachments inside a volume."""

from typing import Any

from common import constants
from common.context import RequestContext
from common.db.api import volumes as volumes_db
from services.api import microversion as mv
from services.api import views

V = mv.APIVersion


def summary(row: Any, base_url: str, url_project: str | None) -> dict:
    return {"id": row.id, "name": row.display_name,
            "links": views.links(base_url, url_project, "volumes", row.id)}


def _attachments(row: Any, show_host: bool) -> list[dict]:
    result = []
    for att in row.attachments:
        if att.attach_status != constants.AttachStatus.ATTACHED:
            continue
        result.append({"id": row.id, "attachment_id": att.id,
                       "volume_id": row.id, "server_id": att.instance_uuid,
                       "host_name": att.attached_host if show_host else None,
                       "device": att.mountpoint,
                       "attached_at": views.timestamp(att.attach_time)})
    return result


def detail(row: Any, ctxt: RequestContext, version: V, base_url: str,
           url_project: str | None, with_os_attrs: bool = True) -> dict:
    """The detail view; ``with_os_attrs`` False for create/update answers."""
    type_name = row.volume_type.name if row.volume_type else None
    body = {
        "id": row.id, "status": constants.shown_status(row.status), "size": row.size,
        "availability_zone": row.availability_zone,
        "created_at": views.timestamp(row.created_at),
        "updated_at": views.timestamp(row.updated_at),
        "name": row.display_name, "description": row.display_description,
        "volume_type": type_name or row.volume_type_id,
        "snapshot_id": row.snapshot_id, "source_volid": row.source_volid,
        "metadata": _metadata(row),
        "links": views.links(base_url, url_project, "volumes", row.id),
        "user_id": row.user_id,
        "bootable": "true" if row.bootable else "false",
        "encrypted": bool(row.encrypted), "replication_status": None,
        "consistencygroup_id": None, "multiattach": bool(row.multiattach),
        "migration_status": row.migration_status,
    }
    target = {"project_id": row.project_id}
    show_host = ctxt.can("volume_extension:volume_host_attribute", target,
                         fatal=False)
    body["attachments"] = _attachments(row, show_host)
    # NOTE(ashlar): no ``error_reason``: Cinder's body has none.  Why a
    # volume failed is a user message (``/messages``) in Cinder's words;
    # the backend's own text is logged and kept in the row for operators.
    _add_versioned(body, row, version, show_host)
    if with_os_attrs:
        _add_os_attrs(body, row, ctxt, target, show_host)
    return body


def _add_os_attrs(body: dict, row: Any, ctxt: RequestContext, target: dict,
                  show_host: bool) -> None:
    """The ``os-vol-*`` fields whose policies allow the caller."""
    if ctxt.can("volume_extension:volume_tenant_attribute", target,
                fatal=False):
        body["os-vol-tenant-attr:tenant_id"] = row.project_id
    if show_host:
        body["os-vol-host-attr:host"] = row.host
    if ctxt.can("volume_extension:volume_mig_status_attribute", target,
                fatal=False):
        body["os-vol-mig-status-attr:migstat"] = row.migration_status
        body["os-vol-mig-status-attr:name_id"] = None


def _metadata(row: Any) -> dict:
    metadata = volumes_db.metadata_of(row)
    if row.readonly:
        metadata["readonly"] = "True"
    return metadata


def _add_versioned(body: dict, row: Any, version: V,
                   show_host: bool) -> None:
    if version >= mv.GROUP_VOLUME:
        body["group_id"] = row.group_id
    if version >= mv.VOLUME_DETAIL_PROVIDER_ID:
        body["provider_id"] = None
    if version >= mv.VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS:
        body["shared_targets"] = True
        body["service_uuid"] = row.service_uuid
    if version >= mv.VOLUME_CLUSTER_NAME:
        # Where the volume lives, as its host: for those who see hosts.
        body["cluster_name"] = row.cluster_name if show_host else None
    if version >= mv.VOLUME_TYPE_ID_IN_VOLUME_DETAIL:
        body["volume_type_id"] = row.volume_type_id
    if version >= mv.USE_QUOTA:
        body["consumes_quota"] = True
