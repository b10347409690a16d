"""The survey's failover story on a backend that fences: an active and a
passive host share a volume; the passive one takes over through an
attachment the volume's project made for it; the old writer is cut off at
the storage layer.

Each host is an ``ashlar-agent hold`` process (one librados instance held
open for its life, as a hypervisor's), driven line by line; shared by the
RBD functional tests and ``benchmarks/fence_takeover.py``.
"""

import json
import queue
import subprocess
import sys
import threading
import time

from deploy.testbed import harness

#: A type for the story: shared, one writer, on a backend that fences.
FAILOVER_SPECS = {"multiattach": "<is> True", "fencing": "<is> True",
                  "ashlar:multiattach_single_writer": "<is> True"}


class Held:
    """``ashlar-agent hold VOLUME`` as ``host``: ``ask(line)`` sends one
    command and returns its JSON answer (within ``timeout``).

    ``attachment_id``: hold the attachment the project made for the host
    (``--attachment``), which a takeover needs; else the agent makes one
    for itself, in ``mode``.
    """

    def __init__(self, config: str, volume_id: str, mode: str = "rw",
                 timeout: float = 60,
                 attachment_id: str | None = None) -> None:
        self.timeout = timeout
        made = ["--attachment", attachment_id] if attachment_id else [
            "--mode", mode]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "services.agent", "--config-file", config,
             "hold", volume_id, *made], cwd=harness.REPO,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        first = self._next()
        self.attachment = first["attachment"]
        self.clients = first["clients"]

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self) -> dict:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise AssertionError("ashlar-agent hold did not answer within "
                                 "%ss" % self.timeout)
        if line is None:
            raise AssertionError("ashlar-agent hold exited: %s" % (
                self.proc.stderr.read()[-3000:]))
        return json.loads(line)

    def ask(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self._next()

    def write(self, offset: int, data: bytes) -> dict:
        return self.ask("write %d %s" % (offset, data.hex()))

    def read(self, offset: int, length: int) -> bytes:
        answer = self.ask("read %d %d" % (offset, length))
        assert "data" in answer, answer
        return bytes.fromhex(answer["data"])

    def close(self) -> None:
        """Stop the process (a host that dies), if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


def failover_type(client, name: str, backend: str) -> None:
    body = {"volume_type": {"name": name, "extra_specs": dict(
        FAILOVER_SPECS, volume_backend_name=backend)}}
    resp = client.post("/types", body)
    assert resp.status_code == 200, resp.text


def reserve(client, volume_id: str, mode: str = "ro") -> str:
    """The project's consent to a host: an attachment it reserves over REST
    (no connector: the host's agent connects it); its id."""
    resp = client.post("/attachments", {"attachment": {
        "volume_uuid": volume_id, "mode": mode}})
    assert resp.status_code == 200, resp.text
    return resp.json()["attachment"]["id"]


def takeover(active: Held, passive: Held) -> dict:
    """The passive host takes the volume over; the answer says the time
    from request to writable (``seconds``)."""
    start = time.monotonic()
    answer = passive.ask("takeover")
    answer["seconds"] = time.monotonic() - start
    assert answer.get("fenced") == [active.attachment["id"]], answer
    assert answer["attach_mode"] == "rw", answer
    return answer


def fenced_write_error(active: Held) -> tuple[str, float]:
    """The old writer's next write: its error, and how long it took."""
    start = time.monotonic()
    answer = active.write(8192, b"after the fence")
    return answer.get("error", ""), time.monotonic() - start


def comes_back(active: Held, passive: Held, reattach) -> None:
    """The fenced host comes back: its held attachment detaches, it
    attaches again (``reattach()``, read-only) and reads what the new
    writer wrote (``B writes`` at 0); then both detach."""
    assert "error" not in active.ask("detach")
    again = reattach()
    assert again.read(0, 8) == b"B writes"
    assert "error" not in again.ask("detach")
    again.close()
    assert "error" not in passive.ask("detach")
