"""fencing of attachments: when, what the backend revoked, the host's clients

Revision ID: 0006
Revises: 0005
"""

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'


def upgrade() -> None:
    with op.batch_alter_table('volume_attachment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('fenced_at', sa.DateTime(),
                                      nullable=True))
        batch_op.add_column(sa.Column('fenced_clients', sa.Text(),
                                      nullable=True))
        batch_op.add_column(sa.Column('clients', sa.Text(), nullable=True))
