"""Migrations walk up from empty on every database, and match the models."""

import pytest
import sqlalchemy as sa
from alembic import autogenerate
from alembic import migration as alembic_migration

from common.db import migrations
from common.db import models
from deploy.testbed import harness


@pytest.fixture(params=["sqlite", "postgresql", "mysql", "mysqldb"])
def engine(request):
    url, drop = harness.database(request.param)
    eng = sa.create_engine(url)
    yield eng
    eng.dispose()
    drop()


def _diff(eng):
    with eng.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={"compare_type": True})
        return autogenerate.compare_metadata(context, models.BASE.metadata)


def test_walk_up_twice_and_models_match(engine):
    assert migrations.version(engine) is None
    migrations.upgrade(engine)
    head = migrations.version(engine)
    assert head is not None
    migrations.upgrade(engine)  # a second run changes nothing
    assert migrations.version(engine) == head
    assert _diff(engine) == []
    with engine.connect() as conn:
        names = [row[0] for row in conn.execute(
            sa.text("SELECT name FROM volume_types"))]
    assert names == ["__DEFAULT__"]
