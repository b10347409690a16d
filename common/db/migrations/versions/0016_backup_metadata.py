"""backup metadata

Revision ID: 0016
Revises: 0015

Additive: Cinder's ``backup_metadata`` (3.43), key/value rows of a backup,
removed with it (no soft delete, as ``backups``).  On MySQL/MariaDB a
backup's ``data_timestamp`` keeps microseconds, as a snapshot's
``created_at`` does: an incremental backup of a snapshot takes as parent
the newest backup of data older than the snapshot, compared in the
database (whole seconds took a backup of the same second as older).
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

PRECISE = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                     'mariadb')


revision = '0016'
down_revision = '0015'


def upgrade() -> None:
    if op.get_bind().dialect.name == 'mysql':
        op.alter_column('backups', 'data_timestamp', type_=PRECISE,
                        existing_type=sa.DateTime(), existing_nullable=True)
    op.create_table(
        'backup_metadata',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('backup_id', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(
            ['backup_id'], ['backups.id'],
            name=op.f('fk_backup_metadata_backup_id_backups'),
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_backup_metadata')),
        sa.UniqueConstraint(
            'backup_id', 'key',
            name=op.f('uniq_backup_metadata0backup_id_key')))
