"""Volume type views."""

from typing import Any

from common.db.api import types as types_db


def show(row: Any, ctxt: Any, with_access: bool = True) -> dict:
    body = {"id": row.id, "name": row.name, "is_public": row.is_public,
            "description": row.description,
            "extra_specs": types_db.specs_of(row)}
    if with_access:
        body["os-volume-type-access:is_public"] = row.is_public
    if ctxt.is_admin:
        body["qos_specs_id"] = None
    return body
