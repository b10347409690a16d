"""The business layer behind the REST resources and the api's RPC door.

Operations check policy, validate against the database, make the
compare-and-swap status changes and cast to the other services.  Neither the
resources nor the RPC endpoint touch the database or the bus themselves.
"""

from typing import Protocol, TypeVar

from common import exception
from common.context import RequestContext


class Owned(Protocol):
    """A row of a project's (the target of its policy checks)."""

    @property
    def project_id(self) -> str: ...


OwnedT = TypeVar("OwnedT", bound=Owned)


def visible(ctxt: RequestContext, row: OwnedT, rule: str,
            missing: Exception) -> OwnedT:
    """``row`` if ``rule`` lets the caller read it (its project as the
    target), else ``missing``: another project's row does not exist for the
    caller, as in Cinder."""
    if not ctxt.can(rule, {"project_id": row.project_id}, fatal=False):
        raise missing
    return row


def placed(host: str | None, volume_id: str) -> str:
    """The ``host@backend#pool`` of a volume a node works on.

    NOTE(ashlar): only a placed volume reaches the casts and calls that
    need its node (available, in use, with snapshots, in a group); an
    unplaced one is refused rather than sent nowhere.

    :raises InvalidVolume: the volume has no pool.
    """
    if host is None:
        raise exception.InvalidVolume(
            reason="Volume %s is not on a backend yet." % volume_id)
    return host


def listed_project(ctxt: RequestContext, all_tenants: bool) -> str | None:
    """The project a list shows: every project (None) for an administrator
    asking ``all_tenants``, else the caller's own.

    :raises ProjectScopeRequired: a caller without a project asked for its
        own project's rows.
    """
    if all_tenants and ctxt.is_admin:
        return None
    return ctxt.require_project()
