"""attachment counters on volumes, transition on attachments

Revision ID: 0002
Revises: 0001
"""

from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'


def upgrade() -> None:
    with op.batch_alter_table('volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attachment_count', sa.Integer(),
                                      server_default='0', nullable=False))
        batch_op.add_column(sa.Column('writer_count', sa.Integer(),
                                      server_default='0', nullable=False))
    with op.batch_alter_table('volume_attachment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('transition', sa.String(length=36),
                                      nullable=True))
        batch_op.create_index(batch_op.f('ix_volume_attachment_transition'),
                              ['transition'], unique=False)
    _count_existing_attachments()


def _count_existing_attachments() -> None:
    """Rows written before the counters existed are counted once here."""
    volumes = sa.table('volumes', sa.column('id', sa.String),
                       sa.column('attachment_count', sa.Integer),
                       sa.column('writer_count', sa.Integer))
    atts = sa.table('volume_attachment', sa.column('volume_id', sa.String),
                    sa.column('attach_mode', sa.String))
    live = sa.select(sa.func.count()).where(
        atts.c.volume_id == volumes.c.id).scalar_subquery()
    writers = sa.select(sa.func.count()).where(
        atts.c.volume_id == volumes.c.id,
        atts.c.attach_mode != 'ro').scalar_subquery()
    op.execute(volumes.update().values(attachment_count=live,
                                       writer_count=writers))
