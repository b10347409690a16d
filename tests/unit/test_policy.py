"""common.policy: Cinder's rules, a policy file that overrides them, and
how soon a change to that file takes effect."""

import concurrent.futures
import threading
import time
import warnings

import pytest
from oslo_config import cfg
from oslo_policy import opts as policy_opts

from common import context
from common import exception
from common import policy


@pytest.fixture
def policy_file(tmp_path, monkeypatch):
    path = tmp_path / "policy.yaml"
    path.write_text('"volume:attachment_create": "!"\n')
    conf = cfg.ConfigOpts()
    conf([], project="ashlar")
    # NOTE: set_defaults(conf, policy_file=...) would change the default
    # of oslo.policy's module-level option for every later ConfigOpts
    # (cfg.set_defaults on its _options), denying attachment creates in
    # tests that run after these; an override stays in this conf.
    policy_opts.set_defaults(conf)
    conf.set_override("policy_file", str(path), group="oslo_policy")
    clock = [1000.0]
    monkeypatch.setattr(policy.time, "monotonic", lambda: clock[0])
    policy.get_enforcer(conf)
    return path, clock


def _member() -> context.RequestContext:
    return context.RequestContext(user_id="u", project_id="p",
                                  roles=["member"])


def test_policy_file_overrides_a_default(policy_file):
    with pytest.raises(exception.PolicyNotAuthorized):
        _member().can("volume:attachment_create")
    assert _member().can("volume:attachment_delete")


def test_policy_file_change_counts_after_the_recheck_interval(policy_file):
    path, clock = policy_file
    ctxt = _member()
    assert not ctxt.can("volume:attachment_create", fatal=False)
    path.write_text('"volume:attachment_create": ""\n')
    clock[0] += policy.RECHECK_INTERVAL / 2
    assert not ctxt.can("volume:attachment_create", fatal=False)
    clock[0] += policy.RECHECK_INTERVAL
    assert ctxt.can("volume:attachment_create", fatal=False)


def test_admin_rules_read_is_admin_without_deprecation_warnings():
    conf = cfg.ConfigOpts()
    conf([], project="ashlar")
    policy.get_enforcer(conf)
    admin = context.RequestContext(user_id="a", project_id="p",
                                   roles=["admin"])
    assert admin.is_admin
    assert not _member().is_admin
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert admin.can("volume_extension:services:index")
        assert not _member().can("volume_extension:services:index",
                                 fatal=False)


def test_decisions_are_remembered_until_the_next_look(policy_file,
                                                       monkeypatch):
    path, clock = policy_file
    enforcer = policy.get_enforcer()
    ctxt = _member()
    assert ctxt.can("volume:attachment_delete")
    calls = []
    real = enforcer.authorize
    monkeypatch.setattr(enforcer, "authorize",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    assert ctxt.can("volume:attachment_delete")
    assert not calls
    assert not ctxt.can("volume:attachment_delete", {"project_id": "q"},
                        fatal=False)
    assert len(calls) == 1
    path.write_text('"volume:attachment_delete": "!"\n')
    clock[0] += policy.RECHECK_INTERVAL
    assert not ctxt.can("volume:attachment_delete", fatal=False)


def test_rules_asking_a_remote_service_are_never_remembered(policy_file,
                                                           monkeypatch):
    path, clock = policy_file
    path.write_text('"volume:attachment_delete": '
                    '"role:member or http://127.0.0.1:9/check"\n')
    clock[0] += policy.RECHECK_INTERVAL
    enforcer = policy.get_enforcer()
    ctxt = _member()
    calls = []
    real = enforcer.authorize
    monkeypatch.setattr(enforcer, "authorize",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    for _ in range(2):
        ctxt.can("volume:attachment_delete", fatal=False)
    assert len(calls) == 2


def test_first_checks_racing_a_new_enforcer_are_never_denied(monkeypatch):
    """Threads that ask while the enforcer is being built (a gunicorn
    worker's first requests) wait for it; none is denied for a rule that
    was not registered yet."""
    conf = cfg.ConfigOpts()
    conf([], project="ashlar")
    monkeypatch.setattr(policy.cfg, "CONF", conf)
    real = policy.Enforcer.register_default

    def slow(self, default):
        time.sleep(0.0005)
        real(self, default)
    monkeypatch.setattr(policy.Enforcer, "register_default", slow)
    start = threading.Barrier(8)

    def first_check(_i):
        start.wait()
        return _member().can("volume:multiattach", fatal=False)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert list(pool.map(first_check, range(8))) == [True] * 8



def test_remembered_decisions_tell_true_from_one(policy_file):
    """``True == 1`` in Python, but ``is_admin:True`` matches only True."""
    enforcer = policy.get_enforcer()
    creds = {"roles": [], "project_id": "p", "is_admin": 1}
    assert not enforcer.decide("admin_api", {}, creds)
    assert enforcer.decide("admin_api", {}, dict(creds, is_admin=True))


def test_a_requests_decisions_are_made_once_per_action_and_target(
        policy_file, monkeypatch):
    """A list view asks per row; each (action, target) is decided once,
    and answers as ``can`` does."""
    enforcer = policy.get_enforcer()
    ctxt = _member()
    calls = []
    real = enforcer.decide
    monkeypatch.setattr(enforcer, "decide",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    decisions = ctxt.decisions()
    for _ in range(3):
        assert decisions.allowed("volume:attachment_delete",
                                 {"project_id": "p"})
        assert not decisions.allowed("volume:attachment_delete",
                                     {"project_id": "q"})
        assert not decisions.allowed("volume:attachment_create",
                                     {"project_id": "p"})
    assert len(calls) == 3
    assert not ctxt.can("volume:attachment_delete", {"project_id": "q"},
                        fatal=False)


def _counted_decisions(monkeypatch, ctxt):
    enforcer = policy.get_enforcer()
    calls = []
    real = enforcer.decide
    monkeypatch.setattr(enforcer, "decide",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    return ctxt.decisions(), calls


def test_rules_that_answer_alike_for_every_project_are_decided_once(
        monkeypatch):
    """An admin's list of every project's volumes asks each rule once,
    not once per project; a member's reader rule still depends on the
    project."""
    conf = cfg.ConfigOpts()
    conf([], project="ashlar")
    policy.get_enforcer(conf)
    admin = context.RequestContext(user_id="a", project_id="p",
                                   roles=["admin", "member", "reader"])
    decisions, calls = _counted_decisions(monkeypatch, admin)
    for project in ("p", "q", "r"):
        assert decisions.allowed("volume_extension:volume_tenant_attribute",
                                 {"project_id": project})
        assert decisions.allowed("volume_extension:volume_host_attribute",
                                 {"project_id": project})
    assert len(calls) == 2
    reader = context.RequestContext(user_id="u", project_id="p",
                                    roles=["reader"])
    decisions, calls = _counted_decisions(monkeypatch, reader)
    assert [decisions.allowed("volume_extension:volume_tenant_attribute",
                              {"project_id": project})
            for project in ("p", "q", "r")] == [True, False, False]
    assert not decisions.allowed("volume_extension:volume_host_attribute",
                                 {"project_id": "p"})
    assert len(calls) == 4


def test_a_negated_project_check_is_never_taken_as_target_free(
        policy_file, monkeypatch):
    path, clock = policy_file
    path.write_text('"volume:attachment_delete": '
                    '"role:admin or not project_id:%(project_id)s"\n')
    clock[0] += policy.RECHECK_INTERVAL
    decisions, _calls = _counted_decisions(monkeypatch, _member())
    assert not decisions.allowed("volume:attachment_delete",
                                 {"project_id": "p"})
    assert decisions.allowed("volume:attachment_delete", {"project_id": "q"})


def test_a_rule_naming_a_missing_rule_is_decided_per_target(
        policy_file, monkeypatch):
    """A rule the target-free reading cannot follow (a ``rule:`` of no
    rule) is decided per project, as oslo.policy decides it: never a
    500."""
    path, clock = policy_file
    path.write_text('"volume:attachment_delete": '
                    '"rule:nowhere or project_id:%(project_id)s"\n')
    clock[0] += policy.RECHECK_INTERVAL
    decisions, calls = _counted_decisions(monkeypatch, _member())
    assert decisions.allowed("volume:attachment_delete", {"project_id": "p"})
    assert not decisions.allowed("volume:attachment_delete",
                                 {"project_id": "q"})
    assert len(calls) == 2
