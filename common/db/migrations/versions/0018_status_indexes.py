"""status indexes

Revision ID: 0018
Revises: 0017

Additive: indexes on ``volumes (status)`` and ``snapshots (status)``.  The
reads that look for rows in flight filter on a status few rows are in:
a delete's check for a volume being made from its source (``status =
'creating'`` with ``source_volid`` or ``snapshot_id``, on every volume and
snapshot delete), the scheduler's lost and orphaned creates, a volume
node's periodic resume of its volumes and snapshots in transitional
statuses, and its stalled moves.  Each read the whole table (MariaDB at
100,000 volumes: a full scan per delete, which doubled a delete's time);
with the index each reads only the rows in those statuses.
"""

from alembic import op


revision = '0018'
down_revision = '0017'


def upgrade() -> None:
    op.create_index('ix_volumes_status', 'volumes', ['status'], unique=False)
    op.create_index('ix_snapshots_status', 'snapshots', ['status'],
                    unique=False)
