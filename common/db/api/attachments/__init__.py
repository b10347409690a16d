"""Attachments, their connector rows, and the volume status they drive.

Import the family as ``from common.db.api import attachments as
attachments_db``: this package exposes its public names, which live in

- ``reads``: one row, a row with its volume, the volume alone, what a
  disconnect needs (one statement each), and the ORM lists;
- ``reserve``: the reservation (guard, new row, connector rows);
- ``change``: compare-and-swap of a row (``Change``, ``Lost``), removal
  included;
- ``volume_status``: the volume's statuses and counters as the rows drive
  them (steps 2-3 below), and the end of a non-attach status;
- ``connectors``: the connector rows (``attachment_specs``);
- ``statements``: the prebuilt statements all of them run.

Every function that changes an attachment runs prebuilt Core statements on
a connection (no ORM session: these are the hot paths), on PostgreSQL and
MariaDB as plans on the driver's cursor (``common.db.api.direct``).  A
change of the row alone (its ``attach_status``, connector and mode stay, as
when the volume service records a connection or a delete begins) is one
compare-and-swap statement of its own
(``common.db.api.execution.single_statement``).  Any other runs one short
transaction (``common.db.api.execution.transaction``) that

0. may first read the volume without a lock and hand it to the caller's
   ``decide`` (policy, state machine), so that reading, deciding and
   writing cost one transaction (``attachment_reserve``); what was decided
   is then guarded by step 1 (``attachment_change`` reads the row and its
   volume in a statement of its own before it);
1. changes the attachment row with a compare-and-swap on its
   ``attach_status``/``transition`` (or removes it); this locks that row
   only;
2. when the row's ``attach_status`` changed (or it came or went), locks the
   volume row, so all status changes of one volume's attachments are
   serialised; a change that keeps ``attach_status`` never touches the
   volume.  A change that can only raise the volume's statuses
   (``common.states.raises``: a new row, ``attaching`` -> ``attached``,
   ...) sets them in that same ``UPDATE``, from the volume's own
   ``attach_status``, and skips step 3;
3. otherwise, with an ``UPDATE`` of its counters when they change, else a
   ``SELECT ... FOR UPDATE``, either of them returning the volume's
   statuses and attachment count, recomputes ``status``/``attach_status``
   from the live rows (``common.states.volume_status``) and
   compare-and-swaps them when they change.  When the counter says the row
   just written is the volume's only one (or there is none left), its
   status is the whole input and nothing is read.

The volume row is locked last, so it is held only for steps 2-3 and the
commit: every change of the volume's attachments queues on that one lock,
and what it covers is what bounds their rate.  Rows are always locked
before the volume, never after (step 3 reads without a lock), so the order
cannot deadlock; the read sees every change committed under the lock
because it runs in its own snapshot (PostgreSQL's and, set by
``common.db.api.dialects``, MySQL's READ COMMITTED) or with the writers
serialised (SQLite runs every transaction ``BEGIN IMMEDIATE``).

The reservation locks the volume first instead: its step 2 decides (see
``reserve``).  On PostgreSQL (``common.db.api.execution.
data_modifying_with``) the two changes every attach makes are one
statement each, a data-modifying ``WITH`` run on its own: the
reservation's guard with the new row and its connector rows after it
(``reserve._admitting``; the read of step 0 is a statement before it), and
a change that can only raise the volume's statuses, steps 1-2
(``change._raising``, as ``os-complete``).  The locks are taken in the
same order; the volume's is held until the commit with no round trip to
the client in between, and the round trips of ``BEGIN`` and ``COMMIT`` go.
"""

from common.db.api.attachments.change import attachment_cas
from common.db.api.attachments.change import attachment_change
from common.db.api.attachments.change import attachment_destroy
from common.db.api.attachments.change import attachment_record
from common.db.api.attachments.change import Change
from common.db.api.attachments.change import Lost
from common.db.api.attachments.connectors import connection_info_of
from common.db.api.attachments.connectors import connector
from common.db.api.attachments.connectors import replace_connector
from common.db.api.attachments.reads import attachment_get
from common.db.api.attachments.reads import attachment_list
from common.db.api.attachments.reads import attachment_with_volume
from common.db.api.attachments.reads import attachments_in_transition
from common.db.api.attachments.reads import attachments_of_volume
from common.db.api.attachments.reads import attachments_unconfirmed
from common.db.api.attachments.reads import attachments_with_lapsed_lease
from common.db.api.attachments.reads import connection_holders
from common.db.api.attachments.reads import disconnect_state
from common.db.api.attachments.reads import volume_brief
from common.db.api.attachments.reserve import attachment_reserve
from common.db.api.attachments.reserve import Reservation
from common.db.api.attachments.reserve import volume_and_specs
from common.db.api.attachments.volume_status import volume_leave_status

__all__ = [
    "Change", "Lost", "Reservation", "attachment_cas", "attachment_change",
    "attachment_destroy", "attachment_get", "attachment_list",
    "attachment_record", "attachment_reserve", "attachment_with_volume",
    "attachments_in_transition", "attachments_of_volume",
    "attachments_with_lapsed_lease", "attachments_unconfirmed",
    "connection_holders",
    "connection_info_of", "connector", "disconnect_state",
    "replace_connector", "volume_and_specs", "volume_brief",
    "volume_leave_status",
]
