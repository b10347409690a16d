"""What the operator commands share: the refusal, an admin context, and
time as the tables show it."""

import datetime
from typing import Any

from common import context


class RefusedError(Exception):
    """What the operator asked cannot be done (cliff prints it, exits 1)."""


def admin() -> Any:
    """The context of an operator at the console: admin, no project."""
    return context.get_admin_context()


def when(moment: datetime.datetime | None) -> str:
    """A timestamp as the tables show it (ISO 8601, seconds), or ``-``."""
    return moment.replace(microsecond=0).isoformat() if moment else "-"
