"""Quotas on real processes: 64 concurrent creates against a quota of 10
leave exactly 10 volumes, on PostgreSQL and on MariaDB, through two api
workers; usage stays what exists across deletes, failed creates and a
killed api process.
"""

import concurrent.futures
import signal

import pytest

from deploy.testbed import harness

LIMIT = 10


@pytest.fixture(scope="module", params=["postgresql", "mysql"])
def deployment(request, tmp_path_factory, vhost):
    db_url, drop = harness.database(request.param)
    dep = harness.Deployment(tmp_path_factory.mktemp(request.param), vhost,
                             db_url, api_workers=2, quota_volumes=LIMIT,
                             quota_gigabytes=1000)
    dep.db_sync()
    try:
        yield dep, dep.start_cluster(["node1"])
    finally:
        dep.stop_all()
        drop()


def _usage(client):
    quota_set = client.get("/os-quota-sets/%s?usage=True" % _project(
        client)).json()["quota_set"]
    return quota_set["volumes"]["in_use"], quota_set["gigabytes"]["in_use"]


def _project(client):
    return client.endpoint.rstrip("/").rsplit("/", 1)[-1]


def _volumes(client):
    return client.get("/volumes/detail").json()["volumes"]


def _create(client, size=1):
    return client.post("/volumes", {"volume": {"size": size}})


def _delete_all(client):
    for volume in _volumes(client):
        client.wait_status(volume["id"], "available", timeout=60) \
            if volume["status"] == "creating" else None
        client.delete("/volumes/%s" % volume["id"])
    harness.wait_for(lambda: not _volumes(client), timeout=60,
                     what="every volume to go")


def test_concurrent_creates_never_exceed_the_quota(deployment):
    _dep, client = deployment
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _i: _create(client), range(64)))
    codes = [answer.status_code for answer in answers]
    assert codes.count(202) == LIMIT, codes
    assert codes.count(413) == 64 - LIMIT, codes
    refused = next(a for a in answers if a.status_code == 413).json()
    assert refused["overLimit"]["message"] == (
        "VolumeLimitExceeded: Maximum number of volumes allowed (%d) "
        "exceeded for quota 'volumes'." % LIMIT)
    assert len(_volumes(client)) == LIMIT
    assert _usage(client) == (LIMIT, LIMIT)
    _delete_all(client)
    assert _usage(client) == (0, 0)


def test_usage_is_what_exists_after_deletes_and_failures(deployment):
    dep, client = deployment
    made = [_create(client, 2).json()["volume"]["id"] for _ in range(4)]
    for vid in made:
        client.wait_status(vid, "available")
    for vid in made[:2]:
        assert client.delete("/volumes/%s" % vid).status_code == 202
    harness.wait_for(lambda: _usage(client) == (2, 4), timeout=60,
                     what="usage to follow the deletes")
    # A size no pool could hold is refused at once and counts nothing.
    huge = client.post("/volumes", {"volume": {"size": 99999999}})
    assert huge.status_code == 400, huge.text
    assert "No backend can hold a volume of 99999999 GiB" in huge.text
    assert _usage(client) == (2, 4)
    # A create the scheduler cannot place turns error and still counts
    # (its row exists) until it is deleted: its zone is known (a volume
    # service was in it) but no pool there reports any more.
    dep.start("elsewhere", "services.volume", "node9", extra=(
        "[DEFAULT]\nstorage_availability_zone = elsewhere\n"))
    harness.wait_for(lambda: len(client.pools()) == 2, timeout=60,
                     what="node9's pool")
    dep.stop("elsewhere")
    harness.wait_for(lambda: len(client.pools()) == 1, timeout=60,
                     what="node9's pool to go")
    failed = client.post("/volumes", {"volume": {
        "size": 3, "availability_zone": "elsewhere"}}).json()["volume"]["id"]
    client.wait_status(failed, "error", timeout=60)
    assert _usage(client) == (3, 7)
    client.delete("/volumes/%s" % failed)
    harness.wait_for(lambda: _usage(client) == (2, 4), timeout=60,
                     what="usage without the failed create")
    _delete_all(client)


def test_usage_survives_a_killed_api_during_creates(deployment):
    dep, client = deployment
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        pending = [pool.submit(_create, client) for _ in range(24)]
        dep.stop("api", signal.SIGKILL)
        answers = []
        for future in pending:
            try:
                answers.append(future.result().status_code)
            except Exception:  # noqa: BLE001 - the api died under it
                answers.append(None)
    dep.start("api", "services.api", "api")
    harness.wait_for(lambda: client.get("/volumes").status_code == 200,
                     timeout=60, what="the restarted api")
    rows = _volumes(client)
    assert len(rows) <= LIMIT
    assert answers.count(202) <= len(rows)
    assert _usage(client)[0] == len(rows)
    _delete_all(client)
    assert _usage(client) == (0, 0)
