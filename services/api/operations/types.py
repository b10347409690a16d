"""Volume type operations: management for administrators, reads for
readers, and the projects that may use a private type."""

import builtins
from collections.abc import Mapping

from oslo_log import log as logging

from common import attach_rules
from common import exception
from common import extra_specs
from common.context import RequestContext
from common.db import models
from common.db.api import types as types_db

LOG = logging.getLogger(__name__)
#: Extra specs every reader sees; the others need ``read_sensitive``
#: (Cinder's ``USER_VISIBLE_EXTRA_SPECS``).
USER_VISIBLE_SPECS = ("RESKEY:availability_zones", "multiattach",
                      "replication_enabled")


def _check_multiattach_cacheable(specs: Mapping[str, str | None]) -> None:
    if (extra_specs.is_multiattach_spec(specs)
            and specs.get("cacheable") == "<is> True"):
        raise exception.InvalidInput(
            reason="cacheable cannot be set with multiattach.")


def validate_specs(specs: Mapping[str, str | None]) -> None:
    """Refuse combinations that cannot work (multiattach with encryption)."""
    attach_rules.validate_type_specs(specs, extra_specs.is_multiattach_spec(specs))


def _user_project(ctxt: RequestContext) -> str | None:
    """None for administrators (every type), else the caller's project."""
    return None if ctxt.is_admin else ctxt.require_project()


class TypeOperations:
    def create(self, ctxt: RequestContext, name: str, description: str | None,
               is_public: bool, specs: dict[str, str | None] | None
               ) -> models.VolumeType:
        ctxt.can("volume_extension:type_create", {})
        validate_specs(specs or {})
        row: models.VolumeType = types_db.type_create(
            ctxt, name, description, is_public, specs)
        LOG.info("Volume type %(name)s created as %(id)s",
                 {"name": name, "id": row.id})
        return row

    def get(self, ctxt: RequestContext, type_id: str) -> models.VolumeType:
        """A type the caller may use; a private one without access is not
        found."""
        project = _user_project(ctxt)
        ctxt.can("volume_extension:type_get", {"project_id": ctxt.project_id})
        row: models.VolumeType = types_db.type_get_for(ctxt, type_id, project)
        return row

    def default(self, ctxt: RequestContext,
                default_name: str) -> models.VolumeType:
        ctxt.can("volume_extension:type_get", {"project_id": ctxt.project_id})
        row: models.VolumeType = types_db.type_get_by_name(ctxt, default_name)
        return row

    def list(self, ctxt: RequestContext, is_public: bool | None,
             filters: dict[str, object] | None) -> list[models.VolumeType]:
        """Administrators filter by ``is_public``; anyone else gets the
        public types and the private ones shared with their project."""
        project = _user_project(ctxt)
        ctxt.can("volume_extension:type_get_all",
                 {"project_id": ctxt.project_id})
        rows: list[models.VolumeType] = types_db.type_list(
            ctxt, is_public=is_public, filters=filters, project_id=project)
        return rows

    def update(self, ctxt: RequestContext, type_id: str,
               values: dict[str, object]) -> models.VolumeType:
        ctxt.can("volume_extension:type_update", {})
        row: models.VolumeType = types_db.type_update(ctxt, type_id, values)
        return row

    def delete(self, ctxt: RequestContext, type_id: str,
               default_name: str) -> None:
        ctxt.can("volume_extension:type_delete", {})
        row = types_db.type_get(ctxt, type_id)
        if row.name == default_name:
            raise exception.InvalidVolumeType(
                reason="The volume type %s is a default volume type and "
                       "cannot be deleted." % type_id)
        types_db.type_delete(ctxt, type_id)

    def set_specs(self, ctxt: RequestContext, type_id: str,
                  specs: dict[str, str | None],
                  rule: str = "volume_extension:types_extra_specs:create"
                  ) -> dict[str, str | None]:
        ctxt.can(rule, {})
        _check_multiattach_cacheable(specs)
        current = types_db.specs_of(types_db.type_get(ctxt, type_id))
        validate_specs(dict(current, **specs))
        merged: dict[str, str | None] = types_db.extra_specs_update(
            ctxt, type_id, specs)
        return merged

    def get_specs(self, ctxt: RequestContext, type_id: str,
                  rule: str = "volume_extension:types_extra_specs:index"
                  ) -> dict[str, str | None]:
        row = self.get(ctxt, type_id)
        ctxt.can(rule, {"project_id": ctxt.project_id})
        return self.visible_specs(ctxt, row)

    def delete_spec(self, ctxt: RequestContext, type_id: str,
                    key: str) -> None:
        ctxt.can("volume_extension:types_extra_specs:delete", {})
        types_db.extra_spec_delete(ctxt, type_id, key)

    @staticmethod
    def visible_specs(ctxt: RequestContext,
                      row: models.VolumeType) -> dict[str, str | None]:
        """The extra specs of ``row`` the caller may read."""
        specs = types_db.specs_of(row)
        if ctxt.can("volume_extension:types_extra_specs:read_sensitive", {},
                    fatal=False):
            return specs
        return {k: v for k, v in specs.items() if k in USER_VISIBLE_SPECS}

    # -- access to private types ------------------------------------------
    def _private(self, ctxt: RequestContext,
                 type_id: str) -> models.VolumeType:
        row: models.VolumeType = types_db.type_get(ctxt, type_id)
        if row.is_public:
            raise exception.InvalidVolumeType(
                reason="Type access modification is not applicable to "
                       "public volume type.")
        return row

    def access_list(self, ctxt: RequestContext,
                    type_id: str) -> builtins.list[str]:
        ctxt.can("volume_extension:volume_type_access:get_all_for_type", {})
        if types_db.type_get(ctxt, type_id).is_public:
            raise exception.NotFound(
                "Access list not available for public volume types.")
        projects: list[str] = types_db.type_access_list(ctxt, type_id)
        return projects

    def add_access(self, ctxt: RequestContext, type_id: str,
                   project_id: str) -> None:
        ctxt.can("volume_extension:volume_type_access:addProjectAccess", {})
        self._private(ctxt, type_id)
        types_db.type_access_add(ctxt, type_id, project_id)
        LOG.info("Project %(project)s may use volume type %(type)s",
                 {"project": project_id, "type": type_id})

    def remove_access(self, ctxt: RequestContext, type_id: str,
                      project_id: str) -> None:
        ctxt.can("volume_extension:volume_type_access:removeProjectAccess",
                 {})
        self._private(ctxt, type_id)
        types_db.type_access_remove(ctxt, type_id, project_id)
        LOG.info("Project %(project)s may no longer use volume type "
                 "%(type)s", {"project": project_id, "type": type_id})
