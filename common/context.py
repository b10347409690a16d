"""The request context: who asks, for which project, under which request id.

It travels across the internal RPC topics as a dict (``to_dict``/
``from_dict``) and provides the oslo.db enginefacade transaction slots used
by ``common/db/api``.  Only the internal services' broker user may publish
on those topics; the api's RPC door for compute hosts never reads a context
from the wire (``services/api/auth.py`` builds it from a credential).
"""

from typing import Any

from oslo_context import context as oslo_context
from oslo_db.sqlalchemy import enginefacade
from sqlalchemy import engine as sa_engine
from sqlalchemy import orm

from common import exception


def _policy() -> Any:
    """common.policy, imported on first use.

    NOTE(ashlar): oslo.policy costs ~0.1 s of import; volume services never
    check policy, and their start time is how soon a new backend shows.
    """
    from common import policy
    return policy


@enginefacade.transaction_context_provider
class RequestContext(oslo_context.RequestContext):
    """An oslo.context RequestContext with policy checks."""

    # NOTE(ashlar): set by ``transaction_context_provider`` (oslo.db is
    # untyped): the ORM session of the ``reader``/``writer`` transaction
    # open on the context, its connection (``.connection`` functions), and
    # the transaction itself (raises NoEngineContextEstablished outside
    # one).  Annotations only: the provider's properties serve them.
    session: orm.Session
    connection: sa_engine.Connection
    transaction_ctx: object

    def __init__(self, *args: Any, agent_host: str | None = None,
                 **kwargs: Any) -> None:
        is_admin = kwargs.pop("is_admin", None)
        super().__init__(*args, **kwargs)
        #: The compute host a verified agent credential is bound to.
        self.agent_host = agent_host
        if is_admin is None:
            is_admin = _policy().check_is_admin(self)
        self.is_admin = is_admin

    def require_project(self) -> str:
        """The caller's project, for work on the caller's own resources.

        :raises ProjectScopeRequired: the credential names no project
            (an unscoped or a system-scoped token).
        """
        if not self.project_id:
            raise exception.ProjectScopeRequired()
        return self.project_id

    def can(self, action: str, target: dict[str, Any] | None = None,
            fatal: bool = True) -> bool:
        """Check ``action`` against policy for this caller.

        :param target: the object's attributes (``project_id`` at least);
            defaults to the caller's own project.
        :raises common.exception.PolicyNotAuthorized: when denied and fatal.
        """
        if target is None:
            target = {"project_id": self.project_id, "user_id": self.user_id}
        return _policy().authorize(self, action, target, fatal=fatal)

    def decisions(self) -> Any:
        """A ``common.policy.Decisions``: this caller's policy decisions
        for the rest of one request, each action on each target decided
        once (the list views' per-row checks)."""
        return _policy().Decisions(self)

    def to_dict(self) -> dict[str, Any]:
        """oslo.context's dict, with what ``from_dict`` reads beyond it
        (``is_admin`` as decided, the service roles of a service token)."""
        values = super().to_dict()
        values["is_admin"] = self.is_admin
        values["service_roles"] = list(self.service_roles or [])
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any],
                  **kwargs: Any) -> "RequestContext":
        """The context a message carried; it becomes this thread's
        current context, so what is logged next carries its ids.

        :param kwargs: other arguments of the constructor (as oslo.context's
            ``from_dict`` takes them), such as ``agent_host``.
        """
        return cls(user_id=values.get("user_id") or values.get("user"),
                   project_id=(values.get("project_id")
                               or values.get("project_name")
                               or values.get("tenant")),
                   roles=values.get("roles") or [],
                   service_roles=values.get("service_roles") or [],
                   is_admin=values.get("is_admin"),
                   request_id=values.get("request_id"),
                   global_request_id=values.get("global_request_id"),
                   **kwargs)



def get_admin_context() -> RequestContext:
    """Return a context for work a service does on its own account."""
    return RequestContext(user_id=None, project_id=None, roles=["admin"],
                          is_admin=True, overwrite=False)
