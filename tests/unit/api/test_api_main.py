"""``ashlar-api``'s master: what it does before gunicorn forks workers."""

import gc
import pathlib
import subprocess
import sys
import threading

import pytest

from services.api import __main__ as api_main


@pytest.fixture
def served(monkeypatch, tmp_path):
    """Run ``main`` with gunicorn's server replaced by a recorder of what
    the master held when it would have forked."""
    seen = {}

    class Recorder:
        def __init__(self, options: dict) -> None:
            seen["options"] = options

        def run(self) -> None:
            seen["app_imported"] = "services.api.app" in sys.modules
            seen["frozen"] = gc.get_freeze_count()
            seen["threads"] = threading.active_count()

    monkeypatch.setattr(api_main, "_Server", Recorder)
    conf = tmp_path / "api.conf"
    conf.write_text("[api]\nbind_host = 127.0.0.1\nauth_strategy = noauth\n")
    threads = threading.active_count()
    try:
        api_main.main(["--config-file", str(conf)])
    finally:
        gc.unfreeze()
    return seen, threads


def test_master_imports_the_app_and_freezes_it_before_the_fork(served):
    seen, threads = served
    assert seen["app_imported"]
    assert seen["frozen"] > 0
    assert seen["threads"] == threads  # importing started nothing
    assert seen["options"]["preload_app"] is False


@pytest.mark.parametrize("strategy,imported", [("noauth", False),
                                               ("keystone", True)])
def test_a_keystone_master_imports_auth_token_for_its_workers(
        tmp_path, strategy, imported):
    """In keystone mode the workers share keystonemiddleware's import
    (about 11 MiB of each worker's memory) with the master; other modes go
    without it.  In a new interpreter: other tests import it here."""
    pytest.importorskip("keystonemiddleware")
    conf = tmp_path / "api.conf"
    conf.write_text("[api]\nbind_host = 127.0.0.1\nauth_strategy = %s\n"
                    % strategy)
    code = ("import sys\n"
            "from services.api import __main__ as api_main\n"
            "class Recorder:\n"
            "    def __init__(self, options): pass\n"
            "    def run(self):\n"
            "        print('keystonemiddleware.auth_token' in sys.modules)\n"
            "api_main._Server = Recorder\n"
            "api_main.main(['--config-file', %r])\n" % str(conf))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True, timeout=60,
                         cwd=pathlib.Path(__file__).resolve().parents[3])
    assert out.stdout.split() == [str(imported)]


@pytest.mark.parametrize("booted, code, ends_at_once", [
    (True, 0, True), (True, None, True),
    (True, 3, False), (False, 0, False), (True, -1, False)])
def test_a_worker_that_served_ends_at_once_and_others_keep_their_code(
        monkeypatch, served, booted, code, ends_at_once):
    """gunicorn's worker_exit hook ends a booted worker's normal exit at
    once; a boot failure's exit code (the master halts on it) stays."""
    ended = []
    monkeypatch.setattr(api_main.service, "exit_now",
                        lambda: ended.append(True))
    hook = served[0]["options"]["worker_exit"]
    worker = type("Worker", (), {"booted": booted})()
    with pytest.raises(SystemExit):
        try:
            raise SystemExit(code)
        finally:
            hook(None, worker)
    assert ended == ([True] if ends_at_once else [])
