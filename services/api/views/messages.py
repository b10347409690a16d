"""User message views: Cinder's message body (show, list)."""

from common import messages
from common.db import models
from services.api import views


def detail(row: models.Message, base_url: str, url_project: str | None) -> dict:
    """One message; ``resource_*`` only when set, as in Cinder."""
    body = {
        "id": row.id, "event_id": row.event_id,
        "user_message": messages.user_message(row.action_id, row.detail_id),
        "message_level": row.message_level,
        "created_at": views.timestamp(row.created_at),
        "guaranteed_until": views.timestamp(row.expires_at),
        "request_id": row.request_id,
        "links": views.links(base_url, url_project, "messages", row.id),
    }
    if row.resource_type:
        body["resource_type"] = row.resource_type
    if row.resource_uuid:
        body["resource_uuid"] = row.resource_uuid
    return body
