"""An Ashlar deployment shaped like the Cinder anchor: one multiattach and
one plain backend.  Started by the capability benchmarks, or served.

The deployment is the functional tests' (``deploy/testbed/harness.py``):
separate scheduler, API (gunicorn) and volume processes on a fresh RabbitMQ
vhost and a fresh PostgreSQL or MariaDB database.  Two backends mirror the
Cinder anchor's: ``ma`` (raw files, multiattach) and ``plain`` (qcow2, never
multiattach), each on a volume node of its own (``node1@ma``,
``node2@plain``), or with ``--volumes one`` both in one volume service
(``node1@ma``, ``node1@plain``), as the anchor's one ``cinder-volume``
holds both.

Serve one for Ashlar's own benchmarks (``attach_cycle.py``,
``cycle_cost.py``, ``request_cost.py``) or for the Cinder anchor's
``bench.py`` (prints the endpoint and both command lines; Ctrl-C stops
everything)::

    python -m benchmarks.ma_cluster serve [--db mysql|mysqldb|postgresql]
        [--workers 2] [--volumes one|two]

``extra start|stop STATE`` starts or stops a third volume node
(``node3@extra``) of a served deployment: bench.py's S6 start/stop commands.

``--scripts`` (``serve``, ``extra start``) starts the services from their
installed console scripts (``ashlar-api``, ``ashlar-scheduler``,
``ashlar-volume``), as a user would, instead of ``python -m services.X``.
"""

import argparse
import os
import pathlib
import shlex
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROJECT = "ba5eba11ba5eba11ba5eba11ba5eba11"
MA = "[ma]\nvolume_driver = file\nfile_volume_format = raw\n"
PLAIN = "[plain]\nvolume_driver = file\nfile_volume_format = qcow2\n"
EXTRA = "[extra]\nvolume_driver = file\nfile_volume_format = raw\n"
#: Volume services of each layout: (name, host, backends, their config).
VOLUMES = {"two": (("node1", "node1", "ma", MA),
                   ("node2", "node2", "plain", PLAIN)),
           "one": (("node1", "node1", "ma,plain", MA + PLAIN),)}
SCRIPTS = {"services.api": "ashlar-api",
           "services.scheduler": "ashlar-scheduler",
           "services.volume": "ashlar-volume"}


def command(module: str, scripts: bool) -> list[str]:
    """How to run a service: its console script (``scripts``) from this
    interpreter's scripts folder, else ``python -m module``."""
    if not scripts:
        return [sys.executable, "-m", module]
    path = os.path.join(sysconfig.get_path("scripts"), SCRIPTS[module])
    if not os.access(path, os.X_OK):
        raise FileNotFoundError("%s is not installed (pip install -e .)"
                                % path)
    return [path]


class Cluster:
    """Scheduler, API and the volume services, started and stopped."""

    def __init__(self, db: str = "mysql", workers: int = 2,
                 polling_interval: int = 10, report_interval: int = 10,
                 service_down_time: int = 60,
                 folder: str | None = None, scripts: bool = False,
                 api_extra: str = "", token: str | None = None,
                 project: str = PROJECT, volumes: str = "two") -> None:
        """:param api_extra: more of the api's config (an auth mode).
        :param token: the ``X-Auth-Token`` the readiness check sends, and
            ``project`` the endpoint's project (noauth: ``admin:PROJECT``).
        :param volumes: a layout of ``VOLUMES``.
        """
        # NOTE: imported here so that "extra start" (bench.py's S6 start
        # command, timed) spawns the node without importing test helpers.
        from deploy.testbed import harness
        self.folder = pathlib.Path(folder or tempfile.mkdtemp(
            prefix="ashlar-bench-"))
        self.vhost, self._drop_vhost = harness.broker_vhost()
        self.db_url, self._drop_db = harness.database(db)
        self.dep = harness.Deployment(
            self.folder, self.vhost, self.db_url, api_workers=workers,
            polling_interval=polling_interval,
            report_interval=report_interval,
            service_down_time=service_down_time)
        self.dep.endpoint = "http://127.0.0.1:%d/v3/%s" % (self.dep.port,
                                                           project)
        self.client = harness.Client(self.dep.endpoint, token=token)
        self.scripts = scripts
        self.api_extra = api_extra
        self.volumes = VOLUMES[volumes]

    def launch(self, name: str, module: str, host: str, **kwargs) -> None:
        """``Deployment.start``, or the console script with ``scripts``
        (same config, log and session; ``Deployment.stop`` stops it)."""
        if not self.scripts:
            self.dep.start(name, module, host, **kwargs)
            return
        conf = self.dep.config(name, host, **kwargs)
        log = open(self.folder / ("%s.log" % name), "ab")
        self.dep.procs[name] = subprocess.Popen(
            command(module, True) + ["--config-file", conf], cwd=REPO,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def start(self) -> float:
        """Start everything; return seconds until both pools are listed."""
        started = time.monotonic()
        self.dep.db_sync()
        self.launch("scheduler", "services.scheduler", "sched")
        for name, host, backends, extra in self.volumes:
            self.launch(name, "services.volume", host, backends=backends,
                        extra=extra)
        self.launch("api", "services.api", "api", extra=self.api_extra)
        pools = sorted("%s@%s#%s" % (host, backend, backend)
                       for _name, host, backends, _extra in self.volumes
                       for backend in backends.split(","))
        from deploy.testbed import harness
        harness.wait_for(lambda: sorted(self.client.pools()) == pools,
                         timeout=120, what="both pools in get_pools")
        return time.monotonic() - started

    def volume_names(self) -> list[str]:
        """The names (in ``dep.procs``) of the volume services."""
        return [name for name, _host, _backends, _extra in self.volumes]

    def extra_config(self) -> str:
        return self.dep.config("extra", "node3", backends="extra",
                               extra=EXTRA)

    def stop(self) -> None:
        self.dep.stop_all()
        self._drop_db()
        self._drop_vhost()


def start_extra_command(state: pathlib.Path, scripts: bool = False) -> str:
    """A shell command that spawns node3@extra from ``state/extra.conf``
    in a session of its own, writes its pid to ``state/extra.pid`` and
    returns at once: bench.py's S6 start command.  The anchor's is a shell
    script too; a Python launcher would add its own start (about 40 ms) to
    the time until the backend is visible."""
    argv = command("services.volume", scripts) + [
        "--config-file", str(state / "extra.conf")]
    return "cd %s; setsid %s >> %s 2>&1 < /dev/null & echo $! > %s" % (
        shlex.quote(REPO), shlex.join(argv),
        shlex.quote(str(state / "extra.log")),
        shlex.quote(str(state / "extra.pid")))


def s6_flags(state: pathlib.Path, scripts: bool = False) -> list[str]:
    """bench.py's S6 flags for a served deployment's ``state`` folder:
    ``start_extra_command`` to start node3@extra, ``extra stop`` to stop
    it."""
    stop = "cd %s; %s" % (shlex.quote(REPO), shlex.join([
        sys.executable, "-m", "benchmarks.ma_cluster", "extra", "stop",
        str(state)]))
    return ["--s6-start-cmd", start_extra_command(state, scripts),
            "--s6-stop-cmd", stop, "--s6-pool-match", "@extra#",
            "--s6-backend-name", "extra"]


def start_extra(state: pathlib.Path, scripts: bool = False) -> None:
    """Spawn node3@extra (``start_extra_command``) and return at once."""
    subprocess.run(start_extra_command(state, scripts), shell=True,
                   check=True)


def stop_extra(state: pathlib.Path) -> None:
    pidfile = state / "extra.pid"
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.1)
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pidfile.unlink()


def serve(args: argparse.Namespace) -> None:
    # NOTE: handlers, not a blocked signal mask: children inherit the mask
    # and would then ignore the SIGTERM that stops them.
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    cluster = Cluster(args.db, args.workers, scripts=args.scripts,
                      volumes=args.volumes)
    try:
        ready = cluster.start()
        (cluster.folder / "extra.conf").write_text(
            open(cluster.extra_config()).read())
        print("Ashlar ready in %.2f s at %s" % (ready, cluster.dep.endpoint))
        print("State and logs: %s" % cluster.folder)
        print("Attach cycle:\n  python -m benchmarks.attach_cycle "
              "--endpoint %s" % cluster.dep.endpoint)
        print("The Cinder anchor's bench, side by side:\n  python3 "
              "ANCHOR/bench.py --endpoint %s --scenarios S1,S6 %s"
              % (cluster.dep.endpoint, shlex.join(s6_flags(
                  cluster.folder, args.scripts))), flush=True)
        stop.wait()
    finally:
        stop_extra(cluster.folder)
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    srv = sub.add_parser("serve", help="start a deployment until Ctrl-C")
    srv.add_argument("--db", choices=["mysql", "mysqldb", "postgresql"],
                     default="mysql")
    srv.add_argument("--workers", type=int, default=2)
    srv.add_argument("--volumes", choices=sorted(VOLUMES), default="two",
                     help="both backends in one volume service, or each "
                          "on a node of its own")
    srv.add_argument("--scripts", action="store_true",
                     help="start the services from their console scripts")
    extra = sub.add_parser("extra", help="start/stop node3@extra")
    extra.add_argument("action", choices=["start", "stop"])
    extra.add_argument("state", type=pathlib.Path)
    extra.add_argument("--scripts", action="store_true",
                       help="start it from the ashlar-volume console script")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
    elif args.action == "start":
        start_extra(args.state, args.scripts)
    else:
        stop_extra(args.state)


if __name__ == "__main__":
    main()
