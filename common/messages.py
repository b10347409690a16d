"""User messages (Cinder's ``/messages``, 3.3+): why an asynchronous
request that was answered 202 failed later, told to the project that made
it in the fixed words of Cinder's catalog (``cinder/message/
message_field.py``), never a backend's own error text (that is logged).

An event is an action and a detail; its id is
``VOLUME_<resource type>_<action id>_<detail id>`` and its text
``<action>:<detail>``, as Cinder builds them.
"""

import uuid
from typing import Any, NamedTuple

from oslo_log import log as logging

from common.context import RequestContext
from common.db.api import messages as messages_db
from common.db.api import volumes as volumes_db

LOG = logging.getLogger(__name__)

LEVEL_ERROR = "ERROR"


class Resource:
    VOLUME = "VOLUME"
    VOLUME_SNAPSHOT = "VOLUME_SNAPSHOT"
    VOLUME_BACKUP = "VOLUME_BACKUP"


#: Cinder's action ids and texts, of the actions Ashlar reports.
ACTIONS = {
    "001": "schedule allocate volume",
    "007": "extend volume",
    "008": "create volume from backend storage",
    "009": "create snapshot",
    "010": "delete snapshot",
    "013": "create backup",
    "014": "delete backup",
    "015": "restore backup",
}
#: Cinder's detail ids and texts, of the details Ashlar reports.
DETAILS = {
    "001": "An unknown error occurred.",
    "002": "Driver is not initialized at present.",
    "003": "Could not find any available weighted backend.",
    "010": "Volume Driver failed to extend volume.",
    "012": "Driver failed to create the volume.",
    "013": "Snapshot failed to create.",
    "016": "Snapshot failed to delete.",
    "020": "Backup driver failed to create backup.",
    "021": "Failed to attach volume.",
    "025": "Backup driver failed to delete backup.",
    "026": "Backup driver failed to restore backup.",
}


class Event(NamedTuple):
    action_id: str
    detail_id: str
    resource_type: str = Resource.VOLUME

    @property
    def event_id(self) -> str:
        return "VOLUME_%s_%s_%s" % (self.resource_type, self.action_id,
                                    self.detail_id)


#: No pool passes the filters (the scheduler's NoValidBackend, also a copy
#: whose source's pool does not take its type).
NO_BACKEND = Event("001", "003")
#: The driver failed to create the volume.
CREATE_FAILED = Event("008", "012")
#: The volume service the create was cast to is down.
SERVICE_DOWN = Event("008", "002")
#: The driver failed to extend the volume.
EXTEND_FAILED = Event("007", "010")
SNAPSHOT_CREATE_FAILED = Event("009", "013", Resource.VOLUME_SNAPSHOT)
SNAPSHOT_DELETE_FAILED = Event("010", "016", Resource.VOLUME_SNAPSHOT)
#: A backup service could not connect the volume (or snapshot) it reads
#: or writes: the node refused or failed (Cinder's ATTACH_ERROR).
BACKUP_ATTACH_FAILED = Event("013", "021", Resource.VOLUME_BACKUP)
RESTORE_ATTACH_FAILED = Event("015", "021", Resource.VOLUME_BACKUP)
#: The backup driver failed to write, restore or delete a backup.
BACKUP_CREATE_FAILED = Event("013", "020", Resource.VOLUME_BACKUP)
BACKUP_RESTORE_FAILED = Event("015", "026", Resource.VOLUME_BACKUP)
BACKUP_DELETE_FAILED = Event("014", "025", Resource.VOLUME_BACKUP)


def user_message(action_id: str, detail_id: str) -> str:
    """The text Cinder shows for an action and a detail."""
    return "%s:%s" % (ACTIONS.get(action_id, "unknown action"),
                      DETAILS.get(detail_id, DETAILS["001"]))


def record(ctxt: RequestContext, ttl: float, event: Event, resource_uuid: str,
           project_id: str) -> None:
    """Tell ``project_id`` about ``event`` on a resource, under the
    request id of ``ctxt`` (the request that started the work).

    A message that cannot be written is logged, never raised: the status
    change it explains has happened already.
    """
    try:
        messages_db.message_create(
            ctxt, _row(ctxt, event, resource_uuid, project_id), ttl)
    except Exception:
        LOG.exception("Cannot record user message %(event)s for %(id)s",
                      {"event": event.event_id, "id": resource_uuid})


def _row(ctxt: RequestContext, event: Event, resource_uuid: str,
         project_id: str) -> dict[str, Any]:
    """The columns of ``event``'s message (but its times)."""
    return {"id": str(uuid.uuid4()), "project_id": project_id,
            "request_id": ctxt.request_id,
            "resource_type": event.resource_type,
            "resource_uuid": resource_uuid, "event_id": event.event_id,
            "action_id": event.action_id, "detail_id": event.detail_id,
            "message_level": LEVEL_ERROR}


def fail_volume(ctxt: RequestContext, ttl: float, volume: Any, expected: dict,
                values: dict, event: Event | None) -> bool:
    """Compare-and-swap ``volume`` into a failed status (``values``) and,
    if it changed here, record ``event`` (if any) for its project, in the
    same transaction: a client that sees the failed status finds the
    message; of racing failures only the one that changed it tells.

    :returns: whether the volume changed.
    """
    if event is None:
        return volumes_db.volume_cas(ctxt, volume.id, expected, values)
    row = _row(ctxt, event, volume.id, volume.project_id)
    return volumes_db.volume_cas(
        ctxt, volume.id, expected, values,
        then=lambda conn: messages_db.message_insert(conn, row, ttl))
