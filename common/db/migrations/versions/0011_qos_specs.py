"""QoS specs and their association with volume types

Revision ID: 0011
Revises: 0010
"""

from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'


def upgrade() -> None:
    op.create_table(
        'qos_specs',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('consumer', sa.String(length=255), nullable=False),
        sa.Column('specs', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_qos_specs')),
        sa.UniqueConstraint('name', name=op.f('uniq_qos_specs0name')))
    with op.batch_alter_table('volume_types', schema=None) as batch_op:
        batch_op.add_column(sa.Column('qos_specs_id', sa.String(length=36),
                                      nullable=True))
        batch_op.create_foreign_key(
            batch_op.f('fk_volume_types_qos_specs_id_qos_specs'),
            'qos_specs', ['qos_specs_id'], ['id'])
