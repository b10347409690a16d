"""deploy/docker-compose.ha.yml (profile "ha") is the topology that
deploy/testbed/ha.py starts: checked with ``docker-compose config``
(offline; no Docker engine)."""

import configparser
import os
import subprocess
from urllib import parse

import pytest
import yaml

from deploy.testbed import ha as ha_deployment

try:
    from tests.unit import test_deploy
except ImportError:  # pytest put tests/unit on sys.path instead
    import test_deploy

SECRETS = test_deploy.SECRETS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HA_FILE = os.path.join(REPO, "deploy", "docker-compose.ha.yml")


def _config(tmp_path, secrets, *args):
    test_deploy.need_docker_compose()
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS}
    return subprocess.run(
        ["docker-compose", "--project-directory", str(tmp_path), "-f",
         HA_FILE, *args, "config"], env=dict(clean, **secrets),
        capture_output=True, text=True, timeout=60)


@pytest.fixture
def resolved(tmp_path):
    done = _config(tmp_path, SECRETS, "--profile", "ha")
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)["services"]


def test_every_service_is_in_the_ha_profile(resolved):
    assert {name: svc.get("profiles") for name, svc in resolved.items()} == {
        name: ["ha"] for name in resolved}


def test_it_refuses_to_start_without_the_secrets(tmp_path):
    done = _config(tmp_path, {}, "--profile", "ha")
    assert done.returncode != 0
    assert "run deploy/compose/make-env.sh first" in done.stderr
    with open(HA_FILE) as handle:
        text = handle.read()
    assert not any(secret in text for secret in SECRETS.values())


def test_three_of_each_engine_and_two_volume_members(resolved):
    assert {name for name in resolved if name[-2:] in ("-1", "-2", "-3")
            } == {"%s-%d" % (engine, n) for n in (1, 2, 3) for engine in
                  ("rabbitmq", "galera", "etcd", "volume") if
                  engine != "volume" or n < 3}
    assert {"haproxy", "api", "scheduler", "db-sync", "users"} <= set(
        resolved)
    # one bootstrap node
    assert [name for name, svc in resolved.items()
            if "--wsrep-new-cluster" in (svc.get("command") or [])] == [
                "galera-1"]


def test_ashlar_runs_on_every_rabbit_node_galera_and_etcd(resolved):
    ashlar = ("api", "scheduler", "volume-1", "volume-2", "db-sync")
    for name in ashlar:
        env = resolved[name]["environment"]
        url = parse.urlsplit(env["OS_DEFAULT__TRANSPORT_URL"])
        hosts = [part.rsplit("@", 1)[1] for part in url.netloc.split(",")]
        assert hosts == ["rabbitmq-%d:5672" % n for n in (1, 2, 3)], name
        assert env["OS_OSLO_MESSAGING_RABBIT__RABBIT_QUORUM_QUEUE"] == "true"
        assert "@haproxy/ashlar" in env["OS_DATABASE__CONNECTION"]
    members = [resolved["volume-%d" % n] for n in (1, 2)]
    assert {m["environment"]["OS_DEFAULT__CLUSTER"] for m in members} == {
        ha_deployment.CLUSTER}
    assert [m["environment"]["OS_COORDINATION__BACKEND_URL"]
            for m in members] == ["etcd3+http://etcd-1:2379",
                                  "etcd3+http://etcd-2:2379"]
    shared = [[v for v in m["volumes"] if v.startswith("volumes:")]
              for m in members]
    assert shared[0] == shared[1] == ["volumes:/var/lib/ashlar/volumes:rw"]
    assert resolved["api"]["build"]["args"] == {"EXTRAS": "keystone,ha"}


def test_haproxy_sends_clients_to_one_writer():
    with open(os.path.join(REPO, "deploy", "compose", "ha",
                           "haproxy.cfg")) as handle:
        servers = [line.split() for line in handle
                   if line.strip().startswith("server ")]
    assert [s[1] for s in servers] == ["galera-1", "galera-2", "galera-3"]
    assert ["backup" in s for s in servers] == [False, True, True]
    galera = configparser.ConfigParser()
    galera.read(os.path.join(REPO, "deploy", "compose", "ha", "galera.cnf"))
    assert galera["mariadb"]["wsrep_cluster_address"] == (
        "gcomm://galera-1,galera-2,galera-3")
