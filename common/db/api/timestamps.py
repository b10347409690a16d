"""Timestamps as every timestamp column stores them: naive UTC."""

import datetime


def utcnow() -> datetime.datetime:
    """Naive UTC, as stored in every timestamp column."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def older_than(when: datetime.datetime, seconds: float) -> bool:
    """Whether a stored (naive UTC) timestamp is more than ``seconds`` old."""
    return (utcnow() - when).total_seconds() > seconds
