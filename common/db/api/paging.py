"""One page of an ORM list query, in Cinder's order and with its markers."""

from typing import Protocol
from typing import TypeVar

import sqlalchemy as sa
from oslo_db.sqlalchemy import utils as db_utils
from sqlalchemy import orm

#: A prebuilt first page's size (``LIMIT :limit``).
LIMIT: sa.BindParameter[int] = sa.bindparam("limit", type_=sa.Integer)


class _Owned(Protocol):
    """A model of rows that belong to a project."""

    project_id: orm.Mapped[str]


_T = TypeVar("_T")
_O = TypeVar("_O", bound=_Owned)


def newest_first(sort_keys: list[str], sort_dirs: list[str]) -> bool:
    """Whether a sort is the default order (``created_at``, then ``id``,
    both descending), as the api asks for it when no sort is given."""
    return (sort_keys in ([], ["created_at"], ["created_at", "id"])
            and len(sort_dirs) in (0, len(sort_keys))
            and all(direction == "desc" for direction in sort_dirs))


def page(query: orm.Query[_T], model: type[_T], marker_row: _T | None,
         limit: int | None, sort_keys: list[str] | None,
         sort_dirs: list[str] | None, offset: int | None) -> list[_T]:
    """One page of a list query, in Cinder's default order (newest first),
    ``id`` breaking ties (whole-second timestamps make them common)."""
    sort_keys = list(sort_keys or ["created_at"])
    sort_dirs = list(sort_dirs or ["desc"] * len(sort_keys))
    if "id" not in sort_keys:
        sort_keys.append("id")
        sort_dirs.append(sort_dirs[-1])
    query = db_utils.paginate_query(query, model, limit, sort_keys,
                                    marker=marker_row, sort_dirs=sort_dirs)
    if offset:
        query = query.offset(offset)
    return list(query.all())


def project_page(query: orm.Query[_O], model: type[_O], project_id: str | None,
                 filters: dict[str, object] | None, marker_row: _O | None,
                 hidden: Exception, limit: int | None,
                 sort_keys: list[str] | None, sort_dirs: list[str] | None,
                 offset: int | None) -> list[_O]:
    """One page of the ``model`` rows of ``project_id`` (every project's
    when None) whose columns equal ``filters``, after ``marker_row``.

    :raises: ``hidden`` for a marker of another project, as Cinder does
        (an unknown marker is the caller's to refuse).
    """
    if project_id is not None:
        query = query.filter(model.project_id == project_id)
    for key, value in (filters or {}).items():
        query = query.filter(getattr(model, key) == value)
    if marker_row is not None and project_id not in (
            None, marker_row.project_id):
        raise hidden
    return page(query, model, marker_row, limit, sort_keys, sort_dirs, offset)
