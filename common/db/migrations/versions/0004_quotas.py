"""quota limits, project locks, and the pending size and type of volumes

Revision ID: 0004
Revises: 0003
"""

from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'


def _limits(name: str, owner: str) -> None:
    op.create_table(
        name,
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(owner, sa.String(length=255), nullable=False),
        sa.Column('resource', sa.String(length=300), nullable=False),
        sa.Column('hard_limit', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_%s' % name)),
        sa.UniqueConstraint(owner, 'resource',
                            name=op.f('uniq_%s0%s_resource' % (name, owner))))


def upgrade() -> None:
    _limits('quotas', 'project_id')
    _limits('quota_classes', 'class_name')
    op.create_table(
        'project_locks',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint('project_id', name=op.f('pk_project_locks')))
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pending_size', sa.Integer(),
                                      nullable=True))
        batch_op.add_column(sa.Column('pending_type_id', sa.String(length=36),
                                      nullable=True))
