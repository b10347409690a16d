"""the lease of an attachment a compute agent has not completed yet

Revision ID: 0008
Revises: 0007
"""

from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'


def upgrade() -> None:
    with op.batch_alter_table('volume_attachment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_expires_at', sa.DateTime(),
                                      nullable=True))
        batch_op.create_index('ix_volume_attachment_lease_expires_at',
                              ['lease_expires_at'])
