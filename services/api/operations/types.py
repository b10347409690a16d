"""Volume type operations: admin-only management, reads for everyone."""

from typing import Any

from oslo_log import log as logging

from common import exception
from common import extra_specs
from common import states
from common.db.api import types as types_db

LOG = logging.getLogger(__name__)
MANAGE = "volume_extension:types_manage"


def _check_multiattach_cacheable(specs: dict) -> None:
    if (extra_specs.is_multiattach_spec(specs)
            and specs.get("cacheable") == "<is> True"):
        raise exception.InvalidInput(
            reason="cacheable cannot be set with multiattach.")


def _validate(specs: dict) -> None:
    """Refuse combinations that cannot work (multiattach with encryption)."""
    states.validate_type_specs(specs, extra_specs.is_multiattach_spec(specs))


class TypeOperations:
    def create(self, ctxt: Any, name: str, description: str | None,
               is_public: bool, specs: dict | None) -> Any:
        ctxt.can(MANAGE)
        _validate(specs or {})
        row = types_db.type_create(ctxt, name, description, is_public, specs)
        LOG.info("Volume type %(name)s created as %(id)s",
                 {"name": name, "id": row.id})
        return row

    def get(self, ctxt: Any, type_id: str) -> Any:
        ctxt.can("volume_extension:type_get")
        row = types_db.type_get(ctxt, type_id)
        if not row.is_public and not ctxt.is_admin:
            raise exception.VolumeTypeNotFound(volume_type_id=type_id)
        return row

    def default(self, ctxt: Any, default_name: str) -> Any:
        ctxt.can("volume_extension:type_get")
        return types_db.type_get_by_name(ctxt, default_name)

    def list(self, ctxt: Any, is_public: bool | None,
             filters: dict | None) -> list:
        ctxt.can("volume_extension:type_get")
        if not ctxt.is_admin:
            is_public = True
        return types_db.type_list(ctxt, is_public=is_public, filters=filters)

    def update(self, ctxt: Any, type_id: str, values: dict) -> Any:
        ctxt.can(MANAGE)
        return types_db.type_update(ctxt, type_id, values)

    def delete(self, ctxt: Any, type_id: str, default_name: str) -> None:
        ctxt.can(MANAGE)
        row = types_db.type_get(ctxt, type_id)
        if row.name == default_name:
            raise exception.InvalidVolumeType(
                reason="The volume type %s is a default volume type and "
                       "cannot be deleted." % type_id)
        types_db.type_delete(ctxt, type_id)

    def set_specs(self, ctxt: Any, type_id: str, specs: dict) -> dict:
        ctxt.can(MANAGE)
        _check_multiattach_cacheable(specs)
        current = types_db.specs_of(types_db.type_get(ctxt, type_id))
        _validate(dict(current, **specs))
        return types_db.extra_specs_update(ctxt, type_id, specs)

    def get_specs(self, ctxt: Any, type_id: str) -> dict:
        return types_db.specs_of(self.get(ctxt, type_id))

    def delete_spec(self, ctxt: Any, type_id: str, key: str) -> None:
        ctxt.can(MANAGE)
        types_db.extra_spec_delete(ctxt, type_id, key)
