"""``volume reset-state``, ``attachment list|reset``: the admin's escape
hatches, through the same operations as Cinder's ``os-reset_status`` (a
reset to ``detached`` has each attachment's connection terminated, as the
REST action does), and a removal of an attachment row that touches only
the database, for a volume node that is gone."""

import argparse
import datetime

from oslo_config import cfg

from common import constants
from common import exception
from common import states
from common.db.api import attachments as attachments_db
from common.db.api import rows
from common.db.api import services as services_db
from common.db.api import volumes as volumes_db
from common.db.api.timestamps import utcnow
from services.api.operations import attachments as attachment_ops
from services.api.operations import volumes as volume_ops
from services.manage import base
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi


class VolumeResetState(base.Command):
    """Reset a volume's status, as Cinder's os-reset_status.

    ``--attach-status detached`` removes every attachment, each terminating
    its own connection.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("volume_id")
        parser.add_argument("--state", help="The new status (e.g. "
                            "available, error).")
        parser.add_argument("--attach-status",
                            choices=states.VOLUME_RESET_ATTACH_STATUSES)
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        if not (args.state or args.attach_status):
            raise base.RefusedError("give --state or --attach-status")
        self.app.database()
        self.app.bus()
        conf = self.app.conf
        volume = volume_rpcapi.VolumeAPI(conf)
        ops = volume_ops.VolumeOperations(
            conf, scheduler_rpcapi.SchedulerAPI(conf), volume)
        try:
            ops.reset_status(
                base.admin(), args.volume_id,
                attachment_ops.AttachmentOperations(conf, volume),
                status=args.state and args.state.lower(),
                attach_status=args.attach_status)
        except exception.AshlarException as exc:
            raise base.RefusedError(str(exc))
        row = volumes_db.volume_get(base.admin(), args.volume_id)
        self.app.stdout.write("volume %s: %s / %s\n" % (
            row.id, row.status, row.attach_status))


class AttachmentList(base.Lister):
    """List attachments and what makes one look orphaned.

    ``--host``: what a compute host holds; ``--volume``: one volume's.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--host", help="Compute host (connector host).")
        parser.add_argument("--volume", help="Volume id.")
        return parser

    def take_action(self, args: argparse.Namespace
                    ) -> tuple[tuple[str, ...], list[tuple]]:
        self.app.database()
        ctxt = base.admin()
        filters = {key: value for key, value in (
            ("attached_host", args.host), ("volume_id", args.volume))
            if value}
        found = attachments_db.attachment_list(ctxt, filters=filters,
                                               sort_keys=["created_at"],
                                               sort_dirs=["asc"])
        down = _down_backends(self.app.conf)
        stuck_after = datetime.timedelta(
            seconds=self.app.conf.attachment_transition_timeout)
        return (("ID", "Volume", "Host", "Status", "Mode", "In flight",
                 "Since", "Looks orphaned"),
                [(row.id, row.volume_id, row.attached_host or "",
                  row.attach_status, row.attach_mode, row.transition or "",
                  base.when(row.updated_at or row.created_at),
                  _orphaned(row, down, stuck_after))
                 for row in found])


def _down_backends(conf: cfg.ConfigOpts) -> set[str]:
    return {row.host for row in services_db.service_list(
        base.admin(), binary=constants.VOLUME_BINARY)
        if not services_db.is_up(row, conf.service_down_time)}


def _orphaned(row: rows.AttachmentRow, down: set[str],
              stuck_after: datetime.timedelta) -> str:
    """Why an attachment looks orphaned, or ``""``."""
    volume = volumes_db.volume_get(base.admin(), row.volume_id)
    backend = (volume.host or "").partition("#")[0]
    since = row.updated_at or row.created_at
    if row.fenced_at is not None:
        return "fenced: its host may only detach it"
    if row.transition and since and utcnow() - since > stuck_after:
        return "stuck in %s" % row.transition
    if backend in down:
        return "its volume service %s is down" % backend
    return ""


class AttachmentReset(base.Command):
    """Remove an attachment row, in the database only.

    The backend is not asked (for a volume node that is gone); the
    volume's status follows its remaining attachments.
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("attachment_id")
        return parser

    def take_action(self, args: argparse.Namespace) -> None:
        self.app.database()
        ctxt = base.admin()
        try:
            row = attachments_db.attachment_get(ctxt, args.attachment_id)
        except exception.AttachmentNotFound as exc:
            raise base.RefusedError(str(exc))
        result = attachments_db.attachment_destroy(ctxt, row.volume_id,
                                                   row.id, {})
        if result is None:
            raise base.RefusedError("attachment %s went meanwhile" % row.id)
        volume = volumes_db.volume_get(ctxt, row.volume_id)
        self.app.stdout.write(
            "attachment %s removed; volume %s is %s with %d attachments "
            "(its backend connection, if any, was left as it is)\n" % (
                row.id, volume.id, volume.status, len(result["remaining"])))
