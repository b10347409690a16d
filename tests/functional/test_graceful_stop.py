"""A volume service stopped gracefully takes its pools with it, at once.

Real processes on PostgreSQL and a fresh RabbitMQ vhost, with a report
freshness window (120 s) and ``service_down_time`` (60 s) far longer than
the test waits: every answer below comes from the withdrawal the stopping
service broadcasts and from its service row marked stopped, not from a
report expiring.
"""

import requests

from deploy.testbed import harness

POLLING = 60                # backend_stats_polling_interval: window 120 s
DOWN_TIME = 60              # service_down_time
SETTLE = 20                 # seconds allowed for what the stop broadcasts
MA_SPECS = {"multiattach": "<is> True"}
PLAIN_BACKEND = ("[file]\nvolume_driver = file\nfile_volume_format = qcow2\n"
                 "reserved_percentage = 100\n")
SHARED_BACKEND = "[file]\nvolume_driver = file\nfile_volume_format = raw\n"


def test_stopped_backend_is_gone_and_creates_get_400_at_once(tmp_path,
                                                             vhost):
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path, vhost, db_url, api_workers=2,
                             polling_interval=POLLING,
                             service_down_time=DOWN_TIME)
    dep.db_sync()
    client = harness.Client(dep.endpoint)
    try:
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("plain", "services.volume", "plain", extra=PLAIN_BACKEND)
        dep.start("shared", "services.volume", "shared",
                  extra=SHARED_BACKEND)
        dep.start("api", "services.api", "api")
        harness.wait_for(lambda: sorted(client.pools()) == [
            "plain@file#file", "shared@file#file"], timeout=60,
            what="both pools listed")
        resp = client.post("/types", {"volume_type": {
            "name": "multiattach", "extra_specs": MA_SPECS}})
        assert resp.status_code == 200, resp.text
        ma_type = resp.json()["volume_type"]["id"]

        def burst() -> list[int]:
            # New connections, so gunicorn spreads them over its workers.
            return [requests.post(
                dep.endpoint + "/volumes", headers=client.session.headers,
                json={"volume": {"size": 1, "volume_type": ma_type}},
                timeout=30).status_code for _ in range(8)]

        dep.stop("shared")
        harness.wait_for(
            lambda: "shared@file#file" not in client.pools(), timeout=SETTLE,
            what="the stopped backend's pool gone from get_pools")
        assert client.services_up()[("cinder-volume", "shared@file")] == \
            "down"
        harness.wait_for(lambda: burst() == [400] * 8, timeout=SETTLE,
                         what="every API worker answering 400")
        assert "withdrew its pools" in dep.log("scheduler")
    finally:
        dep.stop_all()
        drop()
