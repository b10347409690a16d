"""A takeover needs the project's consent, on a real Ceph cluster with
real identities.

test_rbd.py's deployment runs noauth, where the door takes every agent
for an administrator; this module's api checks who calls (http_basic):
the operator (an admin of the endpoint's project) and the compute agents
of ``compute-a`` and ``compute-b``, each bound to its own host.  A compute
agent may attach any volume for its own host, but a takeover through such
an attachment would fence the project's writer on another host: it is
refused, and the writer keeps writing.  Through an attachment the project
made for the host over REST, the same agent takes over.

A module of its own: a second api on test_rbd.py's vhost would serve the
same door topic.
"""

import pytest

from deploy.testbed import failover_story
from deploy.testbed import harness
from deploy.testbed.failover_story import Held
from tests.functional.test_http_basic import PROJECT
from tests.functional.test_http_basic import basic
from tests.functional.test_http_basic import htpasswd_line
from tests.functional.test_http_basic import rest_client
from tests.functional.test_rbd import _agent_section
from tests.functional.test_rbd import _volume
from tests.functional.test_rbd import start_on_ceph

OPERATOR = ("operator", "operator-Secret-1")
HOSTS = {"compute-a": "compute-a-Secret-1", "compute-b": "compute-b-Secret-1"}
#: The agents' users: [api] agent_user_prefix + host.
PREFIX = "ashlar-agent-"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, vhost, ceph):
    tmp = tmp_path_factory.mktemp("rbd-consent")
    users = tmp / "htpasswd"
    users.write_text(htpasswd_line(*OPERATOR) + "".join(
        htpasswd_line(PREFIX + host, password)
        for host, password in HOSTS.items()))
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp, vhost, db_url)
    dep.db_sync()
    try:
        operator = rest_client(dep.endpoint, basic(*OPERATOR))
        start_on_ceph(dep, ceph, operator, api_extra=(
            "[api]\nauth_strategy = http_basic\n"
            "[http_basic]\nuser_file = %s\nproject_id = %s\n"
            % (users, PROJECT)))
        failover_story.failover_type(operator, "rbd-failover", "ceph")
        yield dep, operator
    finally:
        dep.stop_all()
        drop()


def _held(dep, ceph, host: str, volume_id: str, mode: str = "ro",
          attachment_id: str | None = None) -> Held:
    """``host``'s agent, with its own credential, holding the volume."""
    config = dep.config("agent-%s" % host, host, extra=(
        _agent_section(ceph) + "[agent_auth]\nauth_type = http_basic\n"
        "username = %s%s\npassword = %s\n" % (PREFIX, host, HOSTS[host])))
    return Held(config, volume_id, mode, attachment_id=attachment_id)


def test_an_agent_cannot_fence_another_hosts_writer_by_attaching_itself(
        guarded, ceph):
    dep, operator = guarded
    vid = _volume(operator, "rbd-failover")
    active = _held(dep, ceph, "compute-a", vid, "rw")
    intruder = _held(dep, ceph, "compute-b", vid, "ro")
    passive = None
    try:
        assert active.write(0, b"A before") == {"written": 8}
        answer = intruder.ask("takeover")
        assert answer.get("error", "").startswith("TakeoverNeedsConsent"), \
            answer
        assert "project made" in answer["error"]
        assert not set(active.clients) & ceph.blocklist()
        assert active.write(0, b"A still!") == {"written": 8}
        shown = operator.get("/attachments/%s" % active.attachment["id"])
        assert "ashlar-fencing:fenced_at" not in shown.json()["attachment"]
        assert "error" not in intruder.ask("detach")

        # the project consents: an attachment it made for compute-b
        passive = _held(dep, ceph, "compute-b", vid, attachment_id=(
            failover_story.reserve(operator, vid)))
        assert passive.read(0, 8) == b"A still!"
        failover_story.takeover(active, passive)
        assert set(active.clients) <= ceph.blocklist()
        error, _seconds = failover_story.fenced_write_error(active)
        assert "ConnectionShutdown" in error, error
        assert passive.write(0, b"B writes") == {"written": 8}
        for held in (active, passive):
            assert "error" not in held.ask("detach")
    finally:
        for held in (active, intruder, passive):
            if held is not None:
                held.close()
    operator.wait_status(vid, "available")
