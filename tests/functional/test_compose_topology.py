"""deploy/docker-compose.yml walked with real processes, without Docker.

The compose file is read as ``docker-compose config`` resolves it (with a
``.env`` that ``deploy/compose/make-env.sh`` writes into a temporary folder,
never ``deploy/.env``).  Every service that runs the Ashlar image is then
run here as a local process, in ``depends_on`` order and honouring each
condition, with:

- the service's own ``command`` (the image has no ENTRYPOINT), its
  programs being the console scripts of setup.cfg that ``pip install``
  puts in the image, and ``python`` for the healthchecks;
- the service's ``environment`` from the compose file, in an environment of
  its own (``HOSTNAME`` the service's ``hostname``, or a fresh container id
  as Docker gives one);
- its mounts: a bind mount is its source (the unmodified
  ``deploy/compose/ashlar.conf``), a named volume a folder that outlives
  ``down``, and every other path of the image a folder of the "container"
  that ``down`` removes.

Only what cannot be the same on this machine is rewritten, through the
environment that oslo.config reads after the config file (``OS_GROUP__OPT``,
as the compose file itself supplies the secrets):

- ``OS_DEFAULT__TRANSPORT_URL``, which names the ``rabbitmq`` service: the
  machine's RabbitMQ, on a fresh vhost;
- ``OS_DATABASE__CONNECTION``, which names the ``postgres`` service: a fresh
  database on the machine's PostgreSQL, with the same driver;
- the config file's absolute paths: where the mounts put them here;
- ``[DEFAULT] host``: the container's hostname (socket.gethostname() in a
  container), and ``[api] bind_host``/``bind_port`` of the service that
  publishes a port: the published address, on a free port (a healthcheck's
  ``127.0.0.1:<container port>`` follows it).

A long-running service counts as started once its compose healthcheck
command, run here with the container's environment, passes within the time
Docker gives it (start_period + interval x retries); it must fail before the
service starts, so no healthcheck is vacuous.  ``down`` is SIGTERM to the
command of each service that nothing running depends on, all at once, and
each must exit within the stop grace period (Docker would SIGKILL it); then
the containers' own folders go.  ``up`` again reruns the one-shot services
(db-sync, users) and starts the rest, on the same database, broker vhost and
named volumes.

Not reproduced: the image's non-root user (the processes run as the test
does), read-only mounts, and the network between containers (all on
127.0.0.1).
"""

import base64
import configparser
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from urllib import parse

import pytest
import sqlalchemy as sa
import yaml

from deploy.testbed import harness

DEPLOY = os.path.join(harness.REPO, "deploy")
COMPOSE_FILE = os.path.join(DEPLOY, "docker-compose.yml")
DOCKERFILE = os.path.join(DEPLOY, "Dockerfile")
CONFIG_FILE = os.path.join(DEPLOY, "compose", "ashlar.conf")
#: Services of other images, replaced by the machine's own.
INFRASTRUCTURE = {"postgres", "rabbitmq"}
#: Docker's default stop grace period (``stop_grace_period``).
STOP_GRACE = 10.0
#: What each depends_on condition waits for.
CONDITIONS = {"service_started": {"started", "healthy", "completed"},
              "service_healthy": {"healthy"},
              "service_completed_successfully": {"completed"}}
ONE_SHOT_TIMEOUT = 120.0
HEALTHCHECK_TIMEOUT = 30.0  # Docker's default healthcheck timeout
MAKE_ENV_SECRETS = ("RABBITMQ_PASSWORD", "POSTGRES_PASSWORD",
                    "ASHLAR_OPERATOR_PASSWORD", "ASHLAR_API_BIND")
OPERATOR = "operator"


# -- the compose file, as docker-compose resolves it -------------------------
def _docker_compose_missing() -> None:
    message = ("docker-compose is not installed (Debian: apt-get install "
               "docker-compose)")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def resolved_compose(tmp_path) -> tuple[dict, dict]:
    """``docker-compose config`` of deploy/docker-compose.yml with a
    make-env.sh ``.env`` written under ``tmp_path``; the resolved file and
    the ``.env``'s values."""
    if shutil.which("docker-compose") is None:
        _docker_compose_missing()
    scripts = tmp_path / "deploy" / "compose"
    scripts.mkdir(parents=True)
    shutil.copy(os.path.join(DEPLOY, "compose", "make-env.sh"), scripts)
    subprocess.run(["sh", str(scripts / "make-env.sh")], check=True,
                   capture_output=True, timeout=30)
    env_file = tmp_path / "deploy" / ".env"
    values = dict(line.split("=", 1) for line in
                  env_file.read_text().splitlines()
                  if "=" in line and not line.startswith("#"))
    clean = {k: v for k, v in os.environ.items()
             if k not in MAKE_ENV_SECRETS}
    done = subprocess.run(["docker-compose", "-f", COMPOSE_FILE,
                           "--env-file", str(env_file), "config"],
                          env=clean, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout), values


def console_scripts() -> dict[str, str]:
    """setup.cfg's console scripts: name -> ``module:function``."""
    parser = configparser.ConfigParser()
    parser.read(os.path.join(harness.REPO, "setup.cfg"))
    lines = parser["options.entry_points"]["console_scripts"].splitlines()
    return {name.strip(): target.strip() for name, _, target in
            (line.partition("=") for line in lines) if target}


def image() -> dict:
    """What deploy/Dockerfile says about the Ashlar image's run time."""
    with open(DOCKERFILE) as handle:
        text = handle.read().replace("\\\n", " ")
    made = [path for args in re.findall(r"mkdir -p ((?:/\S+\s*)+)", text)
            for path in args.split()]
    workdir = re.findall(r"^WORKDIR\s+(\S+)", text, re.M)
    home = re.findall(r"useradd .*--home-dir\s+(\S+)", text)
    return {"entrypoint": re.findall(r"^ENTRYPOINT\s+(.+)$", text, re.M),
            "workdir": workdir[-1], "dirs": made + workdir,
            "home": home[-1] if home else "/"}


def seconds(duration: str | int | None, default: float) -> float:
    """A compose duration (``1m30s``, ``10s``, ``500ms``) in seconds."""
    if duration is None:
        return default
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|us|m|s)", str(duration))
    assert parts, duration
    return sum(float(n) * units[unit] for n, unit in parts)


def topological(services: dict) -> list[str]:
    """The services in an order that starts each after what it depends
    on."""
    order: list[str] = []

    def visit(name: str, path: tuple) -> None:
        assert name not in path, "depends_on cycle: %s" % (path + (name,),)
        if name in order:
            return
        for dependency in services[name].get("depends_on", {}):
            visit(dependency, path + (name,))
        order.append(name)
    for name in sorted(services):
        visit(name, ())
    return order


# -- the "containers" --------------------------------------------------------
class Container:
    """One service's process, as Docker would run it, on this machine."""

    def __init__(self, topology: "Topology", name: str) -> None:
        self.topology = topology
        self.name = name
        self.spec = topology.services[name]
        self.hostname = self.spec.get("hostname") or uuid.uuid4().hex[:12]
        topology.counter += 1
        self.root = topology.tmp / "containers" / (
            "%s-%d" % (name, topology.counter))
        self.mounts = {}
        for mount in self.spec.get("volumes", []):
            source, target = mount.split(":")[:2]
            if not source.startswith("/"):
                assert source in topology.config["volumes"], mount
                source = str(topology.named_volume(source))
            self.mounts[target] = source
        for path in topology.image["dirs"]:
            os.makedirs(self.path(path), exist_ok=True)
        self.proc: subprocess.Popen | None = None
        self.log = topology.tmp / "logs" / (self.root.name + ".log")

    def path(self, container_path: str) -> str:
        """Where ``container_path`` of this container is on this machine."""
        for target in sorted(self.mounts, key=len, reverse=True):
            if container_path == target or container_path.startswith(
                    target.rstrip("/") + "/"):
                return self.mounts[target] + container_path[len(target):]
        return str(self.root) + container_path

    def rewrite(self, text: str, shell: bool = False) -> str:
        """A command argument (a shell command line: ``shell``) with the
        mounts' paths and the published port as they are here."""
        quote = shlex.quote if shell else str
        for target in sorted(self.mounts, key=len, reverse=True):
            text = re.sub(r"%s(?=[/\s\"']|$)" % re.escape(target),
                          quote(self.path(target)).replace("\\", r"\\"),
                          text)
        for inside, outside in self.topology.ports.get(self.name, {}).items():
            text = text.replace("127.0.0.1:%d" % inside,
                                "127.0.0.1:%d" % outside)
        return text

    def environment(self) -> dict:
        topology = self.topology
        env = {"PATH": "%s:/usr/local/bin:/usr/bin:/bin" % topology.bin,
               "HOME": self.path(topology.image["home"]),
               "HOSTNAME": self.hostname, "LANG": "C.UTF-8",
               "PYTHONPATH": harness.REPO}
        for key, value in (self.spec.get("environment") or {}).items():
            env[key] = topology.infrastructure_url(key, str(value))
        for section, options in topology.file_paths.items():
            for option, value in options.items():
                env["OS_%s__%s" % (section.upper(), option.upper())] = \
                    self.path(value)
        env["OS_DEFAULT__HOST"] = self.hostname
        for bind_host, inside, outside in self.topology.published(self.name):
            assert inside == topology.bind_port, (
                "%s publishes %d, the api listens on %d"
                % (self.name, inside, topology.bind_port))
            env["OS_API__BIND_HOST"] = bind_host
            env["OS_API__BIND_PORT"] = str(outside)
        return env

    def start(self) -> None:
        command = self.spec["command"]
        assert not self.topology.image["entrypoint"], (
            "the image has an ENTRYPOINT: %s" % self.topology.image)
        assert command[0] in self.topology.scripts, command
        self.log.parent.mkdir(exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [self.rewrite(arg) for arg in command],
                env=self.environment(),
                cwd=self.path(self.topology.image["workdir"]),
                stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        self.started = time.monotonic()
        self.deadline = self.budget(self.spec)

    def output(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() \
            else ""
        return "--- %s (%s) ---\n%s" % (self.name, self.log, text[-4000:])

    def healthcheck(self) -> subprocess.CompletedProcess:
        """Run the service's compose healthcheck here, as ``docker exec``
        would in the container."""
        test = self.spec["healthcheck"]["test"]
        kind, args = test[0], test[1:]
        # NOTE: docker-compose config keeps "$$" escaped; Docker runs "$".
        args = [arg.replace("$$", "$") for arg in args]
        if kind == "CMD-SHELL":
            args = ["/bin/sh", "-c", self.rewrite(" ".join(args), True)]
        else:
            assert kind == "CMD", test
            args = [self.rewrite(arg) for arg in args]
        timeout = seconds(self.spec["healthcheck"].get("timeout"),
                          HEALTHCHECK_TIMEOUT)
        try:
            return subprocess.run(
                args, env=self.environment(),
                cwd=self.path(self.topology.image["workdir"]),
                capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            # Docker counts a check that outlives its timeout as failed.
            return subprocess.CompletedProcess(args, -1, exc.stdout,
                                               exc.stderr)

    @staticmethod
    def budget(spec: dict) -> float:
        """Seconds Docker gives the service: to become healthy (start
        period, then ``retries`` failed checks ``interval`` apart), or
        ours to complete for a one-shot."""
        check = spec.get("healthcheck")
        if not check:
            return ONE_SHOT_TIMEOUT
        return (seconds(check.get("start_period"), 0)
                + seconds(check.get("interval"), 30)
                * int(check.get("retries", 3)))

    def overdue(self) -> bool:
        return time.monotonic() - self.started > self.deadline

    def terminate(self) -> None:
        """SIGTERM to the command, as ``docker-compose down`` sends it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def wait_stopped(self, since: float) -> float | None:
        """Seconds from ``since`` to the command's exit, None if the grace
        period ran out (Docker then kills it); the container's other
        processes are killed either way."""
        grace = seconds(self.spec.get("stop_grace_period"), STOP_GRACE)
        try:
            self.proc.wait(timeout=max(0.0, since + grace - time.monotonic()))
            took = time.monotonic() - since
        except subprocess.TimeoutExpired:
            took = None
        self.kill()
        return took

    def kill(self) -> None:
        """What removing the container does to whatever is left in it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)

    def remove(self) -> None:
        shutil.rmtree(self.root)


class Topology:
    """The compose project's services on this machine's broker and
    database."""

    def __init__(self, config: dict, tmp, transport_url: str,
                 db_url: str) -> None:
        self.config = config
        self.services = config["services"]
        self.tmp = tmp
        self.transport_url = transport_url
        self.db_url = db_url
        self.image = image()
        self.scripts = console_scripts()
        self.bin = tmp / "bin"
        self.write_scripts()
        self.counter = 0
        ashlar_images = {spec["image"] for spec in self.services.values()
                         if spec.get("build", {}).get("dockerfile")
                         == "deploy/Dockerfile"}
        self.ashlar = [name for name in topological(self.services)
                       if self.services[name].get("image") in ashlar_images]
        self.one_shot = {dependency for spec in self.services.values()
                         for dependency, how in
                         spec.get("depends_on", {}).items()
                         if how.get("condition")
                         == "service_completed_successfully"}
        self.file_paths = self.config_file_paths()
        conf = configparser.ConfigParser(interpolation=None)
        conf.read(CONFIG_FILE)
        assert not conf.has_option("DEFAULT", "host"), (
            "the hostnames of the compose file name the services only "
            "while ashlar.conf sets no host")
        self.bind_port = int(conf.get("api", "bind_port", fallback=8776))
        self.ports = {}
        for name in self.ashlar:
            for _host, inside, _outside in self.published(name):
                self.ports.setdefault(name, {})[inside] = harness.free_port()
        self.running: dict[str, Container] = {}
        self.started: set[str] = set()
        self.runs: dict[str, list[str]] = {}

    def write_scripts(self) -> None:
        """The image's programs: setup.cfg's console scripts (pip writes
        the same) and ``python``."""
        self.bin.mkdir()
        for name, target in self.scripts.items():
            module, function = target.split(":")
            script = self.bin / name
            script.write_text(
                "#!%s\nimport sys\nfrom %s import %s\n"
                "sys.argv[0] = %r\nsys.exit(%s())\n"
                % (sys.executable, module, function, name, function))
            script.chmod(0o755)
        python = self.bin / "python"
        python.write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
        python.chmod(0o755)

    def published(self, name: str) -> list[tuple[str, int, int]]:
        """(host address, container port, port here) of each published
        port."""
        found = []
        for port in self.services[name].get("ports", []):
            host, _published, inside = port.split("/")[0].split(":")
            found.append((host, int(inside),
                          self.ports.get(name, {}).get(int(inside), 0)))
        return found

    @staticmethod
    def config_file_paths() -> dict:
        """Options of ashlar.conf that are paths inside the container."""
        conf = configparser.ConfigParser(interpolation=None,
                                         default_section="__none__")
        conf.read(CONFIG_FILE)
        return {section: {option: value for option, value in
                          conf[section].items() if value.startswith("/")}
                for section in conf.sections()}

    def named_volume(self, name: str):
        path = self.tmp / "volumes" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def infrastructure_url(self, key: str, value: str) -> str:
        """An environment value naming an infrastructure service: the same
        on this machine's."""
        if key == "OS_DEFAULT__TRANSPORT_URL":
            assert parse.urlsplit(value).hostname == "rabbitmq", value
            return self.transport_url
        if key == "OS_DATABASE__CONNECTION":
            theirs = sa.engine.make_url(value)
            ours = sa.engine.make_url(self.db_url)
            assert theirs.host == "postgres", value
            assert theirs.drivername == ours.drivername, (theirs, ours)
            return self.db_url
        assert not re.search(r"\b(%s)\b" % "|".join(INFRASTRUCTURE), value), (
            key, value)
        return value

    def up(self) -> None:
        """``docker-compose up -d``: each service as soon as every service
        it depends on is started, healthy or completed (as its condition
        says), several at once as Docker does."""
        self.pending = list(self.ashlar)
        self.starting: dict[str, Container] = {}
        self.state: dict[str, str] = {}  # started, healthy, completed
        try:
            outcome = harness.wait_for(
                self._up_step, timeout=sum(Container.budget(
                    self.services[name]) for name in self.ashlar),
                interval=0.2, what="docker-compose up")
        finally:
            # NOTE: what started but failed is stopped with the rest.
            for name, container in self.starting.items():
                if name in self.one_shot:
                    container.kill()
                else:
                    self.running[name] = container
        assert outcome == "up", outcome

    def _ready(self, name: str) -> bool:
        for dependency, how in self.services[name].get(
                "depends_on", {}).items():
            if dependency in INFRASTRUCTURE:
                continue  # this machine's, reachable (harness checked)
            wanted = CONDITIONS[how.get("condition", "service_started")]
            if self.state.get(dependency) not in wanted:
                return False
        return True

    def _up_step(self) -> str | None:
        """Start what can start, look at what started: "up" once all are,
        or what went wrong."""
        ready = [name for name in self.pending if self._ready(name)]
        if self.pending and not ready and not self.starting:
            return "nothing can start: %s" % self.pending
        for name in ready:
            self.pending.remove(name)
            container = Container(self, name)
            if name not in self.one_shot:
                if "healthcheck" not in self.services[name]:
                    return "%s has no healthcheck" % name
                before = container.healthcheck()
                if before.returncode == 0:
                    return ("%s's healthcheck passes before it starts: %s"
                            % (name, before))
            container.start()
            self.started.add(name)
            self.starting[name] = container
            self.state[name] = "started"
        for name, container in list(self.starting.items()):
            problem = self._look(name, container)
            if problem:
                return problem
        return None if self.pending or self.starting else "up"

    def _look(self, name: str, container: Container) -> str | None:
        """Note a started service that completed or became healthy; what
        went wrong with it, if anything."""
        code = container.proc.poll()
        if name in self.one_shot and code == 0:
            self.runs.setdefault(name, []).append(
                container.log.read_text(errors="replace"))
            container.remove()
            self.state[name] = "completed"
        elif code is not None:
            return "%s exited with %s\n%s" % (name, code, container.output())
        elif name not in self.one_shot and \
                container.healthcheck().returncode == 0:
            self.running[name] = container
            self.state[name] = "healthy"
        elif container.overdue():
            return "%s is not %s after %.0fs\n%s" % (
                name, "done" if name in self.one_shot else "healthy",
                container.deadline, container.output())
        else:
            return None
        del self.starting[name]
        return None

    def down(self) -> dict[str, float | None]:
        """``docker-compose down``: SIGTERM to the services nothing running
        depends on, all at once, then to the next ones; containers removed,
        named volumes kept.  Each service's seconds to exit (None: still
        running after its grace period, killed as Docker would)."""
        took = {}
        while self.running:
            needed = {dependency for name in self.running for dependency in
                      self.services[name].get("depends_on", {})}
            leaves = [self.running.pop(name) for name in list(self.running)
                      if name not in needed]
            assert leaves, self.running
            started = time.monotonic()
            for container in leaves:
                container.terminate()
            for container in leaves:
                took[container.name] = container.wait_stopped(started)
                container.remove()
        return took


# -- the operator's client ---------------------------------------------------
def operator_client(topology: Topology, password: str | None) -> \
        harness.Client:
    """docs/install.md's operator ("Docker Compose"): http_basic at the
    published address."""
    (host, _inside, port), = [p for name in topology.ashlar
                              for p in topology.published(name)]
    client = harness.Client("http://%s:%d/v3" % (host, port))
    client.session.headers.pop("X-Auth-Token")
    if password is not None:
        pair = "%s:%s" % (OPERATOR, password)
        client.session.headers["Authorization"] = \
            "Basic " + base64.b64encode(pair.encode()).decode()
    return client


def services_up(client: harness.Client) -> dict:
    resp = client.get("/os-services")
    assert resp.status_code == 200, resp.text
    return {(s["binary"], s["host"]): s["state"]
            for s in resp.json()["services"]}


def new_volume(client: harness.Client, name: str) -> str:
    vid = client.create_volume(size=1, name=name)["id"]
    client.wait_status(vid, "available", timeout=60)
    return vid


def state(client: harness.Client) -> dict:
    """Every volume and attachment, as the operator sees them."""
    volumes = client.get("/volumes/detail", params={"all_tenants": 1})
    attachments = client.get("/attachments/detail",
                             params={"all_tenants": 1})
    assert volumes.status_code == 200, volumes.text
    assert attachments.status_code == 200, attachments.text
    return {"volumes": {v["id"]: {k: v[k] for k in (
                "name", "status", "size", "os-vol-host-attr:host",
                "attachments")} for v in volumes.json()["volumes"]},
            "attachments": {a["id"]: {k: a[k] for k in (
                "status", "volume_id", "instance", "attach_mode",
                "connection_info")}
                for a in attachments.json()["attachments"]}}


# -- the walk ------------------------------------------------------------------
@pytest.fixture
def compose(tmp_path):
    """The compose topology on a fresh vhost and database, and the
    operator's password from make-env.sh; ``down`` at the end."""
    config, env = resolved_compose(tmp_path)
    transport_url, remove_vhost = harness.broker_vhost()
    try:
        db_url, drop = harness.database("postgresql")
        try:
            walked = Topology(config, tmp_path, transport_url, db_url)
            try:
                yield walked, env["ASHLAR_OPERATOR_PASSWORD"]
            finally:
                walked.down()
        finally:
            drop()
    finally:
        remove_vhost()


def test_the_compose_topology_keeps_its_volumes_and_attachments(compose):
    topology, password = compose
    services = topology.services
    assert set(services) - set(topology.ashlar) == INFRASTRUCTURE
    long_running = set(topology.ashlar) - topology.one_shot
    assert long_running == {"api", "scheduler", "volume"}
    assert topology.one_shot == {"db-sync", "users"}
    assert all(services[name]["healthcheck"]["test"]
               for name in long_running)
    assert all(not spec.get("restart") for name, spec in services.items()
               if name in topology.one_shot), "a one-shot that restarts"

    clock = [time.monotonic()]

    def lap(what: str) -> None:
        clock.append(time.monotonic())
        print("%s: %.1fs" % (what, clock[-1] - clock[-2]))

    topology.up()
    lap("up")
    assert topology.started == set(services) - INFRASTRUCTURE
    operator = operator_client(topology, password)
    for refused in (operator_client(topology, None),
                    operator_client(topology, "wrong")):
        assert refused.get("/volumes").status_code == 401

    kept = new_volume(operator, "kept")
    kept_attachment = operator.attach(kept, "compute1")
    assert operator.volume_status(kept) == "in-use"
    # The file backend's volumes live on the named volume "volumes".
    volume_dir = topology.named_volume("volumes") / "volumes"
    assert volume_dir.is_dir(), "no volume files on the named volume"
    backing = [p.name for p in volume_dir.iterdir() if kept in p.name]
    assert len(backing) == 1, list(volume_dir.iterdir())
    before = state(operator)
    assert before["attachments"][kept_attachment]["status"] == "attached"
    # Fixed hostnames: the volume node that comes back owns its volumes.
    assert all("hostname" in services[name] for name in ("scheduler",
                                                          "volume"))
    assert before["volumes"][kept]["os-vol-host-attr:host"] == \
        "%s@file#file" % services["volume"]["hostname"]
    nodes = {("cinder-scheduler", services["scheduler"]["hostname"]): "up",
             ("cinder-volume", "%s@file" % services["volume"]["hostname"]):
             "up"}
    assert services_up(operator) == nodes
    operator.session.close()

    lap("a volume attached")
    took = topology.down()
    lap("down")
    print("seconds from SIGTERM to exit: %s" % took)
    assert set(took) == long_running
    assert all(seconds is not None for seconds in took.values()), (
        "not stopped by SIGTERM within %.0fs: %s" % (STOP_GRACE, took))
    assert not any((topology.tmp / "containers").iterdir())

    topology.up()
    lap("up again")
    assert "exists; left as it is" in topology.runs["users"][-1], \
        topology.runs["users"]
    assert len(topology.runs["db-sync"]) == 2
    assert state(operator) == before
    assert [p.name for p in volume_dir.iterdir() if kept in p.name] == backing
    # The same service rows, up again: no stale row of the old containers.
    assert services_up(operator) == nodes

    # New work after the restart: a new volume attached, and the kept
    # volume detached (by the new volume node) and attached again.
    fresh = new_volume(operator, "fresh")
    fresh_attachment = operator.attach(fresh, "compute1")
    assert operator.delete("/attachments/%s" % kept_attachment) \
        .status_code == 200
    operator.wait_status(kept, "available")
    again = operator.attach(kept, "compute2")
    after = state(operator)
    assert {fresh: "in-use", kept: "in-use"} == {
        vid: after["volumes"][vid]["status"] for vid in (fresh, kept)}
    assert set(after["attachments"]) == {fresh_attachment, again}
    assert all(a["status"] == "attached"
               for a in after["attachments"].values())
    lap("checked, attached again")
    operator.session.close()
