"""Real clients against real Ashlar processes.

One deployment serves the whole session (each of tox's two xdist workers
has its own, and runs whole files): ``ashlar-api`` under gunicorn (two
workers), one scheduler, one volume service and one backup service, on a
fresh RabbitMQ vhost and a fresh PostgreSQL database
(``deploy.testbed.harness``).  The API pages volume lists at ``MAX_LIMIT``
items, so every client that lists more than that has to follow
``volumes_links`` as it would against Cinder.
"""

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest
from openstack import connection as sdk_connection

from deploy.testbed import harness

#: The project the CLI tests work in (cinderclient noauth: user:project).
PROJECT = "c0ffee00c0ffee00c0ffee00c0ffee00"
USER = "alice"
#: Small pages, so clients must follow next links to see whole lists.
MAX_LIMIT = 3
#: The volume host the tests start.
VOLUME_HOST = "compat1"
#: The backup service the tests start, and its chunk size (small, so a
#: backup of a 1 GiB volume is many chunks, nearly all of zeros).
BACKUP_HOST = "compat-backup"
BACKUP_CHUNK = 4 * 1024 * 1024
CLI_TIMEOUT = 120
#: An id no resource has, fixed: test ids made of it must be the same in
#: every xdist worker's collection.
NO_SUCH_ID = "0ddba11c-0ffe-4000-8000-00000000dead"


@dataclass
class Ashlar:
    """A running deployment and how to reach it."""

    deployment: harness.Deployment
    root: str  # http://127.0.0.1:PORT

    @property
    def endpoint(self) -> str:
        """The project-less v3 endpoint, as clients are usually given."""
        return self.root + "/v3"

    def http(self, token: str = "admin:" + PROJECT, version: str = "latest",
             **headers: str) -> harness.Client:
        """A raw HTTP client on the project-less endpoint."""
        client = harness.Client(self.endpoint, version=version, token=token,
                                headers=headers)
        if version is None:
            del client.session.headers["OpenStack-API-Version"]
        return client


@pytest.fixture(scope="session")
def ashlar(tmp_path_factory):
    transport_url, remove_vhost = harness.broker_vhost()
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(tmp_path_factory.mktemp("compat"), transport_url,
                             db_url, api_workers=2)
    dep.db_sync()
    try:
        dep.start("scheduler", "services.scheduler", "compat-sched")
        dep.start("volume", "services.volume", VOLUME_HOST)
        dep.start_backup(BACKUP_HOST, chunk_bytes=BACKUP_CHUNK)
        dep.start("api", "services.api", "compat-api",
                  extra="[api]\nmax_limit = %d\n" % MAX_LIMIT)
        running = Ashlar(dep, "http://127.0.0.1:%d" % dep.port)
        client = running.http()
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the volume service to report its pool")
        yield running
    finally:
        dep.stop_all()
        drop()
        remove_vhost()


@pytest.fixture(scope="module")
def bs(ashlar):
    """openstacksdk's block-storage proxy on the deployment (no auth)."""
    conn = sdk_connection.Connection(
        auth_type="none", block_storage_endpoint_override=ashlar.endpoint,
        block_storage_api_version="3")
    yield conn.block_storage
    conn.close()


# -- command-line clients ----------------------------------------------------
@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def ok(self) -> "Result":
        assert self.returncode == 0, (
            "exit %d\nstdout:\n%s\nstderr:\n%s"
            % (self.returncode, self.stdout, self.stderr))
        return self


def _run(argv: list[str], env: dict) -> Result:
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("OS_", "CINDER_"))}
    full_env.update(env)
    proc = subprocess.run(argv, capture_output=True, text=True, env=full_env,
                          timeout=CLI_TIMEOUT, cwd=harness.REPO)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="session")
def cinder(ashlar):
    """Run ``cinder ARGS...`` with Cinder's noauth, as an operator would
    (as ``user`` of ``project``: alice of PROJECT unless told)."""
    def run(*args: str, endpoint: str | None = None, project: str = PROJECT,
            user: str = USER) -> Result:
        return _run([sys.executable, "-m", "cinderclient.shell", *args], {
            "OS_AUTH_TYPE": "noauth", "OS_USER_ID": user,
            "OS_PROJECT_ID": project,
            "CINDER_ENDPOINT": endpoint or ashlar.endpoint})
    return run


@pytest.fixture(scope="session")
def openstack(ashlar):
    """Run ``openstack --os-auth-type none ... ARGS`` and parse ``-f json``."""
    def run(*args: str, parse: bool = True):
        result = _run([sys.executable, "-m", "openstackclient.shell",
                       "--os-auth-type", "none",
                       "--os-endpoint", ashlar.endpoint, *args], {})
        if not parse:
            return result
        result.ok()
        return json.loads(result.stdout) if result.stdout.strip() else None
    return run


# -- reading cinderclient's tables -------------------------------------------
_ROW = re.compile(r"^\|(.*)\|\s*$")


def tables(text: str) -> list[list[dict[str, str]]]:
    """Parse every prettytable in ``text`` into a list of row dicts.

    A row whose first cell is empty continues the previous one (a wrapped
    cell); its cells are joined with a newline.
    """
    found: list[list[dict[str, str]]] = []
    header: list[str] | None = None
    borders = 0
    for line in text.splitlines():
        if line.startswith("+") and not line.strip("+-"):
            borders += 1
            if borders == 1:
                header, current = None, []
            elif borders == 3:
                found.append(current)
                borders = 0
            continue
        match = _ROW.match(line)
        if not match or borders == 0:
            continue
        cells = [c.strip() for c in match.group(1).split("|")]
        if header is None:
            header = cells
        elif cells[0] == "" and current:
            for key, cell in zip(header, cells, strict=False):
                if cell:
                    current[-1][key] = (current[-1][key] + "\n" + cell).strip()
        else:
            current.append(dict(zip(header, cells, strict=False)))
    return found


def properties(text: str) -> dict[str, str]:
    """The Property/Value table a show command prints, as a dict."""
    for table in tables(text):
        if table and "Property" in table[0]:
            return {row["Property"]: row["Value"] for row in table}
    raise AssertionError("no Property/Value table in:\n" + text)


def rows(text: str) -> list[dict[str, str]]:
    """The first table's rows."""
    found = tables(text)
    assert found, "no table in:\n" + text
    return found[0]


def wait_volume(ashlar: Ashlar, volume_id: str, status: str | None,
                project: str = PROJECT) -> None:
    harness.Client(ashlar.endpoint, token="admin:" + project).wait_status(
        volume_id, status, timeout=60)
