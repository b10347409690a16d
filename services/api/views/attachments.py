"""Attachment views in Cinder's shapes (``cinder/api/v3/views/attachments``).

Unset timestamps are ``""``; ``attach_mode`` is the string ``"null"`` until
set; ``connection_info`` is ``{}`` until a connector was applied.  Unlike
Cinder, a create-with-connector or update answer shows the row as it is
after the volume service connected it.
"""

from typing import Any

from common.db.api import attachments as attachments_db
from common.db.api import rows
from services.api import views


def summary(row: Any) -> dict:
    return {"id": row.id, "status": row.attach_status,
            "instance": row.instance_uuid, "volume_id": row.volume_id}


#: The fencing extension's attribute: when the host was fenced; present
#: only on a fenced attachment, so Cinder's bodies stay Cinder's.
FENCED_AT = "ashlar-fencing:fenced_at"


def detail(row: Any) -> dict:
    body = summary(row)
    body.update(attached_at=views.timestamp(row.attach_time) or "",
                detached_at=views.timestamp(row.detach_time) or "",
                attach_mode=row.attach_mode or "null",
                connection_info=attachments_db.connection_info_of(row))
    if getattr(row, "fenced_at", None) is not None:
        body[FENCED_AT] = views.timestamp(row.fenced_at)
    return body


def show(row: Any, shared: list[str]) -> dict:
    """Detail plus the other attachments sharing this host's connection."""
    body = detail(row)
    body["shared_connections_by_attachment"] = list(shared)
    return body


def deleted(result: rows.Destroyed) -> dict[str, Any]:
    """The answer to a delete: the volume's remaining attachments, and those
    that shared the deleted one's host connection, as they stood."""
    return {"attachments": [summary(row) for row in result["remaining"]],
            "shared_connections_by_attachment": list(result["shared"])}
