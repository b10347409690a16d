"""Capability reports and the API's early 400, on real processes.

One deployment per database (PostgreSQL, MariaDB) on a fresh RabbitMQ
vhost: a scheduler, an API with three gunicorn workers, a volume node whose
file backend writes qcow2 (never multiattach) and, in some steps, a node
whose raw files are multiattach capable.  The tests run in order; each says
what it expects to find and what it leaves.

Every multiattach create goes over a new connection, so gunicorn spreads
them over its workers and "all answers agree" covers every worker.
"""

import re
import signal
import time

import pytest
import requests
import sqlalchemy as sa

from deploy.testbed import harness

POLLING = 2                 # backend_stats_polling_interval: window 4 s
DOWN_TIME = 5               # service_down_time
WORKERS = 3
MA_SPECS = {"multiattach": "<is> True"}
#: No room ever for a 1 GiB volume: with everything reserved, a thin pool
#: keeps (total - floor(total)) * ratio GiB (Cinder 29's arithmetic), under
#: 1 GiB at a ratio of 1.
PLAIN_BACKEND = ("[file]\nvolume_driver = file\nfile_volume_format = qcow2\n"
                 "reserved_percentage = 100\nmax_over_subscription_ratio = 1\n")
#: Room for exactly one 1 GiB volume: 1 GiB at a ratio of 1.
TINY_BACKEND = ("[fake]\nvolume_driver = fake\nfake_total_capacity_gb = 1\n"
                "fake_multiattach = false\nmax_over_subscription_ratio = 1\n")
SHARED_BACKEND = "[file]\nvolume_driver = file\nfile_volume_format = raw\n"
#: qcow2 files (never multiattach) in an availability zone of their own.
WEST_BACKEND = ("[DEFAULT]\nstorage_availability_zone = west\n"
                "[file]\nvolume_driver = file\nfile_volume_format = qcow2\n")
#: Pool keys the issue asks every report to carry.
POOL_KEYS = {"pool_name", "total_capacity_gb", "free_capacity_gb",
             "allocated_capacity_gb", "provisioned_capacity_gb",
             "reserved_percentage", "max_over_subscription_ratio",
             "thin_provisioning_support", "thick_provisioning_support",
             "multiattach", "volume_backend_name", "storage_protocol",
             "vendor_name", "driver_version", "backend_state"}


class Cluster:
    def __init__(self, dep, db_url):
        self.dep = dep
        self.client = harness.Client(dep.endpoint)
        self.engine = sa.create_engine(db_url)
        self.headers = dict(self.client.session.headers)
        self.ma_type = None

    def start_api(self):
        self.dep.start("api", "services.api", "api")
        harness.wait_for(lambda: requests.get(
            self.dep.endpoint.rsplit("/v3", 1)[0] + "/", timeout=2).ok,
            timeout=60, what="the API to answer")

    def start_shared(self):
        self.dep.start("shared", "services.volume", "shared",
                       extra=SHARED_BACKEND)

    def post_ma(self, zone=None):
        """POST a multiattach create (in ``zone``) over a new connection."""
        volume = {"size": 1, "volume_type": self.ma_type}
        if zone:
            volume["availability_zone"] = zone
        return requests.post(
            self.dep.endpoint + "/volumes", headers=self.headers, timeout=30,
            json={"volume": volume})

    def volume_rows(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT count(*) FROM volumes")).scalar()

    def burst(self, count, zone=None):
        """``count`` multiattach creates; their status codes and ids."""
        answers = [self.post_ma(zone) for _ in range(count)]
        self.last_burst = answers
        return ([r.status_code for r in answers],
                [r.json()["volume"]["id"] for r in answers
                 if r.status_code == 202])

    def explain(self, usual: int) -> str:
        """The last burst's unusual answers and the services' log tails,
        for a failure message."""
        odd = sorted({"%d %s" % (r.status_code, r.text[:300])
                      for r in self.last_burst if r.status_code != usual})
        tails = {name: self.dep.log(name)[-3000:]
                 for name in ("api", "shared", "scheduler")}
        return "%s\n%s" % (odd, "\n".join(
            "--- %s\n%s" % item for item in tails.items()))

    def wait_answer(self, code, timeout, zone=None):
        """Post until the answer is ``code``; return the ids of the volumes
        accepted meanwhile (and the last one's, if ``code`` is 202)."""
        others = []

        def answered():
            resp = self.post_ma(zone)
            if resp.status_code == 202:
                others.append(resp.json()["volume"]["id"])
            return resp.status_code == code
        harness.wait_for(answered, timeout=timeout, interval=0.1,
                         what="a multiattach create answered %d" % code)
        return others

    def delete_all(self, ids):
        for vid in ids:
            harness.wait_for(lambda v=vid: self.client.volume_status(v) in (
                "available", "error", None), timeout=60,
                what="volume %s to settle" % vid)
            resp = self.client.delete("/volumes/%s" % vid)
            assert resp.status_code in (202, 404), resp.text
        for vid in ids:
            self.client.wait_status(vid, None, timeout=60)

    def worker_pids_that_accepted(self):
        return set(re.findall(r"^\S+ \S+ (\d+) INFO services\.api\.operations"
                              r"\.volumes\.create .*Volume \S+ of 1 GiB "
                              r"accepted$",
                              self.dep.log("api"), re.M))


@pytest.fixture(scope="module", params=["postgresql", "mysql"])
def cluster(request, tmp_path_factory, vhost):
    db_url, drop = harness.database(request.param)
    dep = harness.Deployment(tmp_path_factory.mktemp(request.param), vhost,
                             db_url, api_workers=WORKERS,
                             polling_interval=POLLING,
                             service_down_time=DOWN_TIME)
    dep.db_sync()
    cluster = Cluster(dep, db_url)
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("plain", "services.volume", "plain", extra=PLAIN_BACKEND)
        cluster.start_api()
        harness.wait_for(lambda: list(cluster.client.pools()) == [
            "plain@file#file"], timeout=60, what="the plain pool")
        resp = cluster.client.post("/types", {"volume_type": {
            "name": "multiattach", "extra_specs": MA_SPECS}})
        assert resp.status_code == 200, resp.text
        cluster.ma_type = resp.json()["volume_type"]["id"]
        yield cluster
    finally:
        dep.stop_all()
        cluster.engine.dispose()
        drop()


def test_reports_carry_every_pool_key(cluster):
    caps = cluster.client.pools()["plain@file#file"]
    assert POOL_KEYS <= set(caps), POOL_KEYS - set(caps)
    assert caps["multiattach"] is False
    assert caps["backend_state"] == "up"
    assert caps["vendor_name"] and caps["driver_version"]
    assert caps["total_capacity_gb"] > 0
    states = cluster.client.get("/os-services").json()["services"]
    assert {s["host"]: s.get("backend_state") for s in states
            if s["binary"] == "cinder-volume"} == {"plain@file": "up"}


def test_unsatisfiable_multiattach_is_400_at_once_writing_nothing(cluster):
    # Workers that are not warm yet accept (and the scheduler fails those
    # creates); clear them away first.
    cluster.delete_all(cluster.wait_answer(400, timeout=30))
    assert cluster.volume_rows() == 0

    codes, _ids = cluster.burst(60)
    assert codes == [400] * 60
    resp = cluster.post_ma()
    fault = resp.json()["badRequest"]
    assert fault["code"] == 400
    assert "multiattach=<is> True" in fault["message"]
    assert cluster.volume_rows() == 0


def test_no_valid_backend_is_a_user_message(cluster):
    """The scheduler's refusal (here: no room) is told as Cinder tells it:
    a user message of the volume's project, under the create's request
    id; the volume's body carries no reason of Ashlar's own.  A pool with
    room for one volume takes the first (the API, judging pools empty,
    accepts both); the second finds it full."""
    cluster.dep.start("tiny", "services.volume", "tiny", backends="fake",
                      extra=TINY_BACKEND)
    harness.wait_for(lambda: "tiny@fake#fake" in cluster.client.pools(),
                     timeout=60, what="the tiny pool")
    first = cluster.client.post("/volumes", {"volume": {"size": 1}})
    assert first.status_code == 202, first.text
    kept = first.json()["volume"]["id"]
    cluster.client.wait_status(kept, "available", timeout=30)
    resp = cluster.client.post("/volumes", {"volume": {"size": 1}})
    assert resp.status_code == 202, resp.text
    volume = resp.json()["volume"]
    cluster.client.wait_status(volume["id"], "error", timeout=30)
    shown = cluster.client.get("/volumes/%s" % volume["id"]).json()["volume"]
    assert "error_reason" not in shown
    [told] = cluster.client.messages_of(volume["id"])
    assert told["event_id"] == "VOLUME_VOLUME_001_003"
    assert told["user_message"] == ("schedule allocate volume:Could not "
                                    "find any available weighted backend.")
    assert told["request_id"] == resp.headers["x-openstack-request-id"]
    cluster.delete_all([volume["id"], kept])
    cluster.dep.stop("tiny")
    harness.wait_for(lambda: "tiny@fake#fake" not in cluster.client.pools(),
                     timeout=60, what="the tiny pool to go")


def test_multiattach_backend_makes_creates_succeed(cluster):
    cluster.start_shared()
    [first] = cluster.wait_answer(202, timeout=60)
    codes, ids = cluster.burst(30)
    assert codes == [202] * 30, cluster.explain(202)
    ids.append(first)
    for vid in ids:
        cluster.client.wait_status(vid, "available", timeout=60)
        host = cluster.client.get("/volumes/%s" % vid).json()["volume"][
            "os-vol-host-attr:host"]
        assert host == "shared@file#file"
    assert len(cluster.worker_pids_that_accepted()) >= 2
    cluster.delete_all(ids)


def test_a_zone_without_a_multiattach_pool_is_400_at_once(cluster):
    """A create is judged on the pools of the zone it asks for: the shared
    pool (zone nova) does not make a multiattach create in zone west, where
    only qcow2 files are, a 202 that the scheduler would then fail."""
    cluster.dep.start("west", "services.volume", "west", extra=WEST_BACKEND)
    harness.wait_for(lambda: "west@file#file" in cluster.client.pools(),
                     timeout=60, what="the west pool")
    cluster.delete_all(cluster.wait_answer(400, timeout=30, zone="west"))
    rows = cluster.volume_rows()
    codes, _ids = cluster.burst(30, zone="west")
    assert codes == [400] * 30, cluster.explain(400)
    assert ("no fresh pool in availability zone west offers "
            "multiattach=<is> True") in cluster.last_burst[0].json()[
                "badRequest"]["message"]
    assert cluster.volume_rows() == rows
    codes, ids = cluster.burst(3, zone="nova")
    assert codes == [202] * 3, cluster.explain(202)
    for vid in ids:
        cluster.client.wait_status(vid, "available", timeout=60)
    cluster.delete_all(ids)


def test_a_type_s_zones_place_its_volumes(cluster):
    """``RESKEY:availability_zones``: a create naming no zone is in no zone
    until the scheduler picks a pool in one of the type's (here the only
    one with room and no multiattach: west's), and then in that pool's; a
    multiattach type bound to west, where no pool is multiattach, is
    refused at once."""
    made = {}
    for name, specs in (("plain-west-nova", {"multiattach": "<is> False"}),
                        ("ma-west", MA_SPECS)):
        zones = "west,nova,gone" if name.endswith("nova") else "west,gone"
        resp = cluster.client.post("/types", {"volume_type": {
            "name": name, "extra_specs": dict(
                specs, **{"RESKEY:availability_zones": zones})}})
        assert resp.status_code == 200, resp.text
        made[name] = resp.json()["volume_type"]["id"]
    resp = cluster.client.post("/volumes", {"volume": {
        "size": 1, "volume_type": made["plain-west-nova"]}})
    assert resp.status_code == 202, resp.text
    assert resp.json()["volume"]["availability_zone"] is None
    vid = resp.json()["volume"]["id"]
    cluster.client.wait_status(vid, "available", timeout=60)
    shown = cluster.client.get("/volumes/%s" % vid).json()["volume"]
    assert (shown["os-vol-host-attr:host"], shown["availability_zone"]) == (
        "west@file#file", "west")
    cluster.delete_all([vid])
    resp = cluster.client.post("/volumes", {"volume": {
        "size": 1, "volume_type": made["ma-west"]}})
    assert resp.status_code == 400, resp.text
    assert ("no fresh pool in availability zone west offers "
            "multiattach=<is> True") in resp.json()["badRequest"]["message"]


def test_a_retype_to_a_type_of_another_zone_moves_the_volume(cluster):
    """Cinder's retype is placed among the new type's zones: a volume of
    zone nova retyped (on-demand) to a type of zone west moves there."""
    resp = cluster.client.post("/volumes", {"volume": {"size": 1}})
    assert resp.status_code == 202, resp.text
    vid = resp.json()["volume"]["id"]
    cluster.client.wait_status(vid, "available", timeout=60)
    resp = cluster.client.post("/types", {"volume_type": {
        "name": "west", "extra_specs": {
            "RESKEY:availability_zones": "west"}}})
    assert resp.status_code == 200, resp.text
    resp = cluster.client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "west", "migration_policy": "on-demand"}})
    assert resp.status_code == 202, resp.text

    def moved():
        shown = cluster.client.get("/volumes/%s" % vid).json()["volume"]
        return (shown["status"], shown["migration_status"]) == (
            "available", "success") and shown
    harness.wait_for(moved, timeout=60, what="the volume to move west")
    shown = moved()
    assert (shown["os-vol-host-attr:host"], shown["availability_zone"],
            shown["volume_type"]) == ("west@file#file", "west", "west")
    cluster.delete_all([vid])
    cluster.dep.stop("west")
    harness.wait_for(lambda: "west@file#file" not in cluster.client.pools(),
                     timeout=60, what="the west pool to go")


def test_a_type_needing_fencing_is_refused_at_once_on_file_backends(cluster):
    """The shared pool is multiattach but cannot fence (the file backend
    says so), so a failover type is still refused at once."""
    resp = cluster.client.post("/types", {"volume_type": {
        "name": "failover", "extra_specs": dict(MA_SPECS,
                                                fencing="<is> True")}})
    assert resp.status_code == 200, resp.text
    assert cluster.client.pools()["shared@file#file"]["fencing"] is False
    codes = [cluster.client.post("/volumes", {"volume": {
        "size": 1, "volume_type": "failover"}}) for _ in range(20)]
    assert [r.status_code for r in codes] == [400] * 20, codes[-1].text
    assert "fencing=<is> True" in codes[0].json()["badRequest"]["message"]


def test_stopped_backend_gives_400_again_after_the_window(cluster):
    cluster.dep.stop("shared", signal.SIGKILL)
    stopped = time.monotonic()
    accepted = cluster.wait_answer(400, timeout=POLLING * 2 + DOWN_TIME + 30)
    waited = time.monotonic() - stopped
    codes, _ids = cluster.burst(30)
    assert codes == [400] * 30, cluster.explain(400)
    # Creates accepted while the backend still counted end in error with
    # a user message saying why, never stuck.
    for vid in accepted:
        cluster.client.wait_status(vid, "error", timeout=60)
        told = [m["event_id"] for m in cluster.client.messages_of(vid)]
        assert told in (["VOLUME_VOLUME_001_003"],
                         ["VOLUME_VOLUME_008_002"]), (vid, told)
    # One placed on the killed node may be on its backend after all (a
    # slow create): its node deletes it, so it comes back for that.
    cluster.start_shared()
    cluster.delete_all(accepted)
    cluster.dep.stop("shared")
    print("400 again %.1f s after the multiattach backend was killed "
          "(window %d s, service_down_time %d s)"
          % (waited, POLLING * 2, DOWN_TIME))


def test_api_restart_never_rejects_while_it_warms(cluster):
    cluster.start_shared()
    cluster.delete_all(cluster.wait_answer(202, timeout=60))
    cluster.dep.stop("api")
    cluster.start_api()
    codes, ids = cluster.burst(60)
    assert codes == [202] * 60, cluster.explain(202)
    for vid in ids:
        cluster.client.wait_status(vid, "available", timeout=60)
    cluster.delete_all(ids)


def test_restarted_api_rejects_again_once_warm(cluster):
    cluster.dep.stop("shared")
    cluster.delete_all(cluster.wait_answer(
        400, timeout=POLLING * 2 + DOWN_TIME + 30))
    cluster.dep.stop("api")
    cluster.start_api()

    def every_worker_rejects():
        # NOTE: each gunicorn worker warms on its own; until it has, it
        # accepts (never a false 400), so wait for a whole burst of 400s.
        codes, ids = cluster.burst(30)
        cluster.delete_all(ids)
        return codes == [400] * 30
    harness.wait_for(every_worker_rejects, timeout=60, interval=0.5,
                     what="every API worker warm and rejecting again")
    assert cluster.volume_rows() == 0


def test_the_api_hears_the_reports_through_the_schedulers_relay(cluster):
    """The api workers hear the reports only as a scheduler relays them:
    with none running, their view goes stale and creates pass (never a
    false 400); a scheduler that starts relays again, and the 400 comes
    back without restarting the api."""
    codes, _ids = cluster.burst(10)
    assert codes == [400] * 10, cluster.explain(400)
    cluster.dep.stop("scheduler", signal.SIGKILL)
    accepted = cluster.wait_answer(202, timeout=POLLING * 2 + 30)
    cluster.dep.start("scheduler", "services.scheduler", "sched")
    accepted += cluster.wait_answer(400, timeout=60)
    codes, _ids = cluster.burst(30)
    assert codes == [400] * 30, cluster.explain(400)
    cluster.delete_all(accepted)
    assert cluster.volume_rows() == 0
