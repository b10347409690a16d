"""Attachment operations: reserve, connect, complete, delete, show, list.

Each operation checks policy and project, asks ``common.states`` which
transition applies, applies it with one compare-and-swap transaction
(``common/db/api/attachments/``) and, when a backend connection is made or
removed, calls the volume service (an RPC ``call`` bounded by
``rpc_call_timeout``).  Every method takes ``(ctxt, ...)`` so the REST
resources and the api's RPC door for compute agents share them.
"""

import datetime
import ipaddress
import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging

from common import attach_rules
from common import exception
from common import rpc
from common import states
from common.context import RequestContext
from common.db.api import attachments as attachments_db
from common.db.api import fencing as fencing_db
from common.db.api import rows
from common.db.api.timestamps import utcnow
from services.api import operations
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
ATT = states.ATT
T = states.Transition


class ConflictNovaUsingAttachment(exception.Conflict):
    msg_fmt = "Detach volume from instance %(instance_id)s using the Compute API"


def privileged(ctxt: RequestContext, volume: operations.Owned,
               host: str | None) -> bool:
    """``service_or_admin``: an administrator, a service (Nova with its
    service token), or the agent of the attachment's host."""
    return ctxt.can("service_or_admin", _target(volume, host), fatal=False)


def _target(volume: operations.Owned,
            host: str | None = None) -> dict[str, str | None]:
    """The policy target: the volume's project and the compute host the
    attachment is (or is to be) connected to."""
    return {"project_id": volume.project_id, "host": host}


def _authorize(ctxt: RequestContext, rule: str, volume: operations.Owned,
               host: str | None, not_found: exception.NotFound) -> None:
    """Check ``rule`` on the volume's project for ``host``.

    :raises PolicyNotAuthorized: denied, but the caller may see the volume.
    :raises NotFound: ``not_found``, for a caller that may not even see it
        (another project's attachments do not exist for it, as in Cinder).
    """
    if ctxt.can(rule, _target(volume, host), fatal=False):
        return
    if ctxt.can("volume:get", {"project_id": volume.project_id},
                fatal=False):
        raise exception.PolicyNotAuthorized(action=rule)
    raise not_found


class AttachmentOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volume = volume

    # -- lookups ----------------------------------------------------------
    def _volume(self, ctxt: RequestContext,
                volume_id: str) -> rows.VolumeBrief:
        """The volume (a light read), if the caller may see it."""
        volume = attachments_db.volume_brief(ctxt, volume_id)
        if not ctxt.can("volume:get", {"project_id": volume.project_id},
                        fatal=False):
            raise exception.VolumeNotFound(volume_id=volume_id)
        return volume

    @staticmethod
    def _authorize_row(ctxt: RequestContext, rule: str,
                       row: rows.AttachmentRow, volume: operations.Owned,
                       host: str | None) -> None:
        _authorize(ctxt, rule, volume, host,
                   exception.AttachmentNotFound(attachment_id=row.id))

    def authorize_row(self, ctxt: RequestContext, rule: str,
                      row: rows.AttachmentRow,
                      volume: operations.Owned) -> None:
        """Check ``rule`` on the row's volume and connected host."""
        self._authorize_row(ctxt, rule, row, volume, row.attached_host)

    def get(self, ctxt: RequestContext,
            attachment_id: str
            ) -> tuple[rows.AttachmentWithConnector, list[str]]:
        """The row and ``shared_connections_by_attachment`` (one read)."""
        row, volume, shared = attachments_db.attachment_with_volume(
            ctxt, attachment_id, shared=True)
        self._authorize_row(ctxt, "volume:attachment_get", row, volume,
                            row.attached_host)
        return row, shared

    def list(self, ctxt: RequestContext, all_tenants: bool = False,
             **kwargs: Any) -> Sequence[rows.AttachmentRow]:
        project = operations.listed_project(ctxt, all_tenants)
        ctxt.can("volume:attachment_get", {"project_id": project})
        return attachments_db.attachment_list(ctxt, project_id=project,
                                              **kwargs)

    # -- create -----------------------------------------------------------
    def create(self, ctxt: RequestContext, volume_id: str,
               instance_uuid: str | None = None,
               connector: dict[str, Any] | None = None,
               mode: str | None = None,
               leased: bool = False) -> rows.AttachmentRow:
        """Reserve the volume for a new attachment; connect it if a
        connector is given.

        :param leased: a compute agent's (the RPC door): the row is removed
            if it is not completed before its lease lapses, and it is
            marked ``agent_made`` (as is one a compute agent's credential
            makes over REST): no takeover through it without the project.

        :raises InvalidVolume: the volume cannot take this attachment now
            (status, not multiattach, limit, single writer).
        :raises PolicyNotAuthorized: attachment_create, or
            multiattach_bootable_volume for a further attachment of a
            bootable multiattach volume.
        """
        connector = connector or None

        def decide(volume: rows.VolumeBrief, specs: dict[str, str | None]
                   ) -> attachments_db.Reservation:
            _authorize(ctxt, "volume:attachment_create", volume,
                       (connector or {}).get("host"),
                       exception.VolumeNotFound(volume_id=volume_id))
            wanted = self._reservation(ctxt, volume, specs, instance_uuid,
                                       connector, mode)
            wanted.values.update(self._lease(leased))
            if leased or ctxt.agent_host is not None:
                wanted.values["agent_made"] = True
            return wanted

        self._refuse_fenced_host(ctxt, volume_id,
                                 (connector or {}).get("host"))
        row, volume, wanted = attachments_db.attachment_reserve(
            ctxt, volume_id, decide)
        if row is None:
            raise self._refusal(ctxt, volume_id, wanted.guard)
        LOG.info("Attachment %(att)s reserved volume %(vol)s",
                 {"att": row.id, "vol": volume.id})
        if connector:
            row = self._connect(ctxt, volume, row, connector, created=True)
        return row

    @staticmethod
    def _refuse_fenced_host(ctxt: RequestContext, volume_id: str,
                            host: str | None) -> None:
        """A host fenced from the volume gets no new attachment of it until
        it deleted the fenced one (or the fence was lifted)."""
        if not host:
            return
        fenced = fencing_db.fenced_row_of_host(ctxt, volume_id, host)
        if fenced is not None:
            raise exception.Fenced(id=fenced.id, at=fenced.fenced_at)

    def _reservation(self, ctxt: RequestContext, volume: rows.VolumeBrief,
                     specs: dict[str, str | None],
                     instance_uuid: str | None,
                     connector: dict[str, Any] | None,
                     mode: str | None) -> attachments_db.Reservation:
        """The bootable-multiattach check, then the guard and the new
        row's columns."""
        first_only = False
        if volume.multiattach and volume.bootable:
            if volume.attachment_count:
                ctxt.can("volume:multiattach_bootable_volume",
                         _target(volume))
            else:
                # NOTE(ashlar): the count was read without a lock; should a
                # racing reservation land first, this one would be a
                # further attachment, so the guard admits it only as the
                # first.
                first_only = not ctxt.can(
                    "volume:multiattach_bootable_volume", _target(volume),
                    fatal=False)
        mode = self._create_mode(volume, mode, connector)
        limit, single_writer = attach_rules.attach_limits(
            specs, self.conf.max_attachments_per_volume)
        guard = attach_rules.ReserveGuard(
            multiattach=volume.multiattach, limit=1 if first_only else limit,
            single_writer=single_writer and volume.multiattach,
            writer=states.is_writer(mode), instance_uuid=instance_uuid,
            first_only=first_only)
        status, transition = states.on_reserve(connector is not None)
        values = {"id": str(uuid.uuid4()), "instance_uuid": instance_uuid,
                  "attach_status": status, "transition": transition,
                  "attach_mode": mode}
        if connector:
            values.update(attached_host=connector.get("host"),
                          mountpoint=connector.get("mountpoint"))
        return attachments_db.Reservation(guard, values, connector)

    def _lease(self, leased: bool) -> dict[str, datetime.datetime]:
        """The ``lease_expires_at`` of a row an agent creates or connects,
        or whose creator never learnt its id (``[DEFAULT]
        agent_attachment_lease``); nothing otherwise."""
        seconds = self.conf.agent_attachment_lease
        if not leased or not seconds:
            return {}
        return {"lease_expires_at": utcnow().replace(
            microsecond=0) + datetime.timedelta(seconds=seconds)}

    @staticmethod
    def _create_mode(volume: rows.VolumeBrief, mode: str | None,
                     connector: dict[str, Any] | None) -> str:
        if volume.readonly:
            return states.MODE_RO
        if mode:
            return mode
        if connector:
            return _connector_mode(connector)
        return states.MODE_NULL

    @staticmethod
    def _refusal(ctxt: RequestContext, volume_id: str,
                 guard: attach_rules.ReserveGuard
                 ) -> exception.AshlarException:
        fresh = attachments_db.volume_brief(ctxt, volume_id)
        same = bool(guard.instance_uuid) and any(
            att.instance_uuid == guard.instance_uuid
            for att in attachments_db.attachments_of_volume(ctxt,
                                                            volume_id))
        return attach_rules.reserve_refusal(
            volume_id, fresh.status, fresh.multiattach,
            fresh.attachment_count, fresh.writer_count, guard, same)

    # -- update -----------------------------------------------------------
    def update(self, ctxt: RequestContext, attachment_id: str,
               connector: dict[str, Any],
               leased: bool = False) -> rows.AttachmentRow:
        """Give the attachment a connector; the volume service connects it.

        :param leased: a compute agent's (the RPC door): renews the lease
            of a row not completed yet.

        :raises Conflict: error volume, busy row, or another host.
        """
        def decide(row: rows.AttachmentWithConnector,
                   volume: rows.VolumeBrief) -> attachments_db.Change:
            host = connector.get("host")
            if row.attached_host != host:
                self._refuse_fenced_host(ctxt, volume.id, host)
            self._authorize_row(
                ctxt, "volume:attachment_update", row, volume,
                host if row.attached_host in (None, host) else None)
            change = self._connect_change(row, volume, connector)
            if row.attach_status != ATT.ATTACHED:
                change.values.update(self._lease(leased))
            return change

        try:
            row, volume, _gone = attachments_db.attachment_change(
                ctxt, attachment_id, decide)
        except attachments_db.Lost:
            raise self.changed(ctxt, attachment_id, "update")
        return self._connect(ctxt, volume, row,
                             dict(connector, mode=row.attach_mode))

    @staticmethod
    def _connect_change(row: rows.AttachmentRow, volume: rows.VolumeBrief,
                        connector: dict[str, Any]) -> attachments_db.Change:
        """The compare-and-swap that puts a row in a connect transition."""
        if "error" in volume.status:
            raise exception.Conflict(
                "Volume attachments can not be updated if the volume is in "
                "an error state. The Volume %s currently has a status of: "
                "%s " % (volume.id, volume.status))
        states.refuse_fenced(row.id, row.fenced_at)
        status, transition = states.on_connect(row.id, row.attach_status,
                                               row.transition)
        host = connector.get("host")
        if transition == T.RECONNECTING and host != row.attached_host:
            raise exception.Conflict(
                "Attachment %s is connected to host %s; create a new "
                "attachment for host %s." % (row.id, row.attached_host,
                                              host))
        mode = row.attach_mode
        if mode == states.MODE_NULL:
            mode = (states.MODE_RO if volume.readonly
                    else _connector_mode(connector))
        return attachments_db.Change(
            expected={"attach_status": row.attach_status, "transition": None,
                      "attach_mode": row.attach_mode, "fenced_at": None},
            values={"attach_status": status, "transition": transition,
                    "attach_mode": mode, "attached_host": host, "clients": None,
                    "mountpoint": connector.get("mountpoint")},
            connector=dict(connector, mode=mode), replace_connector=True,
            writer_delta=(int(states.is_writer(mode))
                          - int(states.is_writer(row.attach_mode))))

    def _connect(self, ctxt: RequestContext, volume: rows.VolumeBrief,
                 row: rows.AttachmentRow, connector: dict[str, Any],
                 created: bool = False) -> rows.AttachmentRow:
        """Have the volume service connect a row in a connect transition.

        :param created: the row is this request's own: its client learns
            the id only from this answer.
        :returns: the row as the volume service left it.
        """
        try:
            done = self.volume.attachment_connect(
                ctxt, operations.placed(volume.host, volume.id), row.id,
                volume_rpcapi.snapshot(row, volume, connector))
        except (messaging.MessagingTimeout,
                exception.LockServiceUnavailable):
            # NOTE(ashlar): a 503 of the volume service (its lock service
            # failing over) left the row in its transition, as a timeout.
            return self._unanswered(ctxt, volume, row, created)
        except messaging.RemoteError as exc:
            if exc.exc_type != rpc.REMOTE_DATABASE_DOWN:
                raise
            # The volume service lost the database (a writer's failover)
            # recording the connect: the row is left as by a timeout.
            return self._unanswered(ctxt, volume, row, created)
        return volume_rpcapi.connected(row, done)

    def _unanswered(self, ctxt: RequestContext, volume: rows.VolumeBrief,
                    row: rows.AttachmentRow,
                    created: bool) -> rows.AttachmentRow:
        """The volume service did not answer a connect: the row as it
        stands if it was connected meanwhile; else a 503, and a row the
        client cannot know gets a lease (``agent_attachment_lease``) so
        that it is removed should the connect still succeed.

        :raises ConnectUnanswered: the row is not connected (yet).
        """
        now: rows.AttachmentRow | None
        lease: dict[str, datetime.datetime]
        try:
            found = attachments_db.attachment_get(ctxt, row.id)
        except exception.AttachmentNotFound:
            now, lease = None, {}
        else:
            if found.transition is None and found.connection_info:
                return found
            now, lease = found, self._lease(created)
        if lease and not attachments_db.attachment_record(
                ctxt, volume.id, row.id,
                {"attach_status": found.attach_status}, lease):
            now, lease = None, {}  # the connect failed and removed it
        LOG.warning("The volume service of %(host)s did not answer the "
                    "connect of attachment %(att)s",
                    {"host": volume.host, "att": row.id})
        raise exception.ConnectUnanswered(id=row.id, fate=_fate(now, lease))

    @staticmethod
    def changed(ctxt: RequestContext, attachment_id: str,
                 operation: str) -> exception.AshlarException:
        """The error for a compare-and-swap that lost a race."""
        try:
            now = attachments_db.attachment_get(ctxt, attachment_id)
        except exception.AttachmentNotFound as exc:
            return exc
        return states.InvalidTransition(
            id=attachment_id, operation=operation,
            status="%s (%s)" % (now.attach_status, now.transition)
            if now.transition else now.attach_status)

    # -- complete ---------------------------------------------------------
    def complete(self, ctxt: RequestContext, attachment_id: str,
                 clients: Sequence[str] | None = None) -> None:
        """``os-complete``: the consumer uses the attachment now.

        :param clients: backend clients the host uses the volume through
            (its agent's), added to those registered before; a fence
            revokes them all.
        :raises Fenced: the row is fenced.
        :raises InvalidInput: a client is no single instance at the
            address of the attachment's host (``refuse_foreign_clients``).
        """
        def decide(row: rows.AttachmentWithConnector, volume: rows.VolumeBrief
                   ) -> attachments_db.Change | None:
            self._authorize_row(ctxt, "volume:attachment_complete", row,
                                volume, row.attached_host)
            states.refuse_fenced(row.id, row.fenced_at)
            status = states.on_complete(row.id, row.attach_status,
                                        row.transition)
            expected: dict[str, object] = {
                "attach_status": row.attach_status, "transition": None,
                "fenced_at": None}
            values: dict[str, object] = {"attach_status": status}
            if row.lease_expires_at is not None:
                expected["lease_expires_at"] = row.lease_expires_at
                values["lease_expires_at"] = None
            if clients:
                expected["clients"] = row.clients
                values["clients"] = _registered(row.clients, clients)
            elif values == {"attach_status": row.attach_status}:
                return None
            return attachments_db.Change(expected=expected, values=values)

        if clients:
            refuse_foreign_clients(
                clients, attachments_db.connector(ctxt, attachment_id))
        for _attempt in range(3):
            try:
                attachments_db.attachment_change(ctxt, attachment_id, decide)
                return
            except attachments_db.Lost:
                continue
        raise self.changed(ctxt, attachment_id, "complete")

    # -- delete -----------------------------------------------------------
    def delete(self, ctxt: RequestContext, attachment_id: str,
               force: bool = False) -> rows.Destroyed:
        """Remove an attachment, its connection (unless shared) first.

        Any row may be deleted, one in flight included (see
        ``states.on_delete``).

        :param force: an admin action already authorised this; skip the
            compute-host check.
        :returns: ``{"volume_id", "remaining": [rows], "shared": [ids]}``
            as they stood when the row went.
        :raises ConflictNovaUsingAttachment: a plain user deleting what a
            compute host still holds connected.
        """
        def decide(row: rows.AttachmentWithConnector, volume: rows.VolumeBrief
                   ) -> attachments_db.Change | None:
            self._authorize_row(ctxt, "volume:attachment_delete", row,
                                volume, row.attached_host)
            if not force and not attach_rules.deletion_allowed(
                    row.instance_uuid, bool(row.connection_info),
                    privileged(ctxt, volume, row.attached_host)):
                raise ConflictNovaUsingAttachment(
                    instance_id=row.instance_uuid)
            if row.transition == T.DISCONNECTING:
                return None
            target, transition = states.on_delete(
                row.attach_status, row.transition, row.has_connector)
            expected = {"attach_status": row.attach_status,
                        "transition": row.transition}
            if target == states.DESTROY:
                return attachments_db.Change(expected, destroy=True)
            return attachments_db.Change(
                expected, {"attach_status": target, "transition": transition})

        for attempt in range(3):
            try:
                row, volume, gone = attachments_db.attachment_change(
                    ctxt, attachment_id, decide)
            except attachments_db.Lost:
                LOG.debug("Attachment %(att)s changed under delete (attempt "
                          "%(n)d)", {"att": attachment_id, "n": attempt + 1})
                continue
            if gone is not None:
                return self._deleted(gone)
            return self._disconnect(ctxt, volume, row)
        raise self.changed(ctxt, attachment_id, "delete")

    def _disconnect(self, ctxt: RequestContext, volume: rows.VolumeBrief,
                    row: rows.AttachmentRow) -> rows.Destroyed:
        if volume.host:
            try:
                self.volume.attachment_disconnect(
                    ctxt, volume.host, row.id,
                    volume_rpcapi.snapshot(row, volume))
            except messaging.MessagingTimeout:
                raise exception.ServiceUnavailable(
                    reason="the volume service of %s did not answer; "
                           "attachment %s will be removed when it does"
                           % (volume.host, row.id))
        result = attachments_db.attachment_destroy(
            ctxt, volume.id, row.id, {"transition": T.DISCONNECTING})
        if result is None:
            raise self.changed(ctxt, row.id, "delete")
        return self._deleted(result)

    @staticmethod
    def _deleted(result: rows.Destroyed) -> rows.Destroyed:
        LOG.info("Attachment deleted from volume %(vol)s; %(left)d left",
                 {"vol": result["volume_id"],
                  "left": len(result["remaining"])})
        return result

    # -- volume-level helpers (legacy actions, reset) -----------------------
    def detach(self, ctxt: RequestContext, volume_id: str,
               attachment_id: str | None = None,
               force: bool = False) -> rows.Destroyed:
        """Legacy ``os-detach``/``os-force_detach``: delete one attachment.

        :raises InvalidVolume: no attachment id while several exist (a
            service or admin caller), or none exists.
        :raises ConflictNovaUsingAttachment: the same for a plain user.
        """
        volume = self._volume(ctxt, volume_id)
        rows = attachments_db.attachments_of_volume(ctxt, volume.id)
        if attachment_id is None:
            if len(rows) > 1:
                if not privileged(ctxt, volume, None):
                    raise ConflictNovaUsingAttachment(
                        instance_id=rows[0].instance_uuid)
                raise exception.InvalidVolume(
                    reason="Volume %s has %d attachments: more than one "
                           "attachment, but no attachment_id provided."
                           % (volume.id, len(rows)))
            if not rows:
                raise exception.InvalidVolume(
                    reason="Volume %s has no attachment to detach."
                    % volume.id)
            attachment_id = rows[0].id
        elif attachment_id not in {row.id for row in rows}:
            raise exception.AttachmentNotFound(attachment_id=attachment_id)
        return self.delete(ctxt, attachment_id, force=force)

    def delete_all(self, ctxt: RequestContext, volume_id: str) -> None:
        """Force-delete every attachment of a volume (reset to detached),
        each terminating its own connection."""
        for row in attachments_db.attachments_of_volume(ctxt, volume_id):
            self.delete(ctxt, row.id, force=True)


#: Most backend clients an attachment keeps registered (the latest).
MAX_CLIENTS = 32


def _fate(row: rows.AttachmentStatus | None,
          lease: dict[str, datetime.datetime]) -> str:
    """What becomes of a row whose connect was not answered."""
    if row is None:
        return "was not kept"
    fate = "stays %s" % row.attach_status
    if row.transition:
        fate += " (%s) until it is resolved" % row.transition
    if lease:
        fate += "; it is removed unless completed by %s" % (
            lease["lease_expires_at"].isoformat())
    return fate


#: A Ceph client instance's address, as librados gives it: an IP (IPv6 in
#: brackets), a port, and the instance's nonce.
_CLIENT_ADDRESS = re.compile(r"^(?:\[(?P<ip6>[0-9a-fA-F:.]+)\]|(?P<ip4>[0-9.]+))"
                             r":(?P<port>\d{1,5})/(?P<nonce>\d{1,10})$")


def refuse_foreign_clients(clients: Sequence[str],
                           connector: dict[str, Any]) -> None:
    """Accept only single client instances at the host's own address.

    NOTE(ashlar): a fence blocklists exactly what was registered: an
    entry with nonce 0 (``IP:0/0``) stands for every instance at that
    address, and another host's address would cut that host off.  So a
    registered client must be one instance (a nonce) at the address the
    attachment's connector gives for its host.

    :raises InvalidInput: one is not.
    """
    try:
        own = ipaddress.ip_address(connector.get("ip") or "")
    except ValueError:
        own = None
    for client in clients:
        if _client_ip(client) != own or own is None:
            raise exception.InvalidInput(
                reason="Client %r is not one client instance at this "
                       "host's address (%s)." % (client, own or "none"))


def _client_ip(client: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP of one client instance's address (None: it is no such
    address, or names every instance there: nonce 0)."""
    found = _CLIENT_ADDRESS.match(client)
    if found is None or int(found["nonce"]) == 0:
        return None
    try:
        return ipaddress.ip_address(found["ip6"] or found["ip4"])
    except ValueError:
        return None


def _registered(known: str | None, clients: Sequence[str]) -> str:
    """The registered clients (JSON) with ``clients`` added, the latest
    ``MAX_CLIENTS`` of them."""
    merged = [c for c in json.loads(known or "[]") if c not in clients]
    return json.dumps((merged + sorted(set(clients)))[-MAX_CLIENTS:])


def _connector_mode(connector: dict[str, Any]) -> str:
    mode = connector.get("mode")
    return mode if mode in (states.MODE_RW, states.MODE_RO) else \
        states.MODE_RW
