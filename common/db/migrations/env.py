"""Alembic environment: runs on the engine handed in by ``upgrade()``."""

from alembic import context

from common.db import models


def run_migrations_online() -> None:
    engine = context.config.attributes["engine"]
    with engine.connect() as connection:
        context.configure(connection=connection,
                          target_metadata=models.BASE.metadata,
                          render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()


run_migrations_online()
