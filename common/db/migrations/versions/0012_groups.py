"""generic volume groups, group types and group snapshots

Revision ID: 0012
Revises: 0011
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0012'
down_revision = '0011'

PRECISE = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                     'mariadb')


def upgrade() -> None:
    op.create_table(
        'group_types',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=True),
        sa.Column('is_public', sa.Boolean(), nullable=False),
        sa.Column('group_specs', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_group_types')),
        sa.UniqueConstraint('name', name=op.f('uniq_group_types0name')))
    op.create_table(
        'groups',
        sa.Column('created_at', PRECISE, nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('description', sa.String(length=255), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=False),
        sa.Column('availability_zone', sa.String(length=255), nullable=True),
        sa.Column('group_type_id', sa.String(length=36), nullable=False),
        sa.Column('group_snapshot_id', sa.String(length=36), nullable=True),
        sa.Column('source_group_id', sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(
            ['group_type_id'], ['group_types.id'],
            name=op.f('fk_groups_group_type_id_group_types')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_groups')))
    op.create_index('ix_groups_project_created', 'groups',
                    ['project_id', 'created_at'], unique=False)
    op.create_table(
        'group_volume_types',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('group_id', sa.String(length=36), nullable=False),
        sa.Column('volume_type_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ['group_id'], ['groups.id'], ondelete='CASCADE',
            name=op.f('fk_group_volume_types_group_id_groups')),
        sa.ForeignKeyConstraint(
            ['volume_type_id'], ['volume_types.id'],
            name=op.f('fk_group_volume_types_volume_type_id_volume_types')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_group_volume_types')),
        sa.UniqueConstraint(
            'group_id', 'volume_type_id',
            name=op.f('uniq_group_volume_types0group_id_volume_type_id')))
    op.create_table(
        'group_snapshots',
        sa.Column('created_at', PRECISE, nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('group_id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('description', sa.String(length=255), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=False),
        sa.Column('group_type_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ['group_id'], ['groups.id'],
            name=op.f('fk_group_snapshots_group_id_groups')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_group_snapshots')))
    op.create_index('ix_group_snapshots_project_created', 'group_snapshots',
                    ['project_id', 'created_at'], unique=False)
    op.create_index(op.f('ix_group_snapshots_group_id'), 'group_snapshots',
                    ['group_id'], unique=False)
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_id', sa.String(length=36),
                                      nullable=True))
        batch_op.create_index(batch_op.f('ix_volumes_group_id'), ['group_id'],
                              unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_volumes_group_id_groups'),
                                    'groups', ['group_id'], ['id'])
    with op.batch_alter_table('snapshots', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_snapshot_id',
                                      sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_snapshots_group_snapshot_id'),
                              ['group_snapshot_id'], unique=False)
        batch_op.create_foreign_key(
            batch_op.f('fk_snapshots_group_snapshot_id_group_snapshots'),
            'group_snapshots', ['group_snapshot_id'], ['id'])
