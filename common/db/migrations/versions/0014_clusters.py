"""clusters of volume services

Revision ID: 0014
Revises: 0013

Additive: a cluster's members name it in ``services.cluster_name``; a
volume placed on a cluster names it in ``volumes.cluster_name`` (3.61's
admin view); ``clusters`` holds each cluster's enabled state, as Cinder's.
Services and volumes of the previous release have no cluster (NULL).
"""

from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0013'


def upgrade() -> None:
    with op.batch_alter_table('services', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cluster_name', sa.String(length=255),
                                      nullable=True))
        batch_op.create_index('ix_services_cluster_name', ['cluster_name'])
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cluster_name', sa.String(length=255),
                                      nullable=True))
    op.create_table(
        'clusters',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('binary', sa.String(length=255), nullable=False),
        sa.Column('disabled', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_clusters')),
        sa.UniqueConstraint('name', 'binary',
                            name=op.f('uniq_clusters0name_binary')))
