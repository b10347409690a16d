"""benchmarks.scale_rig: S1 times a create until it is known to fail."""

import itertools

from benchmarks import scale_rig


class _Resp:
    def __init__(self, code: int, body: dict) -> None:
        self.status_code, self._body = code, body

    def json(self) -> dict:
        return self._body

    def raise_for_status(self) -> None:
        assert self.status_code < 400


class _Api:
    """A side that answers creates with ``code``; a 202's volume turns
    ``error`` after ``polls`` polls."""

    def __init__(self, code: int, polls: int = 0) -> None:
        self.code, self.polls = code, polls
        self.calls: list[tuple[str, str]] = []
        self.waits: list[tuple[str, str | None]] = []
        self.ids = itertools.count()

    def call(self, method: str, path: str, body: dict | None = None) -> _Resp:
        self.calls.append((method, path))
        if path == "/types":
            return _Resp(200, {"volume_type": {"id": "t1"}})
        if method == "POST" and path == "/volumes":
            if self.code != 202:
                return _Resp(self.code, {"badRequest": {}})
            return _Resp(202, {"volume": {"id": "v%d" % next(self.ids)}})
        return _Resp(202, {})

    def wait_volume(self, volume_id: str, wanted: str | None,
                    poll: float) -> str | None:
        self.waits.append((volume_id, wanted))
        return wanted


def test_a_refusal_fails_when_answered_and_leaves_nothing() -> None:
    api = _Api(400)
    out = scale_rig.s1(api, 3, "plain")
    assert out["codes"] == {400: 3}
    assert out["failed_ms"]["n"] == out["refused_ms"]["n"] == 3
    assert api.waits == []
    assert ("DELETE", "/types/t1") in api.calls


def test_an_accepted_create_is_followed_to_error_then_deleted() -> None:
    api = _Api(202)
    out = scale_rig.s1(api, 2, "plain")
    assert out["codes"] == {202: 2, "error": 2}
    assert api.waits == [("v0", "error"), ("v1", "error"),
                         ("v0", None), ("v1", None)]
    assert ("DELETE", "/volumes/v0") in api.calls
    assert ("DELETE", "/volumes/v1") in api.calls
    assert scale_rig.headline({"scenario": "S1", **out})[0] == \
        "S1 failed p50"


def test_s4_is_compared_on_the_median_of_its_bursts(monkeypatch) -> None:
    times = iter([150.0, 900.0, 140.0])
    monkeypatch.setattr(scale_rig.scen, "s4", lambda api, vid: {
        "all_attached_ms": next(times), "first_try_successes": 16,
        "after_attach_ok": True, "after_detach_ok": True})
    out = scale_rig.s4(object(), "v", 3)
    assert out["all_attached_ms"] == 150.0
    assert out["all_attached_ms_each"] == [150.0, 900.0, 140.0]
    assert out["after_attach_ok"] and out["after_detach_ok"]


def test_s4_with_a_burst_that_never_attached_all_is_none(monkeypatch) -> None:
    runs = iter([(150.0, True), (None, False)])

    def burst(api, vid):
        ms, ok = next(runs)
        return {"all_attached_ms": ms, "first_try_successes": 15,
                "after_attach_ok": ok, "after_detach_ok": True}
    monkeypatch.setattr(scale_rig.scen, "s4", burst)
    out = scale_rig.s4(object(), "v", 2)
    assert out["all_attached_ms"] is None
    assert out["after_attach_ok"] is False
