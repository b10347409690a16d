"""Both sides of ``side_by_side.py --auth keystone`` behind one real Keystone.

One Keystone (``deploy/testbed/components/keystone.py``) serves the whole
run.  The bench sends a project-scoped token of ``bench-admin`` (role
``admin`` on project ``bench``: the bench creates types and lists pools)
with ``--auth-scheme none --header "X-Auth-Token: ..."``, and its attachment
deletes a service token (``--detach-header "X-Service-Token: ..."``) of the
user with role ``service``, as Nova's carry; both apis check them
with keystonemiddleware, logging in as the same service user, each with its
own in-process token cache (no memcached on either side).

The anchor is started as its ``run.sh`` starts it (same config files, pid
files, logs and state, so ``stop.sh``, ``procstats.sh`` and
``s6_extra_backend.sh`` work unchanged), with one more config file that
turns keystone auth on; ``run.sh`` itself cannot be used, as its readiness
check sends a noauth token.  Ashlar's api gets the same ``[api]
auth_strategy = keystone`` and ``[keystone_authtoken]`` section.
"""

import contextlib
import itertools
import pathlib
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from deploy.testbed import harness
from deploy.testbed.components import keystone as keystone_component

PROJECT = "bench"
ANCHOR_POOLS = {"anchor@ma#pool0", "anchor@plain#pool0"}
ANCHOR_SERVICES = {("cinder-scheduler", "anchor"),
                   ("cinder-volume", "anchor@ma"),
                   ("cinder-volume", "anchor@plain")}
READY_TIMEOUT = 180.0
#: Requests of ``warm``: each on a new connection, 4 at a time, so that
#: every api worker of either side (2) takes some.
WARM_REQUESTS = 16


class Auth:
    """The run's Keystone, its bench user and the service user."""

    def __init__(self, stack: contextlib.ExitStack, out: pathlib.Path) -> None:
        keystone_component.available()
        self.keystone = stack.enter_context(
            keystone_component.Keystone(out / "keystone"))
        self.personas = self.keystone.personas(projects=(PROJECT,))
        self.project = self.personas.projects[PROJECT]

    def token(self) -> str:
        """A fresh project-scoped token of the bench user."""
        return self.keystone.project_token(
            self.personas["%s-admin" % PROJECT])

    def authtoken(self) -> str:
        """The ``[keystone_authtoken]`` section of either api."""
        return self.keystone.authtoken_section(self.personas.service)

    def bench_flags(self, token: str) -> list[str]:
        """bench.py's token, and the service token its attachment deletes
        carry (a compute service's, as Nova sends: its ``X-Service-Roles``
        header is what noauth mode trusts instead)."""
        service = self.keystone.project_token(self.personas.service)
        return ["--auth-scheme", "none", "--header", "X-Auth-Token: " + token,
                "--detach-header", "X-Service-Token: " + service]


def side_credentials(auth: Auth | None) -> tuple[str | None, list[str]]:
    """One side's token and bench.py flags for a round: fresh ones behind
    Keystone, none (bench.py's noauth default) without."""
    if auth is None:
        return None, []
    token = auth.token()
    return token, auth.bench_flags(token)


def warm(endpoint: str, flags: list[str]) -> None:
    """Send the bench's token and service token (its ``--header`` and
    ``--detach-header``) to every api worker before the timed scenarios.

    keystonemiddleware validates a token once per worker process and then
    caches it; a first validation costs Keystone far more than an attach
    cycle, a fixed cost that would weigh on the faster side's short S3 run
    more than on the slower side's long one.  Both sides get the same
    warm-up.
    """
    headers = dict(value.split(": ", 1) for flag, value in itertools.pairwise(
        flags) if flag in ("--header", "--detach-header"))

    def types(_number: int) -> None:
        request = urllib.request.Request(endpoint + "/types", headers=headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(types, range(WARM_REQUESTS)))


def start_anchor(anchor: pathlib.Path, venv: pathlib.Path,
                 state: pathlib.Path, conf: str, env: dict,
                 auth: Auth, token: str) -> float:
    """The anchor's services as ``run.sh`` starts them, with keystone auth;
    return the seconds until its services are up and its pools listed."""
    run, logs = state / "run", state / "logs"
    for folder in (run, logs, state / "lock", state / "coordination"):
        folder.mkdir(parents=True, exist_ok=True)
    port = env.get("PORT", "8776")
    (run / "port.conf").write_text(
        "[DEFAULT]\nosapi_volume_listen_port = %s\nstate_path = %s\n"
        "api_paste_config = %s\nresource_query_filters_file = %s\n"
        "[oslo_concurrency]\nlock_path = %s\n[coordination]\n"
        "backend_url = file://%s\n" % (
            port, state, anchor / "etc" / "api-paste.ini",
            anchor / "etc" / "resource_filters.json", state / "lock",
            state / "coordination"))
    keystone_conf = run / "keystone.conf"
    keystone_conf.write_text("[DEFAULT]\nauth_strategy = keystone\n"
                             + auth.authtoken())
    env = dict(env, PYTHONPATH=str(anchor))  # anchor_driver.py
    started = time.monotonic()
    for svc in ("api", "scheduler", "volume"):
        with open(logs / ("cinder-%s.stdout" % svc), "ab") as out:
            proc = subprocess.Popen(
                [str(venv / "bin" / ("cinder-" + svc)), "--config-file", conf,
                 "--config-file", str(run / "port.conf"), "--config-file",
                 str(keystone_conf), "--log-file",
                 str(logs / ("cinder-%s.log" % svc))],
                env=env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        (run / ("%s.pid" % svc)).write_text(str(proc.pid))
    client = harness.Client("http://127.0.0.1:%s/v3/%s" % (
        port, auth.project), version="3.54", token=token)
    harness.wait_for(lambda: _anchor_ready(client), timeout=READY_TIMEOUT,
                     interval=0.5, what="the anchor's services and pools "
                     "through keystone auth (logs in %s)" % logs)
    return time.monotonic() - started


def _anchor_ready(client: harness.Client) -> bool:
    """run.sh's readiness: scheduler and both backends up, both pools
    listed."""
    services = client.get("/os-services").json()["services"]
    up = {(s["binary"], s["host"]) for s in services
          if s["state"] == "up" and s["status"] == "enabled"}
    return ANCHOR_SERVICES <= up and ANCHOR_POOLS <= set(client.pools())
