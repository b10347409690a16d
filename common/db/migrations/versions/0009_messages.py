"""user messages: why an asynchronous request failed, for its project

Revision ID: 0009
Revises: 0008
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0009'
down_revision = '0008'


def upgrade() -> None:
    op.create_table(
        'messages',
        sa.Column('created_at', sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), 'mysql', 'mariadb'), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('request_id', sa.String(length=255), nullable=False),
        sa.Column('resource_type', sa.String(length=255), nullable=True),
        sa.Column('resource_uuid', sa.String(length=36), nullable=True),
        sa.Column('event_id', sa.String(length=255), nullable=False),
        sa.Column('action_id', sa.String(length=10), nullable=False),
        sa.Column('detail_id', sa.String(length=10), nullable=False),
        sa.Column('message_level', sa.String(length=255), nullable=False),
        sa.Column('expires_at', sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), 'mysql', 'mariadb'), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_messages')))
    with op.batch_alter_table('messages', schema=None) as batch_op:
        batch_op.create_index('ix_messages_project_created',
                              ['project_id', 'created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_messages_expires_at'),
                              ['expires_at'], unique=False)
