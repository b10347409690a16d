"""Database: models, alembic migrations and the per-table-family API."""
