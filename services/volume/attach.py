"""The volume node's side of attachments: connect, disconnect, resolve stuck.

The API starts every attachment operation with a compare-and-swap that puts
the row *in flight* (``common.states.Transition``) and then calls this
service; this service makes the backend call and ends the transition, again
with a compare-and-swap.  Backend connections are per host: before removing
one, the rows still using it (same volume, same connector host, attaching or
attached) are counted under a lock per (volume, host), so two attachments of
one host share its connection and deleting one never cuts the other off.

A fence revokes the host's I/O through the driver under the same lock and
then records it; a fence whose api died is finished here, never undone.
"""

import contextlib
import datetime
import functools
import ipaddress
import json
import threading
from collections.abc import Iterator
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import excutils

from common import coordination
from common import exception
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api.timestamps import utcnow
from drivers import base as driver_base
from services.volume import rpcapi as volume_rpcapi
from services.volume.backend import driver_volume

LOG = logging.getLogger(__name__)
T = states.Transition


def connection_info(info: dict, attachment: Any, volume: Any,
                    connector: dict, mode: str) -> dict:
    """Cinder's flattened attachment ``connection_info``.

    The driver's ``data`` keys sit next to ``driver_volume_type``;
    ``access_mode`` is ``ro`` for an ``ro`` attachment or a read-only volume,
    so a host can enforce it.
    """
    result = dict(info.get("data") or {})
    result.update(
        driver_volume_type=info.get("driver_volume_type"),
        attachment_id=attachment.id,
        enforce_multipath=bool(connector.get("enforce_multipath", False)),
        access_mode=(states.MODE_RO if mode == states.MODE_RO
                     or volume.readonly else states.MODE_RW),
        encrypted=bool(volume.encrypted), cacheable=False,
        qos_specs=front_end_qos(volume))
    return result


def front_end_qos(volume: Any) -> dict | None:
    """The QoS specs a compute host applies, as Cinder gives them: per-GB
    IOPS keys (``read_iops_sec_per_gb``, with an optional ``..._min``)
    turned into fixed values for the volume's size."""
    if not volume.front_end_qos:
        return None
    specs = json.loads(volume.front_end_qos)
    for kind in ("read", "write", "total"):
        per_gb = specs.pop("%s_iops_sec_per_gb" % kind, None)
        least = specs.pop("%s_iops_sec_per_gb_min" % kind, None)
        if per_gb is not None:
            specs["%s_iops_sec" % kind] = max(int(per_gb) * volume.size,
                                              int(least or 0))
    return specs


def _conflict(row: Any, operation: str) -> exception.Conflict:
    """A Conflict that crosses RPC (``common.states`` classes do not)."""
    status = row.attach_status
    if row.transition:
        status = "%s (%s)" % (status, row.transition)
    return exception.Conflict(states.InvalidTransition(
        id=row.id, status=status, operation=operation).msg)


class Attacher:
    """Attachment work of one backend (``host@backend``)."""

    def __init__(self, conf: cfg.ConfigOpts, driver: driver_base.VolumeDriver,
                 service_host: str,
                 locks: coordination.Locks | None = None) -> None:
        self.conf = conf
        self.driver = driver
        self.service_host = service_host
        #: A (volume, host) lock per connection; across the members of a
        #: cluster too.
        self._locks = locks or coordination.Locks(None, service_host)
        #: Attachment ids this process is working on (never reaped).
        self._in_flight: set[str] = set()
        self._in_flight_guard = threading.Lock()

    @contextlib.contextmanager
    def _hold(self, row: Any) -> Iterator[None]:
        """Mark the row in hand and take its (volume, host) lock."""
        with self._in_flight_guard:
            self._in_flight.add(row.id)
        try:
            with self._locks.hold("attach-%s-%s" % (row.volume_id,
                                                    row.attached_host)):
                yield
        finally:
            with self._in_flight_guard:
                self._in_flight.discard(row.id)

    # -- connect --------------------------------------------------------------
    def connect(self, ctxt: RequestContext,
                snap: volume_rpcapi.AttachmentSnapshot) -> dict:
        """Make the backend connection of a row the API put in a connect
        transition (``snap``: ``volume_rpcapi.snapshot`` of it).

        :returns: what was written: ``attach_status``, ``connection_info``
            (JSON) and ``attach_time`` (ISO 8601).
        :raises Conflict: the row is not (or no longer) connecting.
        """
        row, volume, connector = volume_rpcapi.unpack(snap)
        transition = row.transition
        if transition not in T.CONNECT:
            raise _conflict(row, "connect")
        with self._hold(row):
            try:
                info = self.driver.initialize_connection(
                    driver_volume(volume), connector)
            except Exception:
                with excutils.save_and_reraise_exception():
                    LOG.exception("Connecting attachment %(att)s of volume "
                                  "%(vol)s to %(host)s failed",
                                  {"att": row.id, "vol": volume.id,
                                   "host": row.attached_host})
                    self._roll_back(ctxt, row, volume, connector)
            # NOTE(ashlar): whole seconds, as every database keeps it
            # (MariaDB's DATETIME), so that the answer matches later reads.
            attach_time = utcnow().replace(microsecond=0)
            done = {"connection_info": json.dumps(connection_info(
                        info, row, volume, connector, row.attach_mode)),
                    "attach_time": attach_time}
            # NOTE(ashlar): a connect ends in the status it began with
            # (``common.states``), so recording it is one statement that
            # does not touch the volume.
            if not attachments_db.attachment_record(
                    ctxt, volume.id, row.id,
                    {"transition": transition,
                     "attach_status": row.attach_status},
                    dict(done, transition=None)):
                # NOTE(ashlar): deleted (forced) while we connected.
                self._terminate_unless_shared(ctxt, row, volume, connector)
                raise exception.Conflict(
                    "Attachment %s changed while it was being connected."
                    % row.id)
        LOG.info("Attachment %(att)s of volume %(vol)s connected to %(host)s",
                 {"att": row.id, "vol": volume.id, "host": row.attached_host})
        return dict(done, attach_time=attach_time.isoformat(),
                    attach_status=row.attach_status)

    def _roll_back(self, ctxt: RequestContext, row: Any, volume: Any,
                   connector: dict) -> None:
        """Undo a connect that failed or was abandoned (lock held)."""
        self._terminate_unless_shared(ctxt, row, volume, connector)
        target = states.on_connect_failed(row.attach_status, row.transition)
        if target == states.DESTROY:
            attachments_db.attachment_destroy(
                ctxt, volume.id, row.id, {"transition": row.transition})
            return
        values = {"transition": None, "attach_status": target,
                  "connection_info": None}
        if target == states.ATT.RESERVED:
            values["attached_host"] = None
        attachments_db.attachment_cas(
            ctxt, volume.id, row.id, {"transition": row.transition}, values,
            replace_connector=target == states.ATT.RESERVED)

    # -- disconnect -------------------------------------------------------
    def disconnect(self, ctxt: RequestContext,
                   snap: volume_rpcapi.AttachmentSnapshot) -> None:
        """Remove the backend connection of a row being deleted, unless
        another attachment on the same host still uses it (``snap``:
        ``volume_rpcapi.snapshot`` of the row).

        :raises Conflict: the row is not being deleted.
        """
        row, volume, _none = volume_rpcapi.unpack(snap)
        with self._hold(row):
            now, connector, holders = attachments_db.disconnect_state(
                ctxt, volume.id, row.id, row.attached_host)
            if now is None or now.transition != T.DISCONNECTING:
                raise _conflict(now or row, "disconnect")
            self._terminate_unless_shared(ctxt, row, volume, connector,
                                          holders)

    def _terminate_unless_shared(self, ctxt: RequestContext, row: Any,
                                 volume: Any, connector: dict,
                                 holders: list | None = None) -> None:
        """Terminate ``row``'s host connection unless other rows use it
        (the (volume, host) lock is held, so ``holders`` is current)."""
        if not connector:
            return
        if holders is None:
            holders = attachments_db.connection_holders(
                ctxt, volume.id, row.id, row.attached_host)
        if holders:
            LOG.info("Keeping the connection of volume %(vol)s to %(host)s: "
                     "attachments %(others)s still use it",
                     {"vol": volume.id, "host": row.attached_host,
                      "others": ", ".join(holders)})
            return
        self.driver.terminate_connection(driver_volume(volume), connector)
        LOG.info("Terminated the connection of volume %(vol)s to %(host)s",
                 {"vol": volume.id, "host": row.attached_host})

    # -- stuck transitions ------------------------------------------------
    def resolve_stuck(self, ctxt: RequestContext) -> int:
        """Resolve rows whose operation died with its process.

        A row counts as stuck when it has been in flight longer than
        ``attachment_transition_timeout`` and this process is not working
        on it.  The connection is terminated (unless shared), then a connect
        is rolled back and a delete finished.

        :returns: how many rows were resolved.
        """
        older = utcnow() - datetime.timedelta(
            seconds=self.conf.attachment_transition_timeout)
        resolved = 0
        for stuck in attachments_db.attachments_in_transition(
                ctxt, self.service_host, older):
            with self._in_flight_guard:
                if stuck.id in self._in_flight:
                    continue
            try:
                resolved += self._resolve_one(ctxt, stuck)
            except Exception:
                LOG.exception("Could not resolve stuck attachment %s",
                              stuck.id)
        return resolved

    def _resolve_one(self, ctxt: RequestContext,
                     stuck: models.VolumeAttachment) -> int:
        try:
            with self._hold(stuck):
                return self._resolve_held(ctxt, stuck)
        except exception.NotFound:
            return 0  # gone meanwhile

    def _resolve_held(self, ctxt: RequestContext,
                      stuck: models.VolumeAttachment) -> int:
        row, volume, _shared = attachments_db.attachment_with_volume(
            ctxt, stuck.id)
        transition = row.transition
        if transition is None or (transition, row.updated_at) != (
                stuck.transition, stuck.updated_at):
            return 0  # someone else moved it
        connector = attachments_db.connector(ctxt, row.id)
        target = states.resolve_stuck(row.attach_status, transition)
        LOG.warning("Attachment %(att)s of volume %(vol)s was stuck in "
                    "%(transition)s; resolving it to %(target)s",
                    {"att": row.id, "vol": volume.id,
                     "transition": row.transition, "target": target})
        if target == states.FENCE:
            self._fence_held(ctxt, row.id)
        elif row.transition == T.DISCONNECTING:
            self._terminate_unless_shared(ctxt, row, volume, connector)
            attachments_db.attachment_destroy(
                ctxt, volume.id, row.id, {"transition": T.DISCONNECTING})
        else:
            self._roll_back(ctxt, row, volume, connector)
        return 1

    # -- agents' leases -----------------------------------------------------
    def reap_lapsed_leases(self, ctxt: RequestContext) -> int:
        """Remove the attachments compute agents made through the RPC door
        and did not complete before their lease lapsed: the agent vanished,
        or its call timed out and it never learnt the id.

        :returns: how many rows were removed.
        """
        reaped = 0
        for lapsed in attachments_db.attachments_with_lapsed_lease(
                ctxt, self.service_host, utcnow()):
            try:
                reaped += self._reap(ctxt, lapsed)
            except Exception:
                LOG.exception("Could not remove attachment %s, whose lease "
                              "lapsed", lapsed.id)
        return reaped

    def _reap(self, ctxt: RequestContext,
              lapsed: models.VolumeAttachment) -> int:
        """Mark the row disconnecting (unless its agent completed or renewed
        it meanwhile), terminate its connection unless shared, remove it;
        a volume service that dies midway finishes it as a stuck delete."""
        with self._hold(lapsed):
            if not attachments_db.attachment_record(
                    ctxt, lapsed.volume_id, lapsed.id,
                    {"transition": None, "attach_status": lapsed.attach_status,
                     "lease_expires_at": lapsed.lease_expires_at},
                    {"transition": T.DISCONNECTING}):
                return 0
            LOG.warning("Attachment %(att)s of volume %(vol)s (%(status)s, "
                        "host %(host)s) was not completed by its compute "
                        "agent before its lease lapsed at %(at)s; removing "
                        "it", {"att": lapsed.id, "vol": lapsed.volume_id,
                               "status": lapsed.attach_status,
                               "host": lapsed.attached_host,
                               "at": lapsed.lease_expires_at})
            volume = attachments_db.volume_brief(ctxt, lapsed.volume_id)
            self._terminate_unless_shared(
                ctxt, lapsed, volume, attachments_db.connector(ctxt,
                                                               lapsed.id))
            attachments_db.attachment_destroy(
                ctxt, volume.id, lapsed.id, {"transition": T.DISCONNECTING})
        return 1

    # -- REST rows never completed ------------------------------------------
    def complete_unconfirmed(self, ctxt: RequestContext) -> int:
        """Complete the rows made over REST that hold a live connection
        but that no one completed within ``agent_attachment_lease``
        (their caller vanished after the connect).

        NOTE(ashlar): Cinder leaves such a row ``attaching`` for good.
        Completing it (``attached``, the volume ``in-use``) says what the
        backend does, a host may use the volume, and never cuts I/O that
        may be live; its owner detaches it as any attachment.

        :returns: how many rows were completed.
        """
        lease = self.conf.agent_attachment_lease
        if not lease:
            return 0
        older = utcnow() - datetime.timedelta(seconds=lease)
        done = 0
        for row in attachments_db.attachments_unconfirmed(
                ctxt, self.service_host, older):
            try:
                attachments_db.attachment_change(
                    ctxt, row.id, functools.partial(_unconfirmed, row))
            except (attachments_db.Lost, exception.NotFound):
                continue  # changed or gone meanwhile
            LOG.warning("Attachment %(att)s of volume %(vol)s (host "
                        "%(host)s) was connected at %(at)s and never "
                        "completed; completing it",
                        {"att": row.id, "vol": row.volume_id,
                         "host": row.attached_host,
                         "at": row.updated_at or row.created_at})
            done += 1
        return done

    # -- fencing ------------------------------------------------------------
    def fence(self, ctxt: RequestContext,
              snap: volume_rpcapi.AttachmentSnapshot) -> dict:
        """Revoke the host's I/O of a row the api put in the ``fencing``
        transition, then record it (``fenced_at``; no longer a writer).

        :returns: ``{"fenced_at" (ISO 8601), "fenced_clients"}``.
        :raises Conflict: the row is not being fenced.
        :raises FencingNotSupported: or FencingFailed: the row is back at
            rest, not fenced.
        """
        row, _volume, _none = volume_rpcapi.unpack(snap)
        with self._hold(row):
            return self._fence_held(ctxt, row.id)

    def _fence_held(self, ctxt: RequestContext, attachment_id: str) -> dict:
        row, volume, _shared = attachments_db.attachment_with_volume(
            ctxt, attachment_id)
        if row.transition != T.FENCING:
            raise _conflict(row, "fence")
        target = self._fence_target(ctxt, row)
        try:
            clients = self.driver.fence(driver_volume(volume), target)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception("Fencing %(host)s from volume %(vol)s failed",
                              {"host": row.attached_host, "vol": volume.id})
                attachments_db.attachment_record(
                    ctxt, volume.id, row.id, {"transition": T.FENCING},
                    {"transition": None})
        fenced_at = utcnow().replace(microsecond=0)
        done = {"fenced_at": fenced_at, "fenced_clients": json.dumps(clients)}
        if not attachments_db.attachment_cas(
                ctxt, volume.id, row.id, {"transition": T.FENCING},
                dict(done, transition=None),
                writer_delta=-int(states.is_writer(row.attach_mode))):
            LOG.warning("Attachment %s changed while it was fenced (a "
                        "delete took it over); its host is fenced", row.id)
        LOG.info("Fenced %(host)s from volume %(vol)s (attachment %(att)s)",
                 {"host": row.attached_host, "vol": volume.id, "att": row.id})
        return dict(done, fenced_at=fenced_at.isoformat(),
                    fenced_clients=clients)

    @staticmethod
    def _fence_target(ctxt: RequestContext, row: Any
                      ) -> driver_base.FenceTarget:
        """Who to cut off: the row's registered clients, plus its host's
        address when no other host of the volume shares it (loopback is
        everybody's)."""
        connector = attachments_db.connector(ctxt, row.id)
        ip = connector.get("ip")
        if ip and _is_loopback(ip):
            ip = None
        for other in attachments_db.attachments_of_volume(ctxt,
                                                          row.volume_id):
            if ip and other.attached_host != row.attached_host and any(
                    spec.key == "ip" and spec.value is not None
                    and json.loads(spec.value) == ip
                    for spec in other.specs):
                ip = None
        return driver_base.FenceTarget(
            host=row.attached_host or "", ip=ip,
            clients=tuple(json.loads(row.clients or "[]")),
            connected=bool(connector))

    def unfence(self, ctxt: RequestContext, volume_id: str, clients: list[str]
                ) -> None:
        """Lift what a fence of ``volume_id`` revoked."""
        volume = attachments_db.volume_brief(ctxt, volume_id)
        self.driver.unfence(driver_volume(volume), clients)


def _unconfirmed(seen: models.VolumeAttachment, row: Any,
                 volume: Any) -> attachments_db.Change:
    """Complete ``row`` if it is still as ``seen``: attaching, at rest,
    without a lease, not fenced, not touched since.

    :raises Lost: it changed.
    """
    if (row.attach_status, row.transition, row.lease_expires_at,
            row.fenced_at, row.updated_at) != (
            seen.attach_status, None, None, None, seen.updated_at):
        raise attachments_db.Lost()
    return attachments_db.Change(
        expected={"attach_status": row.attach_status, "transition": None,
                  "lease_expires_at": None, "fenced_at": None},
        values={"attach_status": states.on_complete(
            row.id, row.attach_status, row.transition)})


def _is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False
