"""The one route table: path -> resource (after the project is taken out)."""

from typing import Any

from services.api.resources import backends
from services.api.resources import types
from services.api.resources import versions
from services.api.resources import volumes


def route_table(ops: Any, conf: Any) -> list[tuple[str, Any]]:
    """Return (path, resource) pairs; ``ops`` holds the operation objects."""
    max_limit = conf.api.max_limit
    return [
        ("/", versions.Versions()),
        ("/v3", versions.Versions(status="200 OK")),
        ("/v3/volumes", volumes.Collection(ops.volumes, max_limit)),
        ("/v3/volumes/detail", volumes.Detail(ops.volumes, max_limit)),
        ("/v3/volumes/{volume_id}", volumes.Item(ops.volumes)),
        ("/v3/types", types.Collection(ops.types)),
        ("/v3/types/{type_id}", types.Item(ops.types, conf)),
        ("/v3/types/{type_id}/extra_specs", types.ExtraSpecs(ops.types)),
        ("/v3/types/{type_id}/extra_specs/{key}", types.ExtraSpec(ops.types)),
        ("/v3/os-services", backends.Services(ops.backends)),
        ("/v3/os-services/{action}", backends.ServiceAction(ops.backends)),
        ("/v3/scheduler-stats/get_pools", backends.Pools(ops.backends)),
        ("/v3/capabilities/{host}", backends.Capabilities(ops.backends)),
    ]
