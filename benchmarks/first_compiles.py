"""What a fresh api worker still compiles on its first requests.

Starts ``ma_cluster.Cluster`` (console scripts, one volume service), then
builds one more api worker in this process from the cluster's ``api.conf``
(``services.api.wsgi``: its warm-up included) and serves it on a thread
(wsgiref).  Runs ``first_requests``' flow through it ``--flows`` times and
prints JSON: per flow, its milliseconds by step and every SQL statement
SQLAlchemy compiled meanwhile (``SQLCompiler``), with the milliseconds the
compile took and the Ashlar functions that ran it.  A warm worker compiles
none; what the first flow lists is what the warm-up leaves cold::

    python -m benchmarks.first_compiles [--db mysqldb] [--flows 2]
"""

import argparse
import json
import os
import pathlib
import threading
import time
import traceback
import urllib.parse
from wsgiref import simple_server

from sqlalchemy.sql import compiler

from benchmarks import first_requests
from benchmarks import ma_cluster

#: Where Ashlar's own frames are (the callers a compile is charged to).
_OURS = ("/common/", "/services/", "/drivers/")


class Compiles:
    """Records each ``SQLCompiler`` built from now on."""

    def __init__(self) -> None:
        self.seen: list[dict] = []
        self._lock = threading.Lock()
        build = compiler.SQLCompiler.__init__
        recorder = self

        def timed(compiled: compiler.SQLCompiler, *args, **kwargs) -> None:
            start = time.perf_counter()
            build(compiled, *args, **kwargs)
            recorder.add(compiled, time.perf_counter() - start)
        compiler.SQLCompiler.__init__ = timed

    def add(self, compiled: compiler.SQLCompiler, seconds: float) -> None:
        callers = [frame for frame in traceback.extract_stack()[:-2]
                   if any(part in frame.filename for part in _OURS)]
        with self._lock:
            self.seen.append({
                "ms": round(seconds * 1000, 2),
                "sql": " ".join(str(compiled).split())[:100],
                "by": [f"{pathlib.Path(f.filename).stem}.{f.name}"
                       for f in callers[-3:][::-1]]})

    def take(self) -> list[dict]:
        with self._lock:
            seen, self.seen = self.seen, []
        return seen


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *_args) -> None:
        pass


def serve_a_worker(cluster: ma_cluster.Cluster) -> str:
    """Build an api worker here from the cluster's config and serve it on a
    thread; its endpoint."""
    log = cluster.folder / "in-process-api.conf"
    log.write_text("[DEFAULT]\nlog_file = %s\n"
                   % (cluster.folder / "in-process-api.log"))
    os.environ["ASHLAR_CONFIG_FILES"] = "%s,%s" % (
        cluster.folder / "api.conf", log)
    from services.api import wsgi
    server = simple_server.make_server("127.0.0.1", 0, wsgi.application,
                                       handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    path = urllib.parse.urlparse(cluster.dep.endpoint).path
    return "http://127.0.0.1:%d%s" % (server.server_port, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="mysqldb",
                        choices=["mysql", "mysqldb", "postgresql"])
    parser.add_argument("--flows", type=int, default=2)
    args = parser.parse_args()
    cluster = ma_cluster.Cluster(args.db, 1, scripts=True, volumes="one")
    flows = []
    try:
        cluster.start()
        ma = first_requests.make_type(cluster.dep.endpoint, "cold-ma",
                                      {"multiattach": "<is> True"})
        unsat = first_requests.make_type(cluster.dep.endpoint, "cold-unsat", {
            "multiattach": "<is> True", "volume_backend_name": "nosuch"})
        compiles = Compiles()
        endpoint = serve_a_worker(cluster)
        warm_up = compiles.take()
        for _ in range(args.flows):
            took = first_requests.Flow(endpoint).run(ma, unsat)
            flows.append({"ms": took, "compiled": compiles.take()})
    finally:
        cluster.stop()
    print(json.dumps({"compiled_at_start": len(warm_up), "flows": flows},
                     indent=1), flush=True)
    # The worker's RPC servers (capability cache, door) are threads of this
    # process that its stop would wait for; the cluster is gone already.
    os._exit(0)


if __name__ == "__main__":
    main()
