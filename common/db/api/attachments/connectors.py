"""An attachment's connector rows (``attachment_specs``).

One row per key of the connector the host gave: the key as a string, the
value as JSON.  They go with their attachment (``ON DELETE CASCADE``).
"""

import json
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from common.db.api.attachments.statements import DELETE_SPECS
from common.db.api.attachments.statements import INSERT_SPECS
from common.db.api.attachments.statements import SELECT_CONNECTOR
from common.db.api.engine import reader
from common.db.api.execution import Conn
from common.db.api.execution import single_statement
from common.db.api.rows import AttachmentRow
from common.db.api.timestamps import utcnow


def spec_values(connector: Mapping[str, object] | None) -> dict[str, str]:
    """The ``attachment_specs`` key and value of each connector key: the
    key as a string, the value as JSON."""
    return {str(key): json.dumps(value)
            for key, value in (connector or {}).items()}


def _spec_rows(attachment_id: str, connector: Mapping[str, object] | None
               ) -> list[dict[str, Any]]:
    """One ``attachment_specs`` row per connector key (``spec_values``)."""
    return [{"attachment_id": attachment_id, "key": key, "value": value,
             "created_at": utcnow()}
            for key, value in spec_values(connector).items()]


def _connector(conn: Conn, attachment_id: str) -> dict[str, Any]:
    """The connector an attachment was given, or ``{}``."""
    return decode_connector(conn.execute(SELECT_CONNECTOR,
                                         {"attachment_id": attachment_id}))


def decode_connector(rows: Iterable[tuple[str, str | None]]
                     ) -> dict[str, Any]:
    """The connector from its ``(key, JSON value)`` rows."""
    result: dict[str, Any] = {}
    for key, value in rows:
        try:
            result[key] = None if value is None else json.loads(value)
        except (TypeError, ValueError):
            result[key] = value
    return result


def connection_info_of(row: AttachmentRow) -> dict[str, Any]:
    info: dict[str, Any] = (json.loads(row.connection_info)
                            if row.connection_info else {})
    return info


def replace_connector(conn: Conn, attachment_id: str,
                      connector: Mapping[str, object] | None) -> None:
    """Replace the row's connector rows (in the caller's transaction)."""
    conn.execute(DELETE_SPECS, {"attachment_id": attachment_id})
    insert_specs(conn, attachment_id, connector)


def insert_specs(conn: Conn, attachment_id: str,
                 connector: Mapping[str, object] | None) -> None:
    rows = _spec_rows(attachment_id, connector)
    if rows:
        conn.execute(INSERT_SPECS, rows)


@single_statement(reader)
def connector(conn: Conn, attachment_id: str) -> dict[str, Any]:
    """The connector an attachment was given, or ``{}``."""
    return _connector(conn, attachment_id)
