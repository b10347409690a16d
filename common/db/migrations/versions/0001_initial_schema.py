"""initial schema

Revision ID: 0001
Revises: 
"""

import datetime
import uuid

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None


def upgrade() -> None:
    op.create_table('services',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('binary', sa.String(length=255), nullable=False),
    sa.Column('topic', sa.String(length=255), nullable=False),
    sa.Column('availability_zone', sa.String(length=255), nullable=False),
    sa.Column('disabled', sa.Boolean(), nullable=False),
    sa.Column('disabled_reason', sa.String(length=255), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_services')),
    sa.UniqueConstraint('host', 'binary', name=op.f('uniq_services0host_binary')),
    sa.UniqueConstraint('uuid', name=op.f('uniq_services0uuid'))
    )
    op.create_table('volume_types',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('is_public', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volume_types')),
    sa.UniqueConstraint('name', name=op.f('uniq_volume_types0name'))
    )
    op.create_table('volume_type_extra_specs',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('value', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], name=op.f('fk_volume_type_extra_specs_volume_type_id_volume_types')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volume_type_extra_specs')),
    sa.UniqueConstraint('volume_type_id', 'key', name=op.f('uniq_volume_type_extra_specs0volume_type_id_key'))
    )
    op.create_table('volume_type_projects',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], name=op.f('fk_volume_type_projects_volume_type_id_volume_types')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volume_type_projects')),
    sa.UniqueConstraint('volume_type_id', 'project_id', name=op.f('uniq_volume_type_projects0volume_type_id_project_id'))
    )
    op.create_table('volumes',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('display_name', sa.String(length=255), nullable=True),
    sa.Column('display_description', sa.String(length=255), nullable=True),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=255), nullable=False),
    sa.Column('previous_status', sa.String(length=255), nullable=True),
    sa.Column('attach_status', sa.String(length=255), nullable=False),
    sa.Column('migration_status', sa.String(length=255), nullable=True),
    sa.Column('host', sa.String(length=255), nullable=True),
    sa.Column('availability_zone', sa.String(length=255), nullable=True),
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('multiattach', sa.Boolean(), nullable=False),
    sa.Column('bootable', sa.Boolean(), nullable=False),
    sa.Column('readonly', sa.Boolean(), nullable=False),
    sa.Column('encrypted', sa.Boolean(), nullable=False),
    sa.Column('provider_location', sa.String(length=255), nullable=True),
    sa.Column('service_uuid', sa.String(length=36), nullable=True),
    sa.Column('error_reason', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], name=op.f('fk_volumes_volume_type_id_volume_types')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volumes'))
    )
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.create_index('ix_volumes_project_created', ['project_id', 'created_at'], unique=False)

    op.create_table('volume_attachment',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('volume_id', sa.String(length=36), nullable=False),
    sa.Column('instance_uuid', sa.String(length=36), nullable=True),
    sa.Column('attached_host', sa.String(length=255), nullable=True),
    sa.Column('mountpoint', sa.String(length=255), nullable=True),
    sa.Column('attach_status', sa.String(length=255), nullable=False),
    sa.Column('attach_mode', sa.String(length=36), nullable=False),
    sa.Column('connection_info', sa.Text(), nullable=True),
    sa.Column('attach_time', sa.DateTime(), nullable=True),
    sa.Column('detach_time', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volumes.id'], name=op.f('fk_volume_attachment_volume_id_volumes')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volume_attachment'))
    )
    with op.batch_alter_table('volume_attachment', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_attachment_volume_id'), ['volume_id'], unique=False)

    op.create_table('volume_metadata',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('volume_id', sa.String(length=36), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('value', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volumes.id'], name=op.f('fk_volume_metadata_volume_id_volumes')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_volume_metadata')),
    sa.UniqueConstraint('volume_id', 'key', name=op.f('uniq_volume_metadata0volume_id_key'))
    )
    op.create_table('attachment_specs',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('attachment_id', sa.String(length=36), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('value', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['attachment_id'], ['volume_attachment.id'], name=op.f('fk_attachment_specs_attachment_id_volume_attachment')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_attachment_specs')),
    sa.UniqueConstraint('attachment_id', 'key', name=op.f('uniq_attachment_specs0attachment_id_key'))
    )
    _create_default_type()


def _create_default_type() -> None:
    """Every deployment starts with Cinder's default type, ``__DEFAULT__``."""
    table = sa.table("volume_types", sa.column("id", sa.String),
                     sa.column("name", sa.String),
                     sa.column("description", sa.String),
                     sa.column("is_public", sa.Boolean),
                     sa.column("created_at", sa.DateTime))
    op.bulk_insert(table, [{
        "id": str(uuid.uuid4()), "name": "__DEFAULT__",
        "description": "Default Volume Type", "is_public": True,
        "created_at": datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)}])
