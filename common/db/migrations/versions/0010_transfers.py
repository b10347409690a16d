"""volume transfers: a volume offered to another project

Revision ID: 0010
Revises: 0009
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0010'
down_revision = '0009'


def upgrade() -> None:
    op.create_table(
        'transfers',
        sa.Column('created_at', sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), 'mysql', 'mariadb'), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('volume_id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('display_name', sa.String(length=255), nullable=True),
        sa.Column('salt', sa.String(length=255), nullable=False),
        sa.Column('crypt_hash', sa.String(length=255), nullable=False),
        sa.Column('no_snapshots', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ['volume_id'], ['volumes.id'],
            name=op.f('fk_transfers_volume_id_volumes')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_transfers')),
        sa.UniqueConstraint('volume_id', name=op.f('uniq_transfers0volume_id')))
    with op.batch_alter_table('transfers', schema=None) as batch_op:
        batch_op.create_index('ix_transfers_project_created',
                              ['project_id', 'created_at'], unique=False)
