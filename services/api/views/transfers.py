"""Volume transfer views: Cinder's transfer bodies (summary, detail and
the create answer with its auth key)."""

from common.db import models
from services.api import microversion as mv
from services.api import views


def summary(row: models.Transfer, base_url: str, url_project: str | None) -> dict:
    """A transfer in a list without details, or an accept's answer."""
    return {"id": row.id, "volume_id": row.volume_id,
            "name": row.display_name,
            "links": views.links(base_url, url_project, "os-volume-transfer",
                                 row.id)}


def detail(row: models.Transfer, base_url: str, url_project: str | None,
           version: mv.APIVersion) -> dict:
    """A transfer as show and the detailed list give it (a row exists only
    until it is accepted: ``accepted`` is false, no destination yet)."""
    body = summary(row, base_url, url_project)
    body["created_at"] = views.timestamp(row.created_at)
    if version >= mv.TRANSFER_WITH_SNAPSHOTS:
        body["no_snapshots"] = row.no_snapshots
    if version >= mv.TRANSFER_WITH_HISTORY:
        body.update(source_project_id=row.project_id,
                    destination_project_id=None, accepted=False)
    return body
