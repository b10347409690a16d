"""attachment_specs rows go with their attachment (ON DELETE CASCADE)

Revision ID: 0003
Revises: 0002
"""

from alembic import op


revision = '0003'
down_revision = '0002'

FK = 'fk_attachment_specs_attachment_id_volume_attachment'


def upgrade() -> None:
    with op.batch_alter_table('attachment_specs', schema=None) as batch_op:
        batch_op.drop_constraint(FK, type_='foreignkey')
        batch_op.create_foreign_key(FK, 'volume_attachment', ['attachment_id'],
                                    ['id'], ondelete='CASCADE')
