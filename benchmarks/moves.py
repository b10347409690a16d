"""How long a volume takes to move between every two kinds of backend.

Starts a throwaway Ceph, tgt and nfs-ganesha (``deploy/testbed/
components/``) and one deployment (the functional tests' processes) whose
one volume node has a ``file``, an ``iscsi``, an ``nfs`` and an ``rbd``
backend, as ``tests/functional/test_moves.py`` does.  An agent writes
``--data-mib`` MiB of random bytes at the start of a ``--size`` GiB
volume on the file backend; then the volume moves by retypes along a
circuit that takes each of the 12 ordered pairs once (every move between
two kinds is the generic copy through the hosts' data path), ``--rounds``
times.  For each move: the seconds from the retype's POST to the volume
``available`` on its new pool, and the volume's size over that time;
after each round, an agent reads the bytes back (back on the file
backend) and the run fails if they changed.

One JSON line per move, then a table of the medians per pair::

    python -m benchmarks.moves [--size 1] [--data-mib 64] [--rounds 1]
"""

import argparse
import collections
import contextlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import backend_scenarios
from deploy.testbed import harness

#: Each ordered pair of file, iscsi, nfs, rbd once, from file to file.
CIRCUIT = ["file", "iscsi", "nfs", "rbd", "file", "nfs", "iscsi", "rbd",
           "nfs", "file", "rbd", "iscsi", "file"]
NODE = "mover"


@contextlib.contextmanager
def deployment(folder: pathlib.Path):
    """The engines and one volume node with the four backends; yields the
    deployment and a client once the four pools are listed."""
    with contextlib.ExitStack() as stack:
        sections = "".join(backend_scenarios.SECTIONS[b](stack, folder)
                           for b in ("file", "iscsi", "nfs"))
        sections = sections.replace(
            "[iscsi]\n", "[iscsi]\nfile_volume_dir = %s\n" % (folder / "iscsi"))
        rbd = backend_scenarios.SECTIONS["rbd"](stack, folder)
        keyrings = folder / "ceph"
        vhost, drop_vhost = harness.broker_vhost()
        stack.callback(drop_vhost)
        db_url, drop_db = harness.database("postgresql")
        stack.callback(drop_db)
        dep = harness.Deployment(folder, vhost, db_url)
        stack.callback(dep.stop_all)
        dep.db_sync()
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", NODE,
                  backends="file,iscsi,nfs,rbd",
                  extra=sections + rbd + "[agent]\nrbd_keyring_dir = %s\n"
                  % keyrings)
        dep.start("api", "services.api", "api")
        client = harness.Client(dep.endpoint)
        harness.wait_for(lambda: len(client.pools()) == 4, timeout=120,
                         what="the four pools")
        for backend in ("file", "iscsi", "nfs", "rbd"):
            assert client.post("/types", {"volume_type": {
                "name": "on-" + backend, "extra_specs": {
                    "volume_backend_name": backend}}}).status_code == 200
        yield dep, client


def written_volume(dep, client, size: int, data_mib: int):
    """A volume on the file backend with random bytes at its start, and
    a check that they are still there."""
    vid = client.create_volume(size=size, volume_type="on-file")["id"]
    client.wait_status(vid, "available", timeout=60)
    conf = dep.config("agent", "compute-a")

    def agent(*args: str, stdin: bytes = b"") -> bytes:
        return subprocess.run(
            [sys.executable, "-m", "services.agent", "--config-file", conf,
             *args], cwd=harness.REPO, input=stdin, capture_output=True,
            timeout=300, check=True).stdout
    data = os.urandom(data_mib * 2 ** 20)
    attachment = json.loads(agent("attach", vid))
    agent("write", attachment["id"], stdin=data)
    agent("detach", attachment["id"])

    def check() -> None:
        """The bytes written are still there (read through an agent)."""
        attachment = json.loads(agent("attach", vid))
        try:
            assert agent("read", attachment["id"], "--length",
                         str(len(data))) == data, "the bytes changed"
        finally:
            agent("detach", attachment["id"])
    return vid, check


def move(client, vid: str, backend: str) -> float:
    """Retype to ``on-<backend>``; seconds until it is there."""
    started = time.perf_counter()
    resp = client.post("/volumes/%s/action" % vid, {"os-retype": {
        "new_type": "on-" + backend, "migration_policy": "on-demand"}})
    assert resp.status_code == 202, resp.text

    def there():
        shown = client.get("/volumes/%s" % vid).json()["volume"]
        if shown["migration_status"] == "error":
            raise RuntimeError("the move failed: %s" % shown)
        return (shown["status"], shown["migration_status"],
                shown["volume_type"]) == ("available", "success",
                                          "on-" + backend)
    harness.wait_for(there, timeout=600, interval=0.05,
                     what="the move to " + backend)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1, help="GiB")
    parser.add_argument("--data-mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    times = collections.defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="ashlar-moves-") as folder, \
            deployment(pathlib.Path(folder)) as (dep, client):
        vid, check = written_volume(dep, client, args.size, args.data_mib)
        for _ in range(args.rounds):
            for source, dest in zip(CIRCUIT[:-1], CIRCUIT[1:], strict=True):
                seconds = move(client, vid, dest)
                times[(source, dest)].append(seconds)
                print(json.dumps({
                    "from": source, "to": dest, "s": round(seconds, 3),
                    "size_gib": args.size, "data_mib": args.data_mib,
                    "MiB/s": round(args.size * 1024 / seconds, 1)}),
                    flush=True)
            check()
    print("| from \\ to | " + " | ".join(CIRCUIT[:4]) + " |")
    print("|---" * 5 + "|")
    for source in CIRCUIT[:4]:
        cells = ["%.2f s" % statistics.median(times[(source, dest)])
                 if (source, dest) in times else "-" for dest in CIRCUIT[:4]]
        print("| %s | %s |" % (source, " | ".join(cells)))


if __name__ == "__main__":
    main()
