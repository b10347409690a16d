"""volumes created index

Revision ID: 0017
Revises: 0016

Additive: an index on ``volumes (created_at, id)``, the order every volume
list is in.  An admin's ``all_tenants`` page read the whole table and
sorted it for each page (PostgreSQL at 100,000 volumes: a parallel
sequential scan and a top-N sort, about 0.5 s of a loaded machine per
page); with the index it reads the page's rows in order.  Neither column
ever changes, so updates stay as cheap as before.
"""

from alembic import op


revision = '0017'
down_revision = '0016'


def upgrade() -> None:
    op.create_index('ix_volumes_created', 'volumes', ['created_at', 'id'],
                    unique=False)
