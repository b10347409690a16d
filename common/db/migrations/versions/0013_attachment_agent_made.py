"""who made an attachment: a compute agent for itself, or its project

Rows of earlier releases have NULL, which reads as made over REST (by the
volume's project, or an admin): before this column, an agent's rows were
not told apart, and a NULL keeps every takeover that worked before the
upgrade working (docs/operations.md, the rolling upgrade).

Revision ID: 0013
Revises: 0012
"""

from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'


def upgrade() -> None:
    with op.batch_alter_table('volume_attachment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('agent_made', sa.Boolean(),
                                      nullable=True))
