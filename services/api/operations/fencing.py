"""Fencing operations (Ashlar's extension): fence, takeover, unfence.

A fence puts the row in the ``fencing`` transition (a compare-and-swap, so
it never overlaps a connect or a delete of the row), then calls the volume
service, which has the driver revoke the host's I/O and records
``fenced_at``; when the call returns, the backend refuses the host's next
write.  A fenced row keeps its status (the volume stays in use by the
others), no longer counts as a writer, and its host may only delete it.

A takeover fences every other writer of the volume, each before the next
step, and only then makes the taker a writer (``fencing.grant_writer``:
the writer count is guarded, so a single-writer volume never has two).
A compute agent takes over only through an attachment the volume's
project made for its host, never through one it made itself.
An unfence clears the mark first, under the same guard, then lifts the
backend's revocation; should lifting fail, the old clients stay cut off
and the host attaches anew.  Every method takes ``(ctxt, ...)``, for the
REST resources and the RPC door alike.
"""

import datetime
import json
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging

from common import attach_rules
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api import fencing as fencing_db
from common.db.api import rows
from common.db.api.execution import Record
from services.api import operations
from services.api.operations import attachments as attachment_ops
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
#: What makes a row read/write: the compare-and-swap's expected and new
#: values, and its connector (None: unchanged).
WriterChange = tuple[dict[str, object], dict[str, object],
                     dict[str, Any] | None]


class WriterExists(exception.Conflict):
    msg_fmt = ("Volume %(volume_id)s allows one read/write attachment and "
               "has one (attached meanwhile); fence it or take over again.")


class NotFenced(exception.Conflict):
    msg_fmt = "Attachment %(id)s is not fenced."


class FencingOperations:
    def __init__(self, volume: volume_rpcapi.VolumeAPI,
                 attachments: attachment_ops.AttachmentOperations) -> None:
        self.volume = volume
        self.attachments = attachments

    def _read(self, ctxt: RequestContext, rule: str, attachment_id: str
              ) -> tuple[rows.AttachmentRow, rows.VolumeBrief]:
        row, volume, _none = attachments_db.attachment_with_volume(
            ctxt, attachment_id)
        self.attachments.authorize_row(ctxt, rule, row, volume)
        return row, volume

    # -- fence ------------------------------------------------------------
    def fence(self, ctxt: RequestContext,
              attachment_id: str) -> rows.AttachmentRow:
        """Revoke the attachment's host's I/O to the volume; idempotent.

        :returns: the row, fenced.
        :raises FencingNotSupported: the volume's backend cannot fence.
        :raises InvalidTransition: another operation is in flight on it.
        """
        row, volume = self._read(ctxt, "volume:attachment_fence",
                                 attachment_id)
        return self._fence(ctxt, row, volume)

    def _fence(self, ctxt: RequestContext, row: rows.AttachmentRow,
               volume: rows.VolumeBrief) -> rows.AttachmentRow:
        if row.fenced_at is not None:
            return row
        # NOTE(ashlar): before the row is marked: a volume node of a
        # release without fences would resolve a "fencing" row it cannot
        # finish as a stuck connect.
        self.volume.require(self.volume.FENCE_VERSION, "attachment_fence")
        transition = states.on_fence(row.id, row.attach_status,
                                     row.transition)
        if not attachments_db.attachment_record(
                ctxt, volume.id, row.id,
                {"attach_status": row.attach_status, "transition": None,
                 "fenced_at": None}, {"transition": transition}):
            raise self.attachments.changed(ctxt, row.id, "fence")
        row = Record(**dict(vars(row), transition=transition))
        try:
            done = self.volume.attachment_fence(
                ctxt, operations.placed(volume.host, volume.id), row.id,
                volume_rpcapi.snapshot(row, volume))
        except messaging.MessagingTimeout:
            raise exception.ServiceUnavailable(
                reason="the volume service of %s did not answer; attachment "
                       "%s stays in flight (fencing) and is fenced when it "
                       "does" % (volume.host, row.id))
        LOG.info("Attachment %(att)s of volume %(vol)s fenced (host "
                 "%(host)s)", {"att": row.id, "vol": volume.id,
                               "host": row.attached_host})
        return Record(**dict(
            vars(row), transition=None,
            fenced_at=datetime.datetime.fromisoformat(done["fenced_at"]),
            fenced_clients=json.dumps(done["fenced_clients"])))

    # -- takeover ---------------------------------------------------------
    def takeover(self, ctxt: RequestContext,
                 attachment_id: str
                 ) -> tuple[rows.AttachmentRow, list[rows.AttachmentRow]]:
        """Fence every other writer of the volume, then make this
        attachment read/write.

        :returns: ``(row, fenced rows)``.
        :raises TakeoverNeedsConsent: a compute agent's takeover through a
            row it made itself (``_refuse_agent_made``).
        :raises Fenced: this attachment is fenced itself.
        :raises WriterExists: a writer attached between the fences and the
            grant (single-writer volume); nothing was granted.
        """
        row, volume = self._read(ctxt, "volume:attachment_takeover",
                                 attachment_id)
        _refuse_agent_made(ctxt, row, volume)
        states.refuse_fenced(row.id, row.fenced_at)
        if volume.readonly:
            raise exception.InvalidVolume(
                reason="Volume %s is read-only; no attachment may write it."
                % volume.id)
        others = states.fenced_by_takeover(
            attachments_db.attachments_of_volume(ctxt, volume.id), row.id)
        fenced = [self._fence(ctxt, Record(**_columns(other)), volume)
                  for other in others]
        if not states.is_writer(row.attach_mode):
            row = self._grant(ctxt, row, volume, _writer_values(ctxt, row))
        LOG.info("Attachment %(att)s took volume %(vol)s over (fenced "
                 "%(fenced)s)", {"att": row.id, "vol": volume.id,
                                 "fenced": [f.id for f in fenced]})
        return row, fenced

    def _grant(self, ctxt: RequestContext, row: rows.AttachmentRow,
               volume: rows.VolumeBrief,
               change: WriterChange) -> rows.AttachmentRow:
        expected, values, connector = change
        _volume, specs = attachments_db.volume_and_specs(ctxt, volume.id)
        single = volume.multiattach and attach_rules.attach_limits(specs, 1)[1]
        try:
            fencing_db.grant_writer(ctxt, volume.id, row.id, expected,
                                    values, single, connector)
        except attachments_db.Lost:
            raise self.attachments.changed(ctxt, row.id, "take over")
        except fencing_db.WriterTaken:
            raise WriterExists(volume_id=volume.id)
        return Record(**dict(vars(row), **values))

    # -- unfence ----------------------------------------------------------
    def unfence(self, ctxt: RequestContext,
                attachment_id: str) -> rows.AttachmentRow:
        """Clear the fence of the attachment, then lift the backend's
        revocation of the clients it cut off.

        :raises NotFenced:
        :raises WriterExists: a read/write row of a single-writer volume
            whose volume has another writer now.
        """
        row, volume = self._read(ctxt, "volume:attachment_unfence",
                                 attachment_id)
        if row.fenced_at is None:
            raise NotFenced(id=row.id)
        self.volume.require(self.volume.FENCE_VERSION, "attachment_unfence")
        clients = json.loads(row.fenced_clients or "[]")
        expected: dict[str, object] = {"fenced_at": row.fenced_at,
                                       "transition": None}
        values: dict[str, object] = {"fenced_at": None,
                                     "fenced_clients": None}
        if states.is_writer(row.attach_mode):
            row = self._grant(ctxt, row, volume, (expected, values, None))
        elif attachments_db.attachment_record(ctxt, volume.id, row.id,
                                              expected, values):
            row = Record(**dict(vars(row), **values))
        else:
            raise self.attachments.changed(ctxt, row.id, "unfence")
        if clients:
            self.volume.attachment_unfence(
                ctxt, operations.placed(volume.host, volume.id), volume.id,
                clients)
        return row

    # -- a host -----------------------------------------------------------
    def fence_host(self, ctxt: RequestContext,
                   host: str) -> list[rows.AttachmentRow]:
        """Fence every attachment of a compute host, of every project.

        :returns: the rows fenced.
        :raises Conflict: some were in flight (the others are fenced; a
            retry fences the rest).
        """
        ctxt.can("volume:host_fence", {"host": host})
        fenced, busy = [], []
        for row in fencing_db.rows_of_host(ctxt, host, fenced=False):
            try:
                fenced.append(self._fence_row(ctxt, row.id))
            except states.InvalidTransition:
                busy.append(row.id)
            except exception.AttachmentNotFound:
                continue  # deleted meanwhile
        if busy:
            raise exception.Conflict(
                "Fenced %d attachments of host %s; %s were being connected "
                "or deleted: fence the host again once they settle."
                % (len(fenced), host, ", ".join(busy)))
        return fenced

    def _fence_row(self, ctxt: RequestContext,
                   attachment_id: str) -> rows.AttachmentRow:
        row, volume, _none = attachments_db.attachment_with_volume(
            ctxt, attachment_id)
        return self._fence(ctxt, row, volume)

    def unfence_host(self, ctxt: RequestContext,
                     host: str) -> list[rows.AttachmentRow]:
        """Lift the fences of every attachment of a compute host."""
        ctxt.can("volume:host_fence", {"host": host})
        return [self.unfence(ctxt, row.id)
                for row in fencing_db.rows_of_host(ctxt, host, fenced=True)]


def _refuse_agent_made(ctxt: RequestContext, row: rows.AttachmentRow,
                       volume: rows.VolumeBrief) -> None:
    """Refuse a takeover through a row a compute agent made for itself,
    unless the caller may take over without being the host's agent.

    NOTE(ashlar): being a compute host proves where I/O runs, not a right
    to a project's data; a takeover fences the project's other writers.
    The project's consent is an attachment it made for the host over REST
    (as Nova attaches a volume to an instance on a host), which the agent
    then connects and takes over through.  The rule is asked again with no
    host in the target, so that ``compute_agent`` (bound to a host) cannot
    match it and only the project's members and admins pass.

    :raises TakeoverNeedsConsent:
    """
    if not row.agent_made or ctxt.can(
            "volume:attachment_takeover",
            {"project_id": volume.project_id, "host": None}, fatal=False):
        return
    raise exception.TakeoverNeedsConsent(id=row.id, host=row.attached_host)


def _columns(row: models.VolumeAttachment | Record) -> dict[str, Any]:
    """A row's columns (an ORM row or a Record)."""
    if isinstance(row, Record):
        return dict(vars(row))
    return {column.key: getattr(row, column.key)
            for column in row.__table__.columns}


def _writer_values(ctxt: RequestContext,
                   row: rows.AttachmentRow) -> WriterChange:
    """The compare-and-swap that makes a row read/write: its mode, the
    ``access_mode`` of its connection and its connector's mode."""
    values: dict[str, object] = {"attach_mode": states.MODE_RW}
    info = attachments_db.connection_info_of(row)
    if info:
        values["connection_info"] = json.dumps(
            dict(info, access_mode=states.MODE_RW))
    connector = attachments_db.connector(ctxt, row.id) or None
    if connector:
        connector = dict(connector, mode=states.MODE_RW)
    expected: dict[str, object] = {"attach_mode": row.attach_mode,
                                   "transition": None, "fenced_at": None}
    return expected, values, connector
