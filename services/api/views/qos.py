"""QoS specs views: Cinder's bodies."""

from common.db import models
from common.db.api import qos as qos_db
from services.api import views


def specs(row: models.QoSSpecs) -> dict:
    """One QoS specs, as a list item."""
    return {"id": row.id, "name": row.name, "consumer": row.consumer,
            "specs": qos_db.specs_of(row)}


def show(row: models.QoSSpecs, base_url: str, url_project: str | None) -> dict:
    """Show's and create's body: the specs and their links."""
    return {"qos_specs": specs(row),
            "links": views.links(base_url, url_project, "qos-specs", row.id)}


def associations(types: list[models.VolumeType]) -> dict:
    return {"qos_associations": [
        {"association_type": "volume_type", "name": vtype.name,
         "id": vtype.id} for vtype in types]}
