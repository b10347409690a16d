"""Volume views: summary, detail, and the attachments inside a volume."""

from typing import Any

from common import constants
from common.context import RequestContext
from common.db.api import volumes as volumes_db
from services.api import microversion as mv
from services.api import views

V = mv.APIVersion

#: The ``os-vol-*`` and host-dependent fields' rules, decided per project.
_HOST_RULE = "volume_extension:volume_host_attribute"
_TENANT_RULE = "volume_extension:volume_tenant_attribute"
_MIGSTAT_RULE = "volume_extension:volume_mig_status_attribute"


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
    return Detail(ctxt, version, base_url, url_project,
                  with_os_attrs).body(row)


class Detail:
    """The detail view of one request's volumes: what every row shares
    (the version's fields, the links' prefixes, and the policy decisions,
    once per project) worked out once, not once per row."""

    def __init__(self, ctxt: RequestContext, version: V, base_url: str,
                 url_project: str | None, with_os_attrs: bool = True
                 ) -> None:
        self._links = views.Links(base_url, url_project, "volumes")
        self._decisions = ctxt.decisions()
        self._allowed: dict[str, tuple[bool, bool, bool]] = {}
        self._with_os_attrs = with_os_attrs
        self._versioned = _Versioned(version)

    def body(self, row: Any) -> dict:
        """One volume's detail body."""
        show_host, show_tenant, show_migstat = self._allowed_for(
            row.project_id)
        type_name = row.volume_type.name if row.volume_type else None
        body = {
            "id": row.id, "status": constants.shown_status(row.status),
            "size": row.size, "availability_zone": row.availability_zone,
            "created_at": views.timestamp(row.created_at),
            "updated_at": views.timestamp(row.updated_at),
            "name": row.display_name, "description": row.display_description,
            "volume_type": type_name or row.volume_type_id,
            "snapshot_id": row.snapshot_id, "source_volid": row.source_volid,
            "metadata": _metadata(row),
            "links": self._links(row.id),
            "user_id": row.user_id,
            "bootable": "true" if row.bootable else "false",
            "encrypted": bool(row.encrypted), "replication_status": None,
            "consistencygroup_id": None, "multiattach": bool(row.multiattach),
            "migration_status": row.migration_status,
            "attachments": _attachments(row, show_host),
        }
        # NOTE(ashlar): no ``error_reason``: Cinder's body has none.  Why a
        # volume failed is a user message (``/messages``) in Cinder's words;
        # the backend's own text is logged and kept in the row for operators.
        self._versioned.add(body, row, show_host)
        if self._with_os_attrs:
            _add_os_attrs(body, row, show_host, show_tenant, show_migstat)
        return body

    def _allowed_for(self, project_id: str) -> tuple[bool, bool, bool]:
        """Whether the caller sees, on ``project_id``'s volumes: hosts,
        the project, the migration status (the last two only with the
        ``os-vol-*`` fields)."""
        found = self._allowed.get(project_id)
        if found is None:
            target = {"project_id": project_id}
            allowed = self._decisions.allowed
            found = self._allowed[project_id] = (
                allowed(_HOST_RULE, target),
                self._with_os_attrs and allowed(_TENANT_RULE, target),
                self._with_os_attrs and allowed(_MIGSTAT_RULE, target))
        return found


class _Versioned:
    """The fields a microversion adds, its comparisons made once."""

    def __init__(self, version: V) -> None:
        self.group = version >= mv.GROUP_VOLUME
        self.provider = version >= mv.VOLUME_DETAIL_PROVIDER_ID
        self.service = version >= mv.VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS
        self.cluster = version >= mv.VOLUME_CLUSTER_NAME
        self.type_id = version >= mv.VOLUME_TYPE_ID_IN_VOLUME_DETAIL
        self.quota = version >= mv.USE_QUOTA

    def add(self, body: dict, row: Any, show_host: bool) -> None:
        if self.group:
            body["group_id"] = row.group_id
        if self.provider:
            body["provider_id"] = None
        if self.service:
            body["shared_targets"] = True
            body["service_uuid"] = row.service_uuid
        if self.cluster:
            # Where the volume lives, as its host: for those who see hosts.
            body["cluster_name"] = row.cluster_name if show_host else None
        if self.type_id:
            body["volume_type_id"] = row.volume_type_id
        if self.quota:
            body["consumes_quota"] = True


def _add_os_attrs(body: dict, row: Any, show_host: bool, show_tenant: bool,
                  show_migstat: bool) -> None:
    """The ``os-vol-*`` fields whose policies allow the caller."""
    if show_tenant:
        body["os-vol-tenant-attr:tenant_id"] = row.project_id
    if show_host:
        body["os-vol-host-attr:host"] = row.host
    if show_migstat:
        body["os-vol-mig-status-attr:migstat"] = row.migration_status
        body["os-vol-mig-status-attr:name_id"] = None


def _metadata(row: Any) -> dict:
    metadata = volumes_db.metadata_of(row)
    if row.readonly:
        metadata["readonly"] = "True"
    return metadata
