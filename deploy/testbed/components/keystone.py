"""A real Keystone for tests and benchmarks, in a virtualenv of its own.

``install()`` (``python -m deploy.testbed.components.keystone install``)
puts the ``keystone`` package and gunicorn in a separate virtualenv, so
Keystone's dependencies never touch Ashlar's.  ``Keystone`` configures,
bootstraps and serves one in a caller's folder (SQLite database, fernet
keys, logs: nothing under /etc); its methods administer it through the
identity API.
"""

import argparse
import fcntl
import grp
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from deploy.testbed import harness

REQUIREMENTS = ("keystone==30.0.0", "gunicorn==27.0.1")
INSTALL_COMMAND = "python -m deploy.testbed.components.keystone install"
COMPONENTS = Path(os.environ.get(
    "ASHLAR_COMPONENTS", "~/.cache/ashlar-components")).expanduser()
VENV = COMPONENTS / "keystone-venv"
#: Written last by ``install``: what was installed, so a rerun is instant.
MARKER = VENV / "ashlar-installed.json"
PIP_TIMEOUT = 1200


# -- installation ---------------------------------------------------------
def installed() -> bool:
    """Whether ``install()`` completed for the current ``REQUIREMENTS``."""
    try:
        recorded = json.loads(MARKER.read_text())
    except (OSError, ValueError):
        return False
    # NOTE: the venv's python is a link to the base interpreter's.
    return (recorded.get("requirements") == list(REQUIREMENTS)
            and (VENV / "bin" / "python").exists())


def install() -> Path:
    """Create the virtualenv and install Keystone in it, once; return it."""
    COMPONENTS.mkdir(parents=True, exist_ok=True)
    with open(COMPONENTS / "keystone.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time
        if installed():
            print("keystone: already installed in %s" % VENV)
            return VENV
        started = time.monotonic()
        if VENV.exists():
            print("keystone: removing %s (incomplete or outdated)" % VENV)
            shutil.rmtree(VENV)
        _run_step("creating virtualenv %s" % VENV,
                  [sys.executable, "-m", "venv", str(VENV)])
        _run_step("installing %s" % " ".join(REQUIREMENTS),
                  [str(VENV / "bin" / "python"), "-m", "pip", "install",
                   "--no-input", *REQUIREMENTS])
        MARKER.write_text(json.dumps({"requirements": list(REQUIREMENTS)}))
        print("keystone: installed in %.0fs" % (time.monotonic() - started))
        return VENV


def _run_step(what: str, argv: list[str]) -> None:
    print("keystone: %s\n  $ %s" % (what, " ".join(argv)), flush=True)
    subprocess.run(argv, check=True, timeout=PIP_TIMEOUT)


def available() -> None:
    """Skip the calling test unless Keystone is installed (fail it in CI)."""
    if not installed():
        harness.unavailable("Keystone", FileNotFoundError(
            "not installed in %s; install it with `%s`"
            % (VENV, INSTALL_COMMAND)))


# -- who is who -----------------------------------------------------------
@dataclass
class User:
    """A Keystone user and where its role is (a project name, the system,
    or nowhere)."""

    name: str
    id: str
    password: str
    project: str | None = None
    system: bool = False
    roles: list[str] = field(default_factory=list)


@dataclass
class Personas:
    """What ``Keystone.personas`` made: project ids by name, users by key
    (``alpha-member``, ``beta-admin``, ``norole``, ``system-reader``, ...)."""

    projects: dict[str, str]
    users: dict[str, User]

    def __getitem__(self, key: str) -> User:
        return self.users[key]

    @property
    def service(self) -> User:
        """The ``ashlar`` service user keystonemiddleware logs in as."""
        return self.users["ashlar"]


# -- the server -----------------------------------------------------------
DOMAIN = "Default"
REGION = "RegionOne"
START_TIMEOUT = 60.0
MANAGE_TIMEOUT = 300


#: The module gunicorn serves: Keystone's public app.  Keystone parses
#: ``sys.argv`` as its own command line, so gunicorn's options must go first.
WSGI_SHIM = '''"""Keystone's public WSGI app, without gunicorn's argv."""
import sys

sys.argv = sys.argv[:1]
from keystone.wsgi.api import application  # noqa: E402,F401
'''


class Keystone:
    """One Keystone server, its files all in ``workdir``.

    ``start()`` configures, bootstraps and serves it under gunicorn on a
    free loopback port; ``stop()`` ends it.  Also a context manager.
    """

    def __init__(self, workdir: Path | str, workers: int = 2) -> None:
        self.dir = Path(workdir)
        self.workers = workers
        self.port = harness.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.auth_url = self.url + "/v3"
        self.conf = self.dir / "keystone.conf"
        self.admin = User("admin", "", "admin-secret", project="admin",
                          system=True, roles=["admin"])
        self.proc: subprocess.Popen | None = None
        self._admin_token: str | None = None
        self._role_ids: dict[str, str] = {}
        self._project_ids: dict[str, str] = {}

    def __enter__(self) -> "Keystone":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> "Keystone":
        """Write the config, set up database and keys, serve; wait for /v3."""
        if not installed():
            raise RuntimeError("Keystone is not installed: run `%s`"
                               % INSTALL_COMMAND)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.conf.write_text(self.config_text())
        for argv in self.setup_commands():
            self.manage(*argv)
        self._serve()
        self.admin.id = self._user_id(self.admin.name)
        return self

    def config_text(self) -> str:
        """keystone.conf: everything in ``self.dir``, nothing from /etc."""
        d = self.dir
        return "\n".join([
            "[DEFAULT]", "log_dir = %s" % d, "log_file = keystone.log",
            "use_stderr = false",
            "[database]", "connection = sqlite:///%s" % (d / "keystone.db"),
            "[token]", "provider = fernet",
            "[fernet_tokens]", "key_repository = %s" % (d / "fernet-keys"),
            "[fernet_receipts]", "key_repository = %s" % (d / "fernet-keys"),
            "[credential]", "key_repository = %s" % (d / "credential-keys"),
            # NOTE: bcrypt's cheapest cost (2^4 rounds, not 2^12): tests
            # log in often and need no protection against offline guessing.
            "[identity]", "password_hash_rounds = 4",
            "[oslo_policy]", "policy_file = %s" % (d / "policy.yaml"),
            "[cache]", "enabled = false", ""])

    def setup_commands(self) -> list[list[str]]:
        """The ``keystone-manage`` runs that make an empty Keystone usable."""
        owner = ["--keystone-user", pwd.getpwuid(os.getuid()).pw_name,
                 "--keystone-group", grp.getgrgid(os.getgid()).gr_name]
        return [
            ["db_sync"],
            ["fernet_setup", *owner],
            ["credential_setup", *owner],
            ["bootstrap", "--bootstrap-username", self.admin.name,
             "--bootstrap-password", self.admin.password,
             "--bootstrap-project-name", self.admin.project,
             "--bootstrap-role-name", "admin",
             "--bootstrap-service-name", "keystone",
             "--bootstrap-region-id", REGION,
             "--bootstrap-admin-url", self.auth_url,
             "--bootstrap-internal-url", self.auth_url,
             "--bootstrap-public-url", self.auth_url]]

    def manage(self, *args: str) -> str:
        """Run ``keystone-manage ARGS`` on this config; return its output."""
        argv = [str(VENV / "bin" / "keystone-manage"), "--config-file",
                str(self.conf), *args]
        proc = subprocess.run(argv, capture_output=True, text=True,
                              env=_clean_env(), timeout=MANAGE_TIMEOUT)
        if proc.returncode:
            raise RuntimeError("%s exited %d:\n%s%s" % (
                " ".join(argv), proc.returncode, proc.stdout, proc.stderr))
        return proc.stdout + proc.stderr

    def command(self) -> list[str]:
        """The gunicorn command line that serves Keystone's public API."""
        return [str(VENV / "bin" / "gunicorn"),
                "--bind", "127.0.0.1:%d" % self.port,
                "--workers", str(self.workers),
                "--access-logfile", str(self.dir / "access.log"),
                "--error-logfile", str(self.dir / "gunicorn.log"),
                "--chdir", str(self.dir), "--pythonpath", str(self.dir),
                "keystone_wsgi:application"]

    def _serve(self) -> None:
        (self.dir / "keystone_wsgi.py").write_text(WSGI_SHIM)
        env = _clean_env()
        env["OS_KEYSTONE_CONFIG_FILES"] = str(self.conf)
        with open(self.dir / "gunicorn.out", "ab") as out:
            self.proc = subprocess.Popen(
                self.command(), env=env, cwd=self.dir, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            harness.wait_for(lambda: self.proc.poll() is not None
                             or self._answers(), timeout=START_TIMEOUT,
                             what="Keystone to answer on %s" % self.auth_url)
            if self.proc.poll() is not None:
                raise RuntimeError("gunicorn exited %s" % self.proc.returncode)
        except (AssertionError, RuntimeError) as exc:
            self.stop()
            raise RuntimeError("Keystone did not start: %s\n%s" % (
                exc, self.log("gunicorn.out")[-3000:])) from None

    def _answers(self) -> bool:
        return requests.get(self.auth_url, timeout=5).status_code == 200

    def stop(self) -> None:
        """End the gunicorn master and its workers."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)

    def log(self, name: str = "keystone.log") -> str:
        """A log file of this server (``keystone.log``, ``access.log``,
        ``gunicorn.log``), or "" before it exists."""
        path = self.dir / name
        return path.read_text(errors="replace") if path.exists() else ""

    # -- tokens -----------------------------------------------------------
    def token(self, user: User, project: str | None = None,
              system: bool = False) -> str:
        """A token for ``user``: on ``project`` (a name), on the system, or
        unscoped when neither is given."""
        body: dict = {"auth": {"identity": {
            "methods": ["password"],
            "password": {"user": {"name": user.name,
                                  "domain": {"name": DOMAIN},
                                  "password": user.password}}}}}
        if project:
            body["auth"]["scope"] = {"project": {
                "name": project, "domain": {"name": DOMAIN}}}
        elif system:
            body["auth"]["scope"] = {"system": {"all": True}}
        resp = requests.post(self.auth_url + "/auth/tokens", json=body,
                             timeout=30)
        _check(resp, "token for %s" % user.name)
        return resp.headers["X-Subject-Token"]

    def project_token(self, user: User, project: str | None = None) -> str:
        """A token scoped to ``project`` (default: the user's own)."""
        return self.token(user, project=project or user.project)

    def unscoped_token(self, user: User) -> str:
        """A token on no project (Keystone scopes none by itself: the
        users made here have no default project)."""
        return self.token(user)

    def system_token(self, user: User) -> str:
        """A token scoped to the whole system (``system: {all: true}``)."""
        return self.token(user, system=True)

    def admin_token(self) -> str:
        """The bootstrap admin's system-scoped token (kept and reused)."""
        if self._admin_token is None:
            self._admin_token = self.system_token(self.admin)
        return self._admin_token

    def validate(self, token: str, as_token: str | None = None
                 ) -> requests.Response:
        """``GET /v3/auth/tokens`` for ``token`` as keystonemiddleware
        does, authenticated by ``as_token`` (default: the admin's)."""
        return requests.get(self.auth_url + "/auth/tokens", timeout=30,
                            headers={"X-Auth-Token": as_token
                                     or self.admin_token(),
                                     "X-Subject-Token": token})

    def revoke(self, token: str) -> None:
        """Revoke ``token`` (``DELETE /v3/auth/tokens``) as the admin."""
        _check(requests.delete(self.auth_url + "/auth/tokens", timeout=30,
                               headers={"X-Auth-Token": self.admin_token(),
                                        "X-Subject-Token": token}),
               "revoking a token")

    # -- administration ---------------------------------------------------
    def api(self, method: str, path: str, body: dict | None = None) -> dict:
        """Call the identity API as the system admin; the JSON answer."""
        resp = requests.request(method, self.auth_url + path, json=body,
                                headers={"X-Auth-Token": self.admin_token()},
                                timeout=30)
        _check(resp, "%s %s" % (method, path))
        return resp.json() if resp.content else {}

    def create_project(self, name: str) -> str:
        """Create a project in the Default domain; return its id."""
        self._project_ids[name] = self.api("POST", "/projects", {"project": {
            "name": name, "domain_id": "default"}})["project"]["id"]
        return self._project_ids[name]

    def create_user(self, name: str, password: str | None = None) -> User:
        """A user in the Default domain, with no role and no default
        project (so its unscoped tokens stay unscoped)."""
        password = password or name + "-secret"
        made = self.api("POST", "/users", {"user": {
            "name": name, "password": password, "domain_id": "default"}})
        return User(name, made["user"]["id"], password)

    def role_id(self, name: str) -> str:
        """The id of the role ``name``, created if it does not exist."""
        if name not in self._role_ids:
            found = self.api("GET", "/roles?name=%s" % name)["roles"]
            self._role_ids[name] = (found[0]["id"] if found else self.api(
                "POST", "/roles", {"role": {"name": name}})["role"]["id"])
        return self._role_ids[name]

    def project_id(self, name: str) -> str:
        """The id of the project ``name`` (Default domain)."""
        if name not in self._project_ids:
            self._project_ids[name] = self.api(
                "GET", "/projects?name=%s" % name)["projects"][0]["id"]
        return self._project_ids[name]

    def grant(self, user: User, role: str, project: str | None = None) -> None:
        """Give ``user`` ``role`` on ``project`` (a name), or on the whole
        system when no project is given."""
        target = ("/projects/%s" % self.project_id(project) if project
                  else "/system")
        self.api("PUT", "%s/users/%s/roles/%s" % (target, user.id,
                                                  self.role_id(role)))
        user.roles.append(role)
        if project:
            user.project = project
        else:
            user.system = True

    def _user_id(self, name: str) -> str:
        return self.api("GET", "/users?name=%s" % name)["users"][0]["id"]

    def register_service(self, url_template: str, name: str = "ashlar"
                         ) -> dict[str, str]:
        """Put Ashlar in the catalog as Cinder is: ``block-storage``
        (``name``) and ``volumev3`` (``name``v3), each with public,
        internal and admin endpoints in RegionOne at ``url_template``
        (e.g. ``http://127.0.0.1:8776/v3/%(project_id)s``), in place of
        any registered before (one Keystone serves a whole test session).
        Returns the service ids by type."""
        ids = {}
        for kind, service_name in (("block-storage", name),
                                   ("volumev3", name + "v3")):
            for old in self.api("GET", "/services?type=%s" % kind)[
                    "services"]:
                self.api("DELETE", "/services/%s" % old["id"])
            ids[kind] = self.api("POST", "/services", {"service": {
                "type": kind, "name": service_name}})["service"]["id"]
            for interface in ("public", "internal", "admin"):
                self.api("POST", "/endpoints", {"endpoint": {
                    "service_id": ids[kind], "interface": interface,
                    "url": url_template, "region_id": REGION}})
        return ids

    def personas(self, projects: tuple[str, ...] = ("alpha", "beta")
                 ) -> Personas:
        """Create the usual cast in one call.

        For each project an ``<project>-admin``, ``-member`` and
        ``-reader``; ``norole`` (no role anywhere: unscoped tokens only);
        ``system-reader`` and ``system-admin`` (roles on the system);
        ``ashlar``, the service user, with role ``service`` on project
        ``service`` (what Keystone's ``identity:validate_token`` asks of
        keystonemiddleware's user: ``rule:service_role``).
        """
        ids = {name: self.create_project(name)
               for name in (*projects, "service")}
        users = {}
        for project in projects:
            for role in ("admin", "member", "reader"):
                users["%s-%s" % (project, role)] = self._persona(
                    "%s-%s" % (project, role), role, project)
        users["norole"] = self.create_user("norole")
        for role in ("reader", "admin"):
            users["system-" + role] = self._persona("system-" + role, role)
        users["ashlar"] = self._persona("ashlar", "service", "service")
        return Personas(ids, users)

    def _persona(self, name: str, role: str, project: str | None = None
                 ) -> User:
        user = self.create_user(name)
        self.grant(user, role, project)
        return user

    def authtoken_section(self, service_user: User) -> str:
        """The ``[keystone_authtoken]`` text for an api behind
        keystonemiddleware that logs in as ``service_user``.  Without
        ``memcached_servers`` tokens are cached in each process."""
        return "\n".join([
            "[keystone_authtoken]",
            "www_authenticate_uri = %s" % self.auth_url,
            "auth_url = %s" % self.auth_url,
            "auth_type = password",
            "username = %s" % service_user.name,
            "password = %s" % service_user.password,
            "user_domain_name = %s" % DOMAIN,
            "project_name = %s" % service_user.project,
            "project_domain_name = %s" % DOMAIN,
            "region_name = %s" % REGION, ""])


CLI_TIMEOUT = 120


def openstack_run(keystone: Keystone, user: User, project: str | None,
                  *args: str, system: bool = False
                  ) -> subprocess.CompletedProcess:
    """``openstack ARGS`` as ``user`` on ``project`` (or the system, or no
    scope), configured only by OS_* variables: Keystone's URL and the
    user's password, the endpoint found in the catalog."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_AUTH_TYPE="password", OS_AUTH_URL=keystone.auth_url,
               OS_IDENTITY_API_VERSION="3", OS_USERNAME=user.name,
               OS_PASSWORD=user.password, OS_USER_DOMAIN_NAME=DOMAIN,
               OS_REGION_NAME=REGION)
    if project:
        env.update(OS_PROJECT_NAME=project, OS_PROJECT_DOMAIN_NAME=DOMAIN)
    elif system:
        env.update(OS_SYSTEM_SCOPE="all")
    return subprocess.run(
        [sys.executable, "-m", "openstackclient.shell", *args],
        capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT,
        cwd=harness.REPO)


def openstack_cli(keystone: Keystone, user: User, project: str,
                  *args: str) -> Any:
    """``openstack ARGS -f json`` (``openstack_run``); its parsed answer."""
    proc = openstack_run(keystone, user, project, *args, "-f", "json")
    assert proc.returncode == 0, "exit %d\n%s\n%s" % (
        proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


def _clean_env() -> dict[str, str]:
    """This environment without what would point Keystone's Python or
    config elsewhere."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("OS_", "PYTHONPATH", "PYTHONHOME",
                                 "VIRTUAL_ENV"))}


def _check(resp: requests.Response, what: str) -> None:
    if resp.status_code >= 400:
        raise RuntimeError("Keystone refused %s: %d %s"
                           % (what, resp.status_code, resp.text[:500]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["install"])
    parser.parse_args(argv)
    install()


if __name__ == "__main__":
    main()
