"""The one route table: path -> resource (after the project is taken out)."""

from typing import Any

from services.api.resources import attachments
from services.api.resources import availability_zones
from services.api.resources import backends
from services.api.resources import encryption
from services.api.resources import extensions
from services.api.resources import group_types
from services.api.resources import groups
from services.api.resources import limits
from services.api.resources import metadata
from services.api.resources import messages
from services.api.resources import qos
from services.api.resources import quotas
from services.api.resources import snapshots
from services.api.resources import transfers
from services.api.resources import types
from services.api.resources import versions
from services.api.resources import volume_actions
from services.api.resources import volumes


def route_table(ops: Any, conf: Any) -> list[tuple[str, Any]]:
    """Return (path, resource) pairs; ``ops`` holds the operation objects."""
    max_limit = conf.api.max_limit
    att_ops = ops.attachments
    return [
        ("/", versions.Versions()),
        ("/v3", versions.Versions(status="200 OK")),
        ("/openapi.yaml", versions.OpenAPI()),
        ("/v3/volumes", volumes.Collection(ops.volumes, max_limit)),
        ("/v3/volumes/detail", volumes.Detail(ops.volumes, max_limit)),
        ("/v3/volumes/summary", limits.VolumeSummary(ops.usage)),
        ("/v3/volumes/{volume_id}", volumes.Item(ops.volumes)),
        ("/v3/volumes/{volume_id}/action",
         volume_actions.Action(ops.volumes, att_ops)),
        *metadata.routes("volumes", "volume_id", ops.volumes,
                         volumes.missing_key),
        ("/v3/attachments", attachments.Collection(att_ops, max_limit)),
        ("/v3/attachments/detail", attachments.Detail(att_ops, max_limit)),
        ("/v3/attachments/{attachment_id}", attachments.Item(att_ops)),
        ("/v3/attachments/{attachment_id}/action",
         attachments.Action(att_ops, ops.fencing)),
        ("/v3/ashlar-fencing/{action}", attachments.HostFence(ops.fencing)),
        ("/v3/extensions", extensions.Extensions()),
        ("/v3/types", types.Collection(ops.types)),
        ("/v3/types/{type_id}", types.Item(ops.types, conf)),
        ("/v3/types/{type_id}/extra_specs", types.ExtraSpecs(ops.types)),
        ("/v3/types/{type_id}/extra_specs/{key}", types.ExtraSpec(ops.types)),
        ("/v3/types/{type_id}/os-volume-type-access",
         types.Access(ops.types)),
        ("/v3/types/{type_id}/action", types.Action(ops.types)),
        *encryption.routes(ops),
        ("/v3/os-services", backends.Services(ops.backends)),
        ("/v3/os-services/{action}", backends.ServiceAction(ops.backends)),
        ("/v3/os-hosts", backends.Hosts(ops.backends)),
        ("/v3/os-hosts/{host_name}", backends.Host(ops.backends)),
        ("/v3/scheduler-stats/get_pools", backends.Pools(ops.backends)),
        ("/v3/capabilities/{host}", backends.Capabilities(ops.backends)),
        ("/v3/limits", limits.Limits(ops.usage)),
        ("/v3/os-quota-sets/{project_id}", quotas.QuotaSet(ops.quotas)),
        ("/v3/os-quota-sets/{project_id}/defaults",
         quotas.QuotaDefaults(ops.quotas)),
        ("/v3/os-quota-class-sets/{class_name}",
         quotas.QuotaClassSet(ops.quotas)),
        ("/v3/os-availability-zone",
         availability_zones.AvailabilityZones(ops.usage)),
        *snapshots.routes(ops, max_limit),
        *messages.routes(ops, max_limit),
        *transfers.routes(ops, max_limit),
        *qos.routes(ops, max_limit),
        *group_types.routes(ops, max_limit),
        *groups.routes(ops, max_limit),
    ]
