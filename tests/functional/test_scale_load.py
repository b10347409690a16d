"""The scale rig's loader (``benchmarks/scale_load.py``) at 1% scale: the
rows it writes straight into the tables are valid for the real api, which
lists, counts and pages them, on PostgreSQL and MariaDB."""

import pytest
import requests

from benchmarks import scale_load
from deploy.testbed import harness


@pytest.fixture(params=["postgresql", "mysql"])
def loaded(request, tmp_path, vhost):
    db_url, drop = harness.database(request.param)
    dep = harness.Deployment(tmp_path, vhost, db_url, service_down_time=60)
    try:
        dep.db_sync()
        counts = scale_load.Counts().scaled(0.01, services=10)
        rows = scale_load.load(db_url, counts, samples=5)
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: _answers(client), timeout=60,
                         what="the api")
        yield client, rows
    finally:
        dep.stop_all()
        drop()


def _answers(client: harness.Client) -> bool:
    try:
        return client.get("/volumes").status_code == 200
    except requests.ConnectionError:
        return False


def _page_all(client: harness.Client, params: dict, limit: int) -> list:
    listed, marker = [], None
    while True:
        page = client.get("/volumes/detail", params=dict(
            params, limit=limit, **({"marker": marker} if marker else {})))
        assert page.status_code == 200, page.text
        volumes = page.json()["volumes"]
        listed += volumes
        if len(volumes) < limit:
            return listed
        marker = volumes[-1]["id"]


def test_loaded_rows_are_listed_counted_and_paged(loaded):
    client, rows = loaded
    counts = rows.counts
    every = _page_all(client, {"all_tenants": 1}, 300)
    assert len({v["id"] for v in every}) == len(every) == counts.volumes
    assert sum(v["status"] == "in-use" for v in every) == counts.attachments
    counted = client.get("/volumes/detail", params={
        "all_tenants": 1, "with_count": "true", "limit": 1}).json()
    assert counted["count"] == counts.volumes
    assert len(counted["volumes"]) == 1
    project, volume_id = rows.attached[0]
    base = client.endpoint.rsplit("/", 1)[0]
    own = harness.Client("%s/%s" % (base, project))
    mine = own.get("/volumes/detail", params={"with_count": "true"}).json()
    assert mine["count"] == len(mine["volumes"]) == \
        counts.volumes // counts.projects
    shown = own.get("/volumes/%s" % volume_id).json()["volume"]
    assert shown["status"] == "in-use"
    assert [a["host_name"] for a in shown["attachments"]] == [
        "compute-0000"]
    listed = own.get("/attachments", params={"volume_id": volume_id}).json()
    assert [a["volume_id"] for a in listed["attachments"]] == [volume_id]
    snaps = client.get("/snapshots", params={"all_tenants": 1}).json()
    assert len(snaps["snapshots"]) == counts.snapshots
