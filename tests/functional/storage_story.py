"""A user's snapshot story, told through the REST API and an agent's data
path, shared by the file and RBD backends' functional tests.

Bytes written through an attachment before a snapshot are in a volume made
from it and come back after a revert; bytes written after it are in a clone
of the volume; deleting the snapshot and then the source volume leaves
what was made from them readable.
"""

import json
import subprocess
import sys

from deploy.testbed import harness

BEFORE = b"written before the snapshot"
AFTER = b"WRITTEN AFTER THE SNAPSHOT!"


def agent(dep, host: str, extra: str = "", tree: str | None = None):
    """Run ``ashlar-agent`` as ``host`` (from source ``tree``, another
    release's, if given): ``run(*args, stdin=b"")`` gives (returncode,
    stdout bytes, stderr text)."""
    conf = dep.config("agent-%s" % host, host, extra=extra)

    def run(*args, stdin: bytes = b""):
        out = subprocess.run(
            [sys.executable, "-m", "services.agent", "--config-file", conf,
             *args], cwd=tree or harness.REPO, input=stdin,
            capture_output=True, timeout=120)
        return out.returncode, out.stdout, out.stderr.decode(errors="replace")
    return run


def ok(result) -> bytes:
    code, stdout, stderr = result
    assert code == 0, stderr[-2000:]
    return stdout


def _volume(client, **fields) -> str:
    resp = client.post("/volumes", {"volume": fields})
    assert resp.status_code == 202, resp.text
    volume_id = resp.json()["volume"]["id"]
    client.wait_status(volume_id, "available", timeout=60)
    return volume_id


def held(run, volume_id: str, *commands: str) -> list[dict]:
    """One ``hold`` of ``volume_id`` (one process, as an instance holds
    its volume): attach, answer ``commands``, detach; the answers after
    the attach's, each asserted not to be an error."""
    script = "".join(line + "\n" for line in (*commands, "detach"))
    answers = [json.loads(line) for line in ok(run(
        "hold", volume_id, stdin=script.encode())).decode().splitlines()
        if line.strip()]
    assert "attachment" in answers[0], answers
    assert len(answers) == len(commands) + 2, answers
    failed = [answer for answer in answers if "error" in answer]
    assert not failed, failed
    return answers[1:-1]


def read_through(run, volume_id: str, length: int) -> bytes:
    """The volume's first ``length`` bytes, through an attachment."""
    return bytes.fromhex(held(run, volume_id, "read 0 %d" % length)[0][
        "data"])


def write_through(run, volume_id: str, data: bytes) -> None:
    """Write ``data`` at the volume's start, through an attachment."""
    assert held(run, volume_id, "write 0 %s" % data.hex())[0] == {
        "written": len(data)}


def _snapshot(client, volume_id: str, force: bool) -> object:
    return client.post("/snapshots", {"snapshot": {
        "volume_id": volume_id, "force": force, "name": "story"}})


def _wait_snapshot(client, snapshot_id: str, status: str | None) -> None:
    def now():
        resp = client.get("/snapshots/%s" % snapshot_id)
        if resp.status_code == 404:
            return status is None
        return resp.json()["snapshot"]["status"] == status
    harness.wait_for(now, timeout=60, what="snapshot %s" % status)


def tell(client, run, type_name: str) -> None:
    """The story on a volume of ``type_name``; asserts each step."""
    vid = _volume(client, size=1, volume_type=type_name)
    attachment = json.loads(ok(run("attach", vid)))
    ok(run("write", attachment["id"], stdin=BEFORE))
    refused = _snapshot(client, vid, force=False)
    assert refused.status_code == 400, refused.text
    resp = _snapshot(client, vid, force=True)
    assert resp.status_code == 202, resp.text
    sid = resp.json()["snapshot"]["id"]
    _wait_snapshot(client, sid, "available")
    ok(run("write", attachment["id"], stdin=AFTER))
    ok(run("detach", attachment["id"]))
    from_snap = _volume(client, snapshot_id=sid, size=2)
    clone = _volume(client, source_volid=vid)
    assert read_through(run, from_snap, len(BEFORE)) == BEFORE
    assert read_through(run, clone, len(AFTER)) == AFTER
    resp = client.post("/volumes/%s/action" % vid, {"revert": {
        "snapshot_id": sid}}, headers={
            "OpenStack-API-Version": "volume 3.40"})
    assert resp.status_code == 202, resp.text
    client.wait_status(vid, "available", timeout=60)
    assert read_through(run, vid, len(BEFORE)) == BEFORE
    assert client.delete("/volumes/%s" % vid).status_code == 400
    assert client.delete("/snapshots/%s" % sid).status_code == 202
    _wait_snapshot(client, sid, None)
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)
    assert read_through(run, from_snap, len(BEFORE)) == BEFORE
    assert read_through(run, clone, len(AFTER)) == AFTER
    for made in (from_snap, clone):
        assert client.delete("/volumes/%s" % made).status_code == 202
        client.wait_status(made, None, timeout=60)


def backup_and_restore(dep, client, type_name: str, data: bytes) -> None:
    """``data`` written through an agent to a volume of ``type_name``,
    backed up by a backup service (started here), restored into a new
    volume and read back through the agent: the backup service reads and
    writes the backend's volumes as a host does."""
    dep.start_backup("backup1", chunk_bytes=256 << 20)
    harness.wait_for(lambda: client.services_up().get(
        ("cinder-backup", "backup1")) == "up", timeout=60,
        what="the backup service")
    run = agent(dep, "compute-a")
    vid = client.create_volume(volume_type=type_name)["id"]
    client.wait_status(vid, "available")
    write_through(run, vid, data)
    backup_id = create_backup(client, vid)["id"]
    wait_backup(client, backup_id, "available", timeout=300)
    resp = client.post("/backups/%s/restore" % backup_id,
                       {"restore": {"name": "restored"}})
    assert resp.status_code == 202, resp.text
    new = resp.json()["restore"]["volume_id"]
    client.wait_status(new, "available", timeout=300)
    wait_backup(client, backup_id, "available", timeout=300)
    client.wait_status(new, "available", timeout=300)
    assert read_through(run, new, len(data)) == data


def create_backup(client, volume_id: str, **fields) -> dict:
    """``POST /backups`` of ``volume_id``; the backup as answered."""
    resp = client.post("/backups", {"backup": {"volume_id": volume_id,
                                               **fields}})
    assert resp.status_code == 202, resp.text
    return resp.json()["backup"]


def backup_shown(client, backup_id: str) -> dict | None:
    """The backup as ``GET`` shows it; None once it is gone."""
    resp = client.get("/backups/%s" % backup_id)
    if resp.status_code == 404:
        return None
    assert resp.status_code == 200, resp.text
    return resp.json()["backup"]


def wait_backup(client, backup_id: str, status: str | None,
                timeout: float = 60) -> dict | None:
    """Wait until the backup is ``status`` (None: gone); as shown then."""
    def now() -> bool:
        shown = backup_shown(client, backup_id)
        return (shown or {}).get("status") == status if status else \
            shown is None
    harness.wait_for(now, timeout=timeout,
                     what="backup %s %s" % (backup_id, status))
    return backup_shown(client, backup_id)
