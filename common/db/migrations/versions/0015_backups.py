"""backups

Revision ID: 0015
Revises: 0014

Additive: a new table, Cinder's ``backups`` without soft-delete columns
(rows are deleted outright).  A backup outlives its volume, so
``volume_id`` is no foreign key.  ``num_dependent_backups`` counts the
incremental backups whose ``parent_id`` is the row: a parent is deleted
only at 0 (one conditional ``UPDATE``, as ``snapshot_count``).
"""

from alembic import op
import sqlalchemy as sa


revision = '0015'
down_revision = '0014'


def upgrade() -> None:
    op.create_table(
        'backups',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('volume_id', sa.String(length=36), nullable=False),
        sa.Column('snapshot_id', sa.String(length=36), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('availability_zone', sa.String(length=255),
                  nullable=True),
        sa.Column('display_name', sa.String(length=255), nullable=True),
        sa.Column('display_description', sa.String(length=255),
                  nullable=True),
        sa.Column('container', sa.String(length=255), nullable=True),
        sa.Column('service', sa.String(length=255), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=False),
        sa.Column('fail_reason', sa.Text(), nullable=True),
        sa.Column('size', sa.Integer(), nullable=False),
        sa.Column('object_count', sa.Integer(), nullable=True),
        sa.Column('parent_id', sa.String(length=36), nullable=True),
        sa.Column('num_dependent_backups', sa.Integer(), nullable=False,
                  server_default='0'),
        sa.Column('restore_volume_id', sa.String(length=36),
                  nullable=True),
        sa.Column('data_timestamp', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_backups')))
    with op.batch_alter_table('backups', schema=None) as batch_op:
        batch_op.create_index('ix_backups_volume_id', ['volume_id'])
        batch_op.create_index('ix_backups_parent_id', ['parent_id'])
        batch_op.create_index('ix_backups_project_created',
                              ['project_id', 'created_at'])
