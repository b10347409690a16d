"""A backup's exported record (Cinder's ``Backup.encode_record``): the
base64 of a JSON object of Cinder's backup fields, plus ``driver_info``
(what the backup driver needs besides; nothing for the POSIX driver).

``export_record`` gives it as ``backup_url``; ``import_record`` takes it
back, and the backup service checks it against its store before the row
is ``available`` (``services/backup/work.py``).
"""

import base64
import binascii
import json
from typing import Any

from oslo_utils import timeutils

from common import exception
from common.db import models

#: The volume id of an imported backup until its record is read, as
#: Cinder's (``cinder/backup/api.py`` ``IMPORT_VOLUME_ID``).
IMPORT_VOLUME_ID = "00000000-0000-0000-0000-000000000000"
#: What an import needs in the record (Cinder's ``required_import_options``).
REQUIRED = frozenset(["display_name", "display_description", "container",
                      "size", "service_metadata", "object_count", "id"])
#: Columns an import takes from the record (the rest is the importer's:
#: project, user, host, status; or counted: num_dependent_backups).
IMPORTED = ("volume_id", "display_name", "display_description", "container",
            "size", "object_count", "parent_id", "snapshot_id",
            "data_timestamp")
_TIMES = ("created_at", "updated_at", "data_timestamp")


def _time(value: Any) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def encode(row: models.Backup, driver_info: dict[str, Any]) -> str:
    """The record of ``row`` (Cinder's fields; those Ashlar has no column
    for are null)."""
    fields: dict[str, Any] = {
        name: getattr(row, name) for name in (
            "id", "user_id", "project_id", "volume_id", "host",
            "availability_zone", "container", "parent_id", "status",
            "fail_reason", "size", "display_name", "display_description",
            "service", "object_count", "num_dependent_backups",
            "snapshot_id", "restore_volume_id")}
    fields.update({name: _time(getattr(row, name)) for name in _TIMES})
    fields.update(service_metadata=None, temp_volume_id=None,
                  temp_snapshot_id=None, encryption_key_id=None,
                  deleted=False, deleted_at=None,
                  metadata={m.key: m.value for m in row.backup_metadata},
                  driver_info=driver_info)
    return base64.b64encode(json.dumps(fields).encode()).decode()


def decode(backup_url: str) -> dict[str, Any]:
    """The record's fields.

    :raises InvalidInput: not base64 of a JSON object.
    """
    try:
        record = json.loads(base64.b64decode(backup_url, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise exception.InvalidInput(
            reason="Can't parse backup record.") from exc
    if not isinstance(record, dict):
        raise exception.InvalidInput(reason="Can't parse backup record.")
    return record


def check(record: dict[str, Any]) -> None:
    """What the api needs of a record before it writes the row (Cinder's
    words).

    :raises InvalidInput: no ``id`` (a string of 36 at most), or no
        ``size`` (a whole number).
    """
    if not isinstance(record.get("id"), str) or \
            not 0 < len(record["id"]) <= 36:
        raise exception.InvalidInput(
            reason="Provided backup record is missing an id")
    if not isinstance(record.get("size"), int) or record["size"] < 0:
        raise exception.InvalidInput(
            reason="Provided backup record is missing size attribute")


def columns(record: dict[str, Any]) -> dict[str, Any]:
    """The columns an import writes from ``record`` (naive UTC times)."""
    values = {name: record.get(name) for name in IMPORTED}
    if values["data_timestamp"]:
        values["data_timestamp"] = timeutils.normalize_time(
            timeutils.parse_isotime(values["data_timestamp"]))
    return values
