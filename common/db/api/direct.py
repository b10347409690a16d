"""Prebuilt Core statements run on the driver's cursor.

SQLAlchemy compiles each prebuilt statement of the hot paths once, but at
every ``Connection.execute`` it hashes the statement's cache key, builds an
execution context and reads the result's shape from the cursor's
description: on an attachment cycle that costs the api more CPU than the
driver's own work for the statement.  ``Connection`` wraps a SQLAlchemy
connection and runs each statement's SQL, compiled once per dialect, on its
DBAPI cursor, with the dialect's bind and result processors, as
SQLAlchemy's execution would; a database error goes through SQLAlchemy's
handling, so oslo.db's translation (``DBDeadlock``, ``DBDuplicateEntry``,
disconnects) applies as before.  What a plan cannot run that way (several
parameter sets, expanding or literal-execute parameters, Python-side column
defaults) goes through SQLAlchemy itself, and so does every statement of a
connection whose statements someone watches: SQL logging (``[database]
connection_debug``, ``echo``) or cursor-execute listeners (SQLite's
``BEGIN IMMEDIATE``, tests that count statements).

NOTE(ashlar): a plan reads what SQLAlchemy's own execution reads from a
compiled statement (``_bind_processors``, ``_result_columns``) and raises
through ``Connection._handle_dbapi_exception``, SQLAlchemy internals; so
plans run only on the SQLAlchemy releases they were tested with
(``TESTED``).  With any other, every statement goes through SQLAlchemy's
public execution, as a watched connection's do: the same answers, with
SQLAlchemy's per-execute cost.  ``tests/unit/db/test_direct.py`` compares
both ways on SQLite, PostgreSQL and MariaDB.
"""

import collections
import dataclasses
import functools
import logging
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeAlias
from typing import Unpack

import sqlalchemy as sa
from sqlalchemy.engine.interfaces import DBAPICursor
from sqlalchemy.sql.compiler import SQLCompiler

from common import tested_versions

#: SQLAlchemy's statement log (what ``connection_debug`` turns on).
_SQL_LOG = logging.getLogger("sqlalchemy.engine.Engine")

#: The SQLAlchemy releases whose internals the plans were tested with.
TESTED = tested_versions.ReleaseRange("SQLAlchemy", "2.0.43", "2.2")
#: Whether plans run (the installed SQLAlchemy is in ``TESTED``); if not,
#: every statement goes through SQLAlchemy's own execution.
PLANS = TESTED.holds()

#: A statement's parameters: one set, or a list of several (an
#: ``executemany``, which SQLAlchemy runs).
Params: TypeAlias = Mapping[str, Any] | list[dict[str, Any]]
#: What SQLAlchemy's own execution returns (any columns).
CursorResult: TypeAlias = sa.CursorResult[Unpack[tuple[Any, ...]]]
#: A dialect's processor of a bound value or a result column's value.
_Processor = Callable[[Any], Any]
#: A result row: a named tuple of the statement's columns, of a class made
#: at run time (which a type checker cannot type; callers say the shape
#: they read, ``common.db.api.rows``).
Row: TypeAlias = Any


@dataclasses.dataclass(frozen=True)
class _Plan:
    """A statement compiled for one dialect, and how to run it."""

    compiled: SQLCompiler
    #: Bind parameter name -> the dialect's processor of its value.
    binds: Mapping[str, _Processor]
    #: The bind parameter names in order, when the dialect's parameters are
    #: positional; None when they are named.
    positions: Sequence[str] | None
    #: The result row's class (a named tuple of fields known at run time
    #: only, which a type checker cannot type), or None when the statement
    #: returns no rows.
    row: Any
    #: The dialect's processor of each result column (None: as is), or
    #: None when every column comes as the driver gives it.
    columns: tuple[_Processor | None, ...] | None


def announce() -> None:
    """Log which way statements run (once; at start, on a server database,
    where plans would run)."""
    tested_versions.announce(
        TESTED, PLANS, "prebuilt statements run on the driver's cursor",
        "every statement runs through SQLAlchemy's execution")


@functools.lru_cache(maxsize=None)
def _row_class(keys: tuple[str, ...]) -> type[tuple[Any, ...]]:
    """A named tuple of a result's columns (attribute access, ``_asdict``)."""
    return collections.namedtuple("Row", keys, rename=True)


@functools.lru_cache(maxsize=1024)
def _plan(statement: sa.Executable, dialect: sa.Dialect,
          keys: tuple[str, ...]) -> _Plan | None:
    """The plan of a statement given parameters named ``keys`` (the last
    1024 used are kept; the prebuilt ones are used all the time), or None
    when SQLAlchemy must run it.

    As SQLAlchemy's execution does, it compiles for those keys: an
    ``INSERT`` or ``UPDATE`` without values of its own sets the columns the
    parameters name.
    """
    if not isinstance(statement, sa.sql.ClauseElement):
        return None
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    if not isinstance(compiled, SQLCompiler):  # DDL
        return None
    if (compiled.literal_execute_params or compiled.post_compile_params
            or compiled.insert_prefetch or compiled.update_prefetch):
        return None
    # NOTE(ashlar): a tuple's bind parameter has a processor per element,
    # but only an expanding one (post-compile, above) has a tuple's type.
    binds = {name: process for name, process
             in compiled._bind_processors.items() if callable(process)}
    if len(binds) != len(compiled._bind_processors):
        return None
    columns = compiled._result_columns
    processors = tuple(col[3].dialect_impl(dialect).result_processor(
        dialect, None) for col in columns)
    return _Plan(
        compiled=compiled, binds=binds,
        positions=compiled.positiontup if compiled.positional else None,
        row=_row_class(tuple(col[0] for col in columns)) if columns else None,
        columns=processors if any(processors) else None)


def _parameters(plan: _Plan, dialect: sa.Dialect, given: Mapping[str, Any]
                ) -> Sequence[Any] | Mapping[str, Any]:
    """The DBAPI parameters of one execution, as SQLAlchemy builds them."""
    compiled = plan.compiled
    values = compiled.construct_params(given, escape_names=False)
    for name, process in plan.binds.items():
        if name in values:
            values[name] = process(values[name])
    if plan.positions is not None:
        return dialect.execute_sequence_format(
            [values[name] for name in plan.positions])
    escaped = compiled.escaped_bind_names
    if escaped:
        return {escaped.get(name, name): value
                for name, value in values.items()}
    return values


def _rows(plan: _Plan, cursor: DBAPICursor) -> list[Row]:
    if plan.row is None:
        return []
    make = plan.row._make
    if plan.columns is None:
        return [make(found) for found in cursor.fetchall()]
    return [make(value if process is None else process(value)
                 for process, value in zip(plan.columns, found, strict=True))
            for found in cursor.fetchall()]


class Result:
    """The rows (named tuples) and rowcount of one execution."""

    def __init__(self, rows: list[Row], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def all(self) -> list[Row]:
        return self.rows

    def first(self) -> Row | None:
        return self.rows[0] if self.rows else None

    def one(self) -> Row:
        if len(self.rows) != 1:
            raise (sa.exc.NoResultFound if not self.rows
                   else sa.exc.MultipleResultsFound)(
                "expected one row, got %d" % len(self.rows))
        return self.rows[0]

    def scalars(self) -> list[Any]:
        return [found[0] for found in self.rows]


class Connection:
    """A SQLAlchemy connection whose ``execute`` runs plans (see module)."""

    def __init__(self, connection: sa.engine.Connection) -> None:
        self.connection = connection
        self.dialect = connection.dialect
        dispatch = connection.dispatch
        # NOTE(ashlar): statements someone watches, and every statement
        # outside the tested SQLAlchemy releases, go through SQLAlchemy.
        self._watched = not PLANS or bool(
            dispatch.before_cursor_execute or dispatch.after_cursor_execute
            or connection.engine.echo or _SQL_LOG.isEnabledFor(logging.INFO))

    def execute(self, statement: sa.Executable,
                parameters: Params | None = None,
                execution_options: Mapping[str, Any] | None = None
                ) -> Result | CursorResult:
        parameters = {} if parameters is None else parameters
        if not (self._watched or isinstance(parameters, list)):
            plan = _plan(statement, self.dialect, tuple(sorted(parameters)))
            if plan is not None:
                return self._run(plan, parameters)
        return self.connection.execute(
            statement, parameters, execution_options=execution_options)

    def _run(self, plan: _Plan, given: Mapping[str, Any]) -> Result:
        sql = plan.compiled.string
        params = _parameters(plan, self.dialect, given)
        cursor = self.connection.connection.cursor()
        try:
            cursor.execute(sql, params)
            result = Result(_rows(plan, cursor), cursor.rowcount)
        except self.dialect.loaded_dbapi.Error as exc:
            # SQLAlchemy's handling: the handle_error listeners (oslo.db's
            # translation), disconnect detection; it closes the cursor.
            self.connection._handle_dbapi_exception(exc, sql, params, cursor,
                                                    None)
        cursor.close()
        return result
