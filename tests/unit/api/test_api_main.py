"""``ashlar-api``'s master: what it does before gunicorn forks workers."""

import gc
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
