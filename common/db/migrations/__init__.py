"""Alembic migrations: ``upgrade()`` and ``version()`` for ashlar-manage."""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from sqlalchemy.engine import Engine

_HERE = os.path.dirname(__file__)


def _config(engine: Engine) -> alembic_config.Config:
    config = alembic_config.Config()
    config.set_main_option("script_location", _HERE)
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Walk the schema up to ``revision``; running it again is a no-op."""
    alembic_command.upgrade(_config(engine), revision)


def version(engine: Engine) -> str | None:
    """Return the schema revision the database is at (None when empty)."""
    with engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn).get_current_revision()
