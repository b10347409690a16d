"""Warm-up at start: what a service's first requests would pay otherwise.

A fresh process compiles each prebuilt statement for its dialect and opens
its pools' connections at their first use, and imports oslo.utils'
``strutils`` at the first ``<is>`` extra spec it matches (about 45 ms; see
``extra_specs._as_bool``).  :func:`warm` does that at start, with reads of an id
no row has, so that the first requests after a start are as fast as the
next ones.  :func:`undone` compiles the statements of a writer
transaction's checks (a create's quota check, a delete's source check) the
same way, and rolls their transaction back.
"""

from typing import Callable, Sequence

from oslo_log import log as logging

from common import context as ashlar_context
from common import exception
from common import extra_specs
from common.db.api import engine as db_engine

LOG = logging.getLogger(__name__)

#: An id no row has: reads of it find nothing and change nothing.
NO_SUCH_ID = "00000000-0000-0000-0000-000000000000"


def match_once() -> None:
    """Run the extra-spec matcher on an ``<is>`` spec (its first imports
    ``strutils``)."""
    extra_specs.unsatisfied_specs({"multiattach": True},
                                  {"multiattach": "<is> True"})


#: A read or a step of a warm-up: ``(context, NO_SUCH_ID)``, its answer
#: unused.
Read = Callable[[ashlar_context.RequestContext, str], object]


def warm(reads: Sequence[Read],
         steps: Sequence[Callable[[], object]] = ()) -> None:
    """Run each of ``steps``, then each read of ``(admin context,
    NO_SUCH_ID)``.

    A failure (the database down at start) is logged, never raised: the
    service then serves cold, and its requests meet the failure.
    """
    try:
        for step in steps:
            step()
        ctxt = ashlar_context.get_admin_context()
        for read in reads:
            try:
                read(ctxt, NO_SUCH_ID)
            except exception.NotFound:
                pass
    except Exception:  # noqa: BLE001 - a cold start is no reason to stop
        LOG.warning("Warm-up failed; the first requests will be slower",
                    exc_info=True)


class _Undo(Exception):
    """Ends ``undone``'s transaction with a rollback."""


def undone(steps: Sequence[Read]) -> None:
    """Run each of ``steps`` with ``(context, NO_SUCH_ID)`` in one writer
    transaction (``context.connection``), then roll it back: what they
    wrote (a quota check's lock row of no project) is undone.  A step's
    refusal (not found, over quota) ends that step only: its statements
    ran."""
    try:
        _in_a_transaction(ashlar_context.get_admin_context(), steps)
    except _Undo:
        pass


@db_engine.writer.connection
def _in_a_transaction(context: ashlar_context.RequestContext,
                      steps: Sequence[Read]) -> None:
    for step in steps:
        try:
            step(context, NO_SUCH_ID)
        except exception.AshlarException:
            pass
    raise _Undo
