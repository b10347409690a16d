"""snapshots and their metadata; the sources and snapshot count of volumes

Revision ID: 0005
Revises: 0004
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0005'
down_revision = '0004'


def upgrade() -> None:
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('snapshot_id', sa.String(length=36),
                                      nullable=True))
        batch_op.add_column(sa.Column('source_volid', sa.String(length=36),
                                      nullable=True))
        batch_op.add_column(sa.Column('snapshot_count', sa.Integer(),
                                      server_default='0', nullable=False))
    op.create_table(
        'snapshots',
        sa.Column('created_at', sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), 'mysql', 'mariadb'), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('volume_id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=False),
        sa.Column('progress', sa.String(length=255), nullable=True),
        sa.Column('volume_size', sa.Integer(), nullable=False),
        sa.Column('display_name', sa.String(length=255), nullable=True),
        sa.Column('display_description', sa.String(length=255),
                  nullable=True),
        sa.Column('provider_location', sa.String(length=255), nullable=True),
        sa.Column('error_reason', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ['volume_id'], ['volumes.id'],
            name=op.f('fk_snapshots_volume_id_volumes')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshots')))
    with op.batch_alter_table('snapshots', schema=None) as batch_op:
        batch_op.create_index('ix_snapshots_project_created',
                              ['project_id', 'created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_volume_id'),
                              ['volume_id'], unique=False)
    op.create_table(
        'snapshot_metadata',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('snapshot_id', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(
            ['snapshot_id'], ['snapshots.id'],
            name=op.f('fk_snapshot_metadata_snapshot_id_snapshots'),
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshot_metadata')),
        sa.UniqueConstraint(
            'snapshot_id', 'key',
            name=op.f('uniq_snapshot_metadata0snapshot_id_key')))
