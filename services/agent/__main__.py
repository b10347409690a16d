"""``ashlar-agent``: attach and detach volumes on this compute host.

    ashlar-agent --config-file ashlar.conf attach VOLUME_ID --instance UUID
    ashlar-agent --config-file ashlar.conf detach ATTACHMENT_ID
    ashlar-agent --config-file ashlar.conf write ATTACHMENT_ID \
        --offset N [--input FILE]
    ashlar-agent --config-file ashlar.conf read ATTACHMENT_ID \
        --offset N --length L [--output FILE]
    ashlar-agent --config-file ashlar.conf hold VOLUME_ID [--mode ro]
    ashlar-agent --config-file ashlar.conf hold VOLUME_ID \
        --attachment ATTACHMENT_ID

``--attachment`` (attach, hold): connect an attachment the volume's
project made for this host over REST, instead of creating one; only
through such an attachment may the host take the volume over.  Its
instance is the attachment's, and so is its mode unless it was reserved
without one (then ``--mode``, else ``rw``).

``read`` writes the raw bytes to ``--output`` (stdout by default); the
other commands print JSON.
"""

import argparse
import json
import sys

from cliff import command
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_log import log as logging

from common import cli
from common import conf as ashlar_conf
from common import service
from common.conf import agent_auth
from services.agent import connector
from services.agent import hold
from services.api import rpcapi as api_rpcapi


def credentials(conf: cfg.ConfigOpts) -> api_rpcapi.Credentials:
    """This host's credential from ``[agent_auth]`` (keystoneauth1): the
    headers a ``password`` plugin's token or an ``http_basic`` pair makes;
    ``{}`` without ``auth_type``.  A token is fetched once and renewed by
    keystoneauth when it nears its expiry."""
    agent_auth.register_opts(conf)
    auth = ks_loading.load_auth_from_conf_options(conf, agent_auth.GROUP)
    if auth is None:
        return dict
    session = ks_loading.load_session_from_conf_options(
        conf, agent_auth.GROUP, auth=auth)
    return lambda: auth.get_headers(session) or {}


class _AgentCommand(command.Command):
    app: "AgentApp"

    def _host(self) -> connector.HostConnector:
        conf = self.app.conf
        return connector.HostConnector(
            conf, api_rpcapi.ApiAPI(conf, credentials(conf)))

    def _print(self, value: dict) -> None:
        self.app.stdout.write(json.dumps(value, indent=1, default=str) + "\n")


class Attach(_AgentCommand):
    """Attach a volume to this host (create, connect, complete)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("volume_id")
        made = parser.add_mutually_exclusive_group()
        made.add_argument("--attachment", dest="attachment_id",
                          help="an attachment the volume's project made "
                               "for this host (over REST): connect it "
                               "instead of creating one")
        made.add_argument("--instance", dest="instance_uuid")
        parser.add_argument("--mode", choices=["rw", "ro"])
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        self._print(self._host().attach(args.volume_id, args.instance_uuid,
                                        args.mode, args.attachment_id))


class Detach(_AgentCommand):
    """Detach an attachment from this host."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("attachment_id")
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        self._print(self._host().detach(args.attachment_id))


class Write(_AgentCommand):
    """Write bytes (from --input, or stdin) through this host's attachment."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("attachment_id")
        parser.add_argument("--offset", type=int, default=0)
        parser.add_argument("--input", type=argparse.FileType("rb"),
                            default=sys.stdin.buffer)
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        data = args.input.read()
        written = self._host().write(args.attachment_id, args.offset, data)
        self._print({"attachment_id": args.attachment_id,
                     "offset": args.offset, "written": written})


class Read(_AgentCommand):
    """Read bytes through this host's attachment (to --output, or stdout)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("attachment_id")
        parser.add_argument("--offset", type=int, default=0)
        parser.add_argument("--length", type=int, required=True)
        parser.add_argument("--output", type=argparse.FileType("wb"),
                            default=sys.stdout.buffer)
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        args.output.write(self._host().read(args.attachment_id, args.offset,
                                            args.length))
        args.output.flush()


class Hold(Attach):
    """Attach a volume and hold it open, serving commands from stdin (see
    services/agent/hold.py); one JSON line answers each."""

    def take_action(self, args: argparse.Namespace) -> None:
        def say(answer: dict) -> None:
            self.app.stdout.write(json.dumps(answer, default=str) + "\n")
            self.app.stdout.flush()

        hold.Holder(self._host()).serve(args.volume_id, args.instance_uuid,
                                        args.mode, self.app.stdin, say,
                                        args.attachment_id)


class AgentApp(cli.ConfigApp):
    conf: cfg.ConfigOpts

    def __init__(self) -> None:
        super().__init__(__doc__, "ashlar.agent",
                         {"attach": Attach, "detach": Detach,
                          "write": Write, "read": Read, "hold": Hold})

    def initialize_app(self, argv: list[str]) -> None:
        # stdout carries the JSON answer; logs go to stderr.
        logging.register_options(ashlar_conf.CONF)
        ashlar_conf.CONF.set_default("use_stderr", True)
        self.conf = service.prepare_process(self.config_args(),
                                            database=False)


def main(argv: list[str] | None = None) -> int:
    return AgentApp().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
