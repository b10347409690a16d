"""Group type operations (``/group_types``, admin to change): create,
show, list, update, delete, and their group specs.

A group type whose specs ask for ``consistent_group_snapshot_enabled``
cannot be used by Ashlar's drivers (a group snapshot is one snapshot of
each volume, not a consistent one): a group of it is refused at once.
"""

import uuid
from typing import Any

from oslo_log import log as logging

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import group_types as gtypes_db

LOG = logging.getLogger(__name__)
CONSISTENT = "consistent_group_snapshot_enabled"


def specs_of(row: models.GroupType) -> dict[str, str | None]:
    return gtypes_db.specs_of(row)


def check_usable(row: models.GroupType) -> None:
    """:raises InvalidGroupType: the type asks for what no driver does."""
    if (specs_of(row).get(CONSISTENT) or "").strip() == "<is> True":
        raise exception.InvalidGroupType(
            reason="Group type %s asks for consistent group snapshots "
                   "(%s), which no Ashlar backend offers: a group snapshot "
                   "is a snapshot of each of its volumes." % (row.id,
                                                              CONSISTENT))


class GroupTypeOperations:
    def create(self, ctxt: RequestContext, name: str, description: str | None,
               is_public: bool, specs: dict[str, str | None] | None
               ) -> models.GroupType:
        """:raises GroupTypeExists: the name is taken (409)."""
        ctxt.can("group:group_types:create", {})
        row: models.GroupType = gtypes_db.gtype_create(ctxt, {
            "id": str(uuid.uuid4()), "name": name.strip(),
            "description": description, "is_public": is_public},
            specs or {})
        LOG.info("Group type %(id)s (%(name)s) created",
                 {"id": row.id, "name": row.name})
        return row

    def get(self, ctxt: RequestContext, type_id: str) -> models.GroupType:
        """A type the caller may use: a private one is only an
        administrator's."""
        row: models.GroupType = gtypes_db.gtype_get(ctxt, type_id)
        if not (row.is_public or ctxt.is_admin):
            raise exception.GroupTypeNotFound(group_type_id=type_id)
        return row

    def resolve(self, ctxt: RequestContext,
                name_or_id: str) -> models.GroupType:
        """The type a group names, by id or name, as ``get``."""
        row: models.GroupType = gtypes_db.gtype_resolve(ctxt, name_or_id)
        if not (row.is_public or ctxt.is_admin):
            raise exception.GroupTypeNotFound(group_type_id=name_or_id)
        return row

    def list(self, ctxt: RequestContext, is_public: bool | None,
             **kwargs: Any) -> list[models.GroupType]:
        """Administrators filter by ``is_public``; anyone else gets the
        public types."""
        rows: list[models.GroupType] = gtypes_db.gtype_list(
            ctxt, is_public=is_public if ctxt.is_admin else True, **kwargs)
        return rows

    def update(self, ctxt: RequestContext, type_id: str,
               values: dict[str, object]) -> models.GroupType:
        ctxt.can("group:group_types:update", {})
        row: models.GroupType = gtypes_db.gtype_update(ctxt, type_id, values)
        return row

    def delete(self, ctxt: RequestContext, type_id: str) -> None:
        """:raises GroupTypeInUse: groups have the type (400)."""
        ctxt.can("group:group_types:delete", {})
        gtypes_db.gtype_destroy(ctxt, type_id)
        LOG.info("Group type %s deleted", type_id)

    def get_specs(self, ctxt: RequestContext, type_id: str,
                  rule: str) -> dict[str, str | None]:
        ctxt.can(rule, {})
        return specs_of(gtypes_db.gtype_get(ctxt, type_id))

    def set_specs(self, ctxt: RequestContext, type_id: str,
                  specs: dict[str, str | None],
                  rule: str) -> dict[str, str | None]:
        """Merge ``specs`` into the type's; the keys given."""
        ctxt.can(rule, {})
        gtypes_db.specs_update(ctxt, type_id, specs)
        return specs

    def delete_spec(self, ctxt: RequestContext, type_id: str,
                    key: str) -> None:
        """:raises GroupTypeSpecsNotFound: no such key (404)."""
        ctxt.can("group:group_types_specs:delete", {})
        gtypes_db.specs_update(ctxt, type_id, {}, delete_key=key)
