"""Volume rows read and written with prebuilt Core statements: what a read
brings, in how many statements, and what a removal takes along."""

import uuid

import pytest
import sqlalchemy as sa

from common import exception
from common.db import models
from common.db.api import engine as db_engine
from common.db.api import execution
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database


def test_a_created_volume_reads_back_with_its_type_and_metadata():
    vtype = fixtures.make_type("gold", {"multiattach": "<is> True"})
    made = volumes_db.volume_create(fixtures.admin(), {
            "id": "v1", "project_id": "p1", "user_id": "u", "size": 2,
            "status": "creating", "attach_status": "detached",
            "volume_type_id": vtype.id}, {"a": "1", "b": "2"})
    for row in (made, volumes_db.volume_get(fixtures.admin(), "v1")):
        assert isinstance(row, execution.Record)
        assert (row.id, row.size, row.status) == ("v1", 2, "creating")
        assert row.volume_type.name == "gold"
        assert volumes_db.metadata_of(row) == {"a": "1", "b": "2"}
        assert row.attachments == []
        assert (row.attachment_count, row.multiattach) == (0, False)
        assert row.created_at is not None
        assert not hasattr(row.volume_type, "extra_specs")
    _vtype, specs = types_db.type_resolve(fixtures.admin(),
                                          made.volume_type_id)
    assert specs == {"multiattach": "<is> True"}


def test_a_volume_read_is_one_statement_with_its_metadata():
    """Metadata comes joined to the volume's row (a result row per item)."""
    vtype = fixtures.make_type("silver", {"k": "v"})
    volumes_db.volume_create(fixtures.admin(), {
        "id": "v2", "project_id": "p1", "user_id": "u", "size": 1,
        "status": "available", "attach_status": "detached",
        "volume_type_id": vtype.id}, {"x": "1", "y": "2", "z": "3"})
    seen = []
    engine = execution.autocommit_pool() or db_engine.get_engine()

    def spy(_conn, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)
    sa.event.listen(engine, "before_cursor_execute", spy)
    try:
        assert len(volumes_db.volume_get(
            fixtures.admin(), "v2").volume_metadata) == 3
        assert len(seen) == 1 and "volume_metadata" in seen[0]
        assert "volume_type_extra_specs" not in seen[0]
    finally:
        sa.event.remove(engine, "before_cursor_execute", spy)


def test_removing_a_volume_removes_its_metadata_and_its_transfer():
    vol = volumes_db.volume_create(fixtures.admin(), {
        "id": "v3", "project_id": "p1", "user_id": "u", "size": 1,
        "status": "available", "attach_status": "detached",
        "volume_type_id": fixtures.make_type().id}, {"a": "1"})
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.insert(models.Transfer.__table__).values(
            id="t1", volume_id=vol.id, project_id="p1", display_name="x",
            salt="s", crypt_hash="h"))
    volumes_db.volume_destroy(fixtures.admin(), vol.id)
    with db_engine.get_engine().connect() as conn:
        for table in (models.Volume, models.VolumeMetadata, models.Transfer):
            assert conn.execute(sa.select(sa.func.count()).select_from(
                table)).scalar() == 0


def test_a_count_is_one_statement_that_reads_no_volume_row():
    """``with_count`` counts in the database, with the list's filters."""
    for project, status in (("p1", "available"), ("p1", "available"),
                            ("p1", "error"), ("p2", "available")):
        fixtures.make_volume(project=project, status=status)
    admin = fixtures.admin()
    with fixtures.selects() as seen:
        counted = volumes_db.volume_count(admin, project_id="p1",
                                          filters={"status": "available"})
    assert counted == 2 == len(volumes_db.volume_list(
        admin, project_id="p1", filters={"status": "available"}))
    assert len(seen) == 1 and "count(" in seen[0].lower()
    assert volumes_db.volume_count(admin) == 4
    assert volumes_db.volume_count(admin, project_id="p2") == 1


def test_a_backends_unfinished_volumes_come_in_one_statement():
    """The periodic resume reads its own backend's rows in the resumed
    statuses once, not every backend's rows once per status."""
    made = {(host, status): fixtures.make_volume(host=host,
                                                 status=status).id
            for host in ("n1@b", "n1@b#p2", "n1@bb#p", "n2@b#p")
            for status in ("creating", "deleting", "available")}
    with fixtures.selects() as seen:
        rows = volumes_db.volumes_of_backend(fixtures.admin(), "n1@b",
                                             ("creating", "deleting"))
    assert sorted(row.id for row in rows) == sorted(
        made[host, status] for host in ("n1@b", "n1@b#p2")
        for status in ("creating", "deleting"))
    assert len(seen) <= 2  # the rows, and their attachments (selectin)


@pytest.mark.parametrize("read", [volumes_db.volume_list,
                                  volumes_db.volume_page])
def test_an_all_tenants_page_reads_the_created_index(read):
    """Every project's volumes, newest first: the page comes from the
    ``(created_at, id)`` index, not a sort of the whole table."""
    fixtures.make_volume()
    engine = db_engine.get_engine()
    with fixtures.selects() as selects:
        read(fixtures.admin(), limit=10)
    seen = [statement for statement in selects if "FROM volumes" in statement]
    assert "ORDER BY volumes.created_at DESC, volumes.id DESC" in seen[0]
    if engine.dialect.name != "sqlite":
        # NOTE: a server's plan for a table of one row says nothing of
        # 100,000 (benchmarks/scale_rig.py measures those): the index is
        # there, in the list's order.
        indexes = {index["name"]: index["column_names"]
                   for index in sa.inspect(engine).get_indexes("volumes")}
        assert indexes.get("ix_volumes_created") == ["created_at", "id"]
        return
    start = seen[0].index("(SELECT") + 1 if "(SELECT" in seen[0] else 0
    inner = seen[0][start:seen[0].index("LIMIT")]
    with engine.connect() as conn:
        plan = " ".join(str(row) for row in conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + inner).all())
    assert "ix_volumes_created" in plan, plan


def _attach(volume_id: str, status: str) -> None:
    """An attachment row of ``volume_id`` in ``status``, and its counter."""
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.insert(models.VolumeAttachment.__table__).values(
            id=str(uuid.uuid4()), volume_id=volume_id, attach_status=status,
            instance_uuid="i-" + volume_id[:8], attached_host="h1",
            mountpoint="/dev/vdb", attach_mode="rw"))
        conn.execute(sa.update(models.Volume.__table__).where(
            models.Volume.__table__.c.id == volume_id).values(
            attachment_count=models.Volume.__table__.c.attachment_count + 1))


def _page_volumes() -> list[str]:
    """Three volumes: one with metadata and a type of its own, one with
    an attached and a reserved attachment, one bare; their ids."""
    gold = fixtures.make_type("gold")
    first = volumes_db.volume_create(fixtures.admin(), {
        "id": str(uuid.uuid4()), "project_id": "p1", "user_id": "u",
        "size": 3, "status": "available", "attach_status": "detached",
        "volume_type_id": gold.id}, {"a": "1", "b": "2"}).id
    second = fixtures.make_volume(status="in-use").id
    _attach(second, "attached")
    _attach(second, "reserved")
    return [first, second, fixtures.make_volume(project="p2").id]


def test_a_page_reads_what_the_views_show_in_three_statements():
    """One statement for the page, one for its metadata, one for its
    attached attachments; the rows as ``volume_list`` has them."""
    made = _page_volumes()
    with fixtures.selects() as seen:
        page = volumes_db.volume_page(fixtures.admin(), limit=10)
    assert len(seen) == 3
    orm_rows = volumes_db.volume_list(fixtures.admin(), limit=10)
    assert [row.id for row in page] == [row.id for row in orm_rows]
    assert sorted(row.id for row in page) == sorted(made)
    for row, orm_row in zip(page, orm_rows, strict=True):
        for column in volumes_db.ListedVolume._fields[:-3]:
            assert getattr(row, column) == getattr(orm_row, column)
        assert row.volume_type.name == orm_row.volume_type.name
        assert volumes_db.metadata_of(row) == volumes_db.metadata_of(orm_row)
        assert [att.id for att in row.attachments] == [
            att.id for att in orm_row.attachments
            if att.attach_status == "attached"]
    assert sum(len(row.attachments) for row in page) == 1


def test_a_page_of_a_project_after_a_marker():
    made = _page_volumes()
    mine = volumes_db.volume_page(fixtures.admin(), project_id="p1")
    assert sorted(row.id for row in mine) == sorted(made[:2])
    after = volumes_db.volume_page(fixtures.admin(), project_id="p1",
                                   marker=mine[0].id)
    assert [row.id for row in after] == [mine[1].id]


@pytest.mark.parametrize("project, filters", [
    (None, {}), ("p1", {}), (None, {"status": "in-use"}),
    ("p1", {"status": "available", "size": 3}), ("p2", {"bootable": False})])
def test_a_first_page_in_the_default_order_is_the_orms_page(project,
                                                            filters):
    """The prebuilt first page (no marker, the default order) answers what
    the ORM's page does, for each shape, and its count agrees."""
    _page_volumes()
    for _ in range(3):
        fixtures.make_volume(project="p1")
    admin = fixtures.admin()
    for limit in (1, 2, 10):
        with fixtures.selects() as seen:
            prebuilt = volumes_db.first_page(admin, project, filters, limit)
        assert len(seen) <= 3
        orm_page = volumes_db._page(admin, project, filters, limit, None,
                                    None, None, None)
        assert prebuilt == orm_page
        assert len(prebuilt) == min(limit, len(volumes_db.volume_list(
            admin, project_id=project, filters=filters)))
    assert prebuilt, "the shape matches no volume: the test says nothing"
    assert volumes_db.volume_count(admin, project, filters) == len(
        volumes_db.volume_list(admin, project_id=project, filters=filters))


def test_only_a_first_page_in_the_default_order_is_prebuilt(monkeypatch):
    """A marker, an offset or another order goes through the ORM."""
    _page_volumes()
    admin = fixtures.admin()
    newest = volumes_db.volume_page(admin, limit=1)[0].id
    prebuilt = []
    monkeypatch.setattr(volumes_db, "first_page",
                        lambda *args: prebuilt.append(args) or [])
    assert len(volumes_db.volume_page(admin, limit=10, marker=newest)) == 2
    assert len(volumes_db.volume_page(admin, limit=10, offset=1)) == 2
    assert len(volumes_db.volume_page(admin, limit=10, sort_keys=["size"],
                                      sort_dirs=["asc"])) == 3
    assert prebuilt == []
    volumes_db.volume_page(admin, limit=10, sort_keys=["created_at"],
                           sort_dirs=["desc"])
    assert prebuilt == [(admin, None, {}, 10)]


def test_a_shown_volume_is_its_page_row_in_at_most_two_statements():
    """``volume_shown`` reads what a page reads of the volume: its type,
    its metadata and its attached attachments, fewer columns than
    ``volume_get``."""
    made = _page_volumes()
    admin = fixtures.admin()
    page = {row.id: row for row in volumes_db.volume_page(admin, limit=10)}
    for volume_id in made:
        with fixtures.selects() as seen:
            shown = volumes_db.volume_shown(admin, volume_id)
        assert len(seen) == (2 if page[volume_id].attachment_count else 1)
        assert shown.volume_type == page[volume_id].volume_type
        assert list(shown.volume_metadata) == list(
            page[volume_id].volume_metadata)
        assert list(shown.attachments) == list(page[volume_id].attachments)
        assert shown[:-3] == page[volume_id][:-3]
    assert volumes_db.metadata_of(volumes_db.volume_shown(
        admin, made[0])) == {"a": "1", "b": "2"}
    with pytest.raises(exception.VolumeNotFound):
        volumes_db.volume_shown(admin, "no-such-volume")
