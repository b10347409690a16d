"""Helpers shared by the benchmark scripts: HTTP client, percentiles."""

import statistics
import threading
import time
import uuid

import requests


def summarize(seconds: list[float]) -> dict:
    """n, p50, p95, max (milliseconds) of a list of durations in seconds."""
    if not seconds:
        return {"n": 0}
    ordered = sorted(seconds)

    def pct(p: float) -> float:
        k = (len(ordered) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
    return {"n": len(ordered), "p50_ms": round(pct(0.5) * 1000, 1),
            "p95_ms": round(pct(0.95) * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1),
            "mean_ms": round(statistics.mean(ordered) * 1000, 1)}


class Api:
    """One keep-alive session per thread against a Cinder v3 endpoint."""

    def __init__(self, endpoint: str, version: str = "3.54") -> None:
        self.endpoint = endpoint.rstrip("/")
        project = self.endpoint.rsplit("/", 1)[-1]
        self.headers = {"X-Auth-Token": "admin:%s" % project,
                        "OpenStack-API-Version": "volume %s" % version,
                        "Content-Type": "application/json",
                        "X-Service-Roles": "service"}
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.headers)
        return session

    def call(self, method: str, path: str, body: dict | None = None,
             **kwargs) -> requests.Response:
        return self._session().request(method, self.endpoint + path,
                                       json=body, timeout=60, **kwargs)

    def wait_volume(self, volume_id: str, wanted: str | None,
                    poll: float, timeout: float = 60.0) -> str | None:
        """Poll until the status is ``wanted`` (None: gone) or terminal;
        a 5xx answer (a 503 "try again" under load) is polled past."""
        deadline = time.perf_counter() + timeout
        while True:
            resp = self.call("GET", "/volumes/%s" % volume_id)
            status = (None if resp.status_code == 404
                      else "unanswered" if resp.status_code >= 500
                      else resp.json()["volume"]["status"])
            if status == wanted or status in ("error", "error_deleting"):
                return status
            if time.perf_counter() > deadline:
                return "timeout"
            time.sleep(poll)

    def typed_volume(self, name: str, extra_specs: dict,
                     poll: float = 0.01) -> tuple[str, str]:
        """A new volume type with ``extra_specs`` and an ``available`` 1 GiB
        volume of it, both named after ``name``: (type id, volume id)."""
        resp = self.call("POST", "/types", {"volume_type": {
            "name": "%s-%s" % (name, uuid.uuid4().hex[:8]),
            "extra_specs": extra_specs}})
        resp.raise_for_status()
        type_id = resp.json()["volume_type"]["id"]
        resp = self.call("POST", "/volumes", {"volume": {
            "size": 1, "volume_type": type_id, "name": name}})
        resp.raise_for_status()
        volume_id = resp.json()["volume"]["id"]
        status = self.wait_volume(volume_id, "available", poll)
        if status != "available":
            raise RuntimeError("volume %s is %s" % (volume_id, status))
        return type_id, volume_id
