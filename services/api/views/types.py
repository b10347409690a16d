"""Volume type views: what each field's policy lets the caller see."""

from common.context import RequestContext
from common.db import models
from services.api.operations import types as type_ops


def written(row: models.VolumeType, ctxt: RequestContext, with_access: bool) -> dict:
    """A type as a create (``with_access``) or an update answers it:
    Cinder's older view, ``extra_specs`` always and no ``qos_specs_id``."""
    body = show(row, ctxt, with_access, with_qos=False)
    body.setdefault("extra_specs",
                    type_ops.TypeOperations.visible_specs(ctxt, row))
    return body


def show(row: models.VolumeType, ctxt: RequestContext, with_access: bool = True,
         with_qos: bool = True) -> dict:
    """A type as the caller may see it.

    ``extra_specs`` needs ``access_types_extra_specs`` (and shows the
    sensitive ones only with ``read_sensitive``), ``qos_specs_id`` needs
    ``access_types_qos_specs_id``, ``os-volume-type-access:is_public``
    needs ``volume_type_access`` (and ``with_access``).
    """
    target = {"project_id": ctxt.project_id}
    body = {"id": row.id, "name": row.name, "is_public": row.is_public,
            "description": row.description}
    if ctxt.can("volume_extension:access_types_extra_specs", target,
                fatal=False):
        body["extra_specs"] = type_ops.TypeOperations.visible_specs(ctxt, row)
    if with_access and ctxt.can("volume_extension:volume_type_access",
                                target, fatal=False):
        body["os-volume-type-access:is_public"] = row.is_public
    if with_qos and ctxt.can("volume_extension:access_types_qos_specs_id",
                             target, fatal=False):
        body["qos_specs_id"] = row.qos_specs_id
    return body


def access(type_id: str, projects: list[str]) -> dict:
    return {"volume_type_access": [{"volume_type_id": type_id,
                                    "project_id": project}
                                   for project in projects]}
