"""RabbitMQ users for functional tests, made as an operator makes them.

``make()`` adds a fresh vhost, an internal user with every right on it (the
api, scheduler and volume nodes' user) and compute-host users made by
``deploy/rabbitmq/compute-host-user.sh``; ``Broker.remove()`` deletes them
all.  It needs ``rabbitmqctl`` for the broker of ``harness.RABBIT_URL``
(``TEST_TRANSPORT_URL``): without it the test is skipped, and fails under
``CI=true``.
"""

import os
import secrets
import shutil
import socket
import subprocess
import uuid
from dataclasses import dataclass, field
from urllib import parse

from deploy.testbed import harness

SCRIPT = os.path.join(harness.REPO, "deploy", "rabbitmq",
                      "compute-host-user.sh")
CTL_TIMEOUT = 60


@dataclass
class User:
    name: str
    password: str
    url: str                     #: transport URL (rabbit://) on the vhost


@dataclass
class Broker:
    vhost: str
    host: str
    port: int
    internal: User
    computes: list[User] = field(default_factory=list)

    def remove(self) -> None:
        """Delete the vhost (its queues and exchanges) and the users."""
        ctl("delete_vhost", self.vhost, check=False)
        for user in [self.internal] + self.computes:
            ctl("delete_user", user.name, check=False)


def ctl(*args: str, check: bool = True) -> str:
    """Run ``rabbitmqctl -q ARGS``; its output."""
    proc = subprocess.run(["rabbitmqctl", "-q", *args], capture_output=True,
                          text=True, timeout=CTL_TIMEOUT)
    if check and proc.returncode:
        raise RuntimeError("rabbitmqctl %s: %s%s" % (
            " ".join(args), proc.stdout, proc.stderr))
    return proc.stdout


def make(computes: int = 1, control_exchange: str | None = None,
         api_topic: str | None = None,
         reply_hosts: list[str] | None = None) -> Broker:
    """A fresh vhost, its internal user and ``computes`` compute users.

    :param control_exchange: ``CONTROL_EXCHANGE`` given to the script
        (its default when None).
    :param api_topic: ``API_TOPIC`` given to the script (its default when
        None).
    :param reply_hosts: the ``REPLY_QUEUE_HOST`` of each compute user (the
        script's default reply queue names when None).
    """
    url = parse.urlsplit(harness.RABBIT_URL)
    host, port = url.hostname or "127.0.0.1", url.port or 5672
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        harness.unavailable("RabbitMQ at %s:%s" % (host, port), exc)
    if shutil.which("rabbitmqctl") is None:
        harness.unavailable("rabbitmqctl (to make users and a vhost)",
                            FileNotFoundError("rabbitmqctl not on PATH"))
    prefix = "ashlar-test-%s" % uuid.uuid4().hex[:8]
    broker = Broker(prefix, host, port, _user(prefix + "-internal",
                                              host, port, prefix))
    try:
        ctl("add_vhost", broker.vhost)
        ctl("add_user", broker.internal.name, broker.internal.password)
        ctl("set_permissions", "-p", broker.vhost, broker.internal.name,
            ".*", ".*", ".*")
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        broker.remove()
        harness.unavailable("rabbitmqctl (to make users and a vhost)", exc)
    try:
        for index in range(computes):
            user = _user("%s-compute%d" % (prefix, index + 1), host, port,
                         prefix)
            broker.computes.append(user)
            _script(broker.vhost, user, control_exchange, api_topic,
                    reply_hosts[index] if reply_hosts else None)
    except BaseException:
        broker.remove()
        raise
    return broker


def _script(vhost: str, user: User, control_exchange: str | None,
            api_topic: str | None, reply_host: str | None) -> None:
    """Run compute-host-user.sh for ``user`` (as an operator would)."""
    args = [vhost, user.name, user.password]
    if control_exchange or api_topic:
        args.append(control_exchange or "ashlar")
    if api_topic:
        args.append(api_topic)
    env = {k: v for k, v in os.environ.items() if k != "REPLY_QUEUE_HOST"}
    if reply_host:
        env["REPLY_QUEUE_HOST"] = reply_host
    proc = subprocess.run(["sh", SCRIPT, *args], capture_output=True,
                          text=True, timeout=CTL_TIMEOUT * 8, env=env)
    if proc.returncode:
        raise RuntimeError("compute-host-user.sh %s failed (%d): %s%s" % (
            user.name, proc.returncode, proc.stdout, proc.stderr))


def _user(name: str, host: str, port: int, vhost: str) -> User:
    password = secrets.token_hex(16)
    return User(name, password, "rabbit://%s:%s@%s:%d/%s" % (
        parse.quote(name, safe=""), password, host, port,
        parse.quote(vhost, safe="")))
