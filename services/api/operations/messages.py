"""User message operations: show, list and delete a project's messages
(they are written by the services that failed, ``common.messages``)."""

from typing import Any

from oslo_log import log as logging

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import messages as messages_db
from services.api import operations

LOG = logging.getLogger(__name__)


class MessageOperations:
    def get(self, ctxt: RequestContext, message_id: str) -> models.Message:
        """A message ``message:get`` lets the caller see, else
        MessageNotFound (another project's message does not exist for it).
        """
        row: models.Message = messages_db.message_get(ctxt, message_id)
        return operations.visible(
            ctxt, row, "message:get",
            exception.MessageNotFound(message_id=message_id))

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> list[models.Message]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("message:get_all", {"project_id": project})
        rows: list[models.Message] = messages_db.message_list(
            ctxt, project_id=project, **kwargs)
        return rows

    def delete(self, ctxt: RequestContext, message_id: str) -> None:
        row = self.get(ctxt, message_id)
        ctxt.can("message:delete", {"project_id": row.project_id})
        messages_db.message_destroy(ctxt, message_id)
        LOG.info("Message %s deleted", message_id)
