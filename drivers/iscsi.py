"""iSCSI backend: volumes (files or RBD images) served by Debian's ``tgt``.

Storage is a store's (:mod:`drivers.iscsi_stores`, by ``iscsi_backing``):
the file driver's raw files (snapshots and clones as copies) or the RBD
driver's images (snapshots and copy-on-write clones), each made, grown,
snapshotted and removed by that driver's own code.  This module adds the
target layer of Cinder's ``target_helper = tgtadm``: one target per
volume, named ``<target_prefix>volume-<id>``, whose LUN 1 is the volume's
file (tgt's ``rdwr`` backing store) or image (tgt-rbd's ``rbd``), with a
CHAP account of its own (generated).  Unlike Cinder, a target's ACL holds
only the initiators of the hosts attached to it (``initialize_connection``
binds the connector's ``initiator``, ``terminate_connection`` unbinds it)
plus the volume node's own initiator, which fences.

What each export is (IQN, CHAP account, attached hosts and their
initiators, fenced initiators) is kept in a JSON file per volume under
``iscsi_target_dir``; tgtd keeps nothing across its restarts, so
``do_setup`` recreates every volume's target from those files, and a call
that finds its target gone recreates it.

A fence (``fence``) is SCSI-3 persistent reservation plus ACL: the volume
node logs in as its own initiator, registers its key and PREEMPTs the
fenced host's key (``common.libiscsi.registration_key`` of the host name,
which the host's agent registers before it writes), so the host's next
command is refused with RESERVATION CONFLICT; then the host's initiator
leaves the ACL and its connections are closed, which lasts past what tgt
forgets (reservations, at a restart of tgtd or a re-added LUN).  tgt
refuses PREEMPT AND ABORT (docs/backends.md), so a command it accepted
before the PREEMPT may still complete.
"""

import contextlib
import dataclasses
import json
import os
import secrets
import string
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import exception
from common import libiscsi
from drivers import base
from drivers import iscsi_stores
from drivers import tgtadm

LOG = logging.getLogger(__name__)

ISCSI_OPTS = [
    cfg.StrOpt("target_helper", default="tgtadm",
               choices=[("tgtadm", "tgt's tgtd, driven by tgtadm.")],
               help="The iSCSI target that serves the volumes: Debian's "
               "userspace tgt, driven by tgtadm."),
    cfg.StrOpt("target_prefix", default="iqn.2010-10.org.openstack:",
               help="Prefix of the targets' IQNs (a target is "
               "<prefix>volume-<id>); Cinder's default."),
    cfg.HostAddressOpt("target_ip_address", default="127.0.0.1",
                       help="Address of the portal hosts log in to (tgtd's "
                       "--iscsi portal); the volume node fences through "
                       "it too."),
    cfg.ListOpt("target_secondary_ip_addresses", default=[],
                help="Further portal addresses, given to hosts in "
                "target_portals."),
    cfg.PortOpt("target_port", default=3260, help="The portal's port."),
    cfg.IntOpt("tgtadm_control_port", default=0, min=0,
               help="tgtd's control port (tgtadm -C; tgtd -C): 0, tgtd's "
               "default, or the one of a tgtd started for this backend."),
    cfg.StrOpt("iscsi_target_dir", default="$state_path/iscsi_targets",
               help="Folder of the volumes' export files (CHAP account, "
               "attached and fenced initiators), from which targets are "
               "recreated after tgtd or the volume service restarts."),
    cfg.StrOpt("iscsi_fence_initiator",
               help="IQN the volume node logs in as to fence a host "
               "(bound to every target). Default: <target_prefix>fencer."
               "<host@backend, lower case, @ and _ as ->."),
]

#: A volume's target: ``<target_prefix>volume-<id>``.
NAME_FORMAT = "volume-%s"
_CHAP_ALPHABET = string.ascii_letters + string.digits
#: Cinder's lengths of a generated CHAP user name and secret.
CHAP_USER_LENGTH = 20
CHAP_SECRET_LENGTH = 16
_STATE_MODE = 0o600
_TMP_PREFIX = ".export-"
#: Tries at a free tid when another backend on the same tgtd takes it.
_TID_TRIES = 5

SessionFactory = Callable[..., libiscsi.Session]


@dataclasses.dataclass
class Export:
    """What a volume's target is, as its export file keeps it."""

    iqn: str
    username: str
    password: str
    #: connector ``host`` -> its initiator IQN
    hosts: dict[str, str] = dataclasses.field(default_factory=dict)
    #: initiators a fence cut off (not in the ACL until unfenced)
    fenced: list[str] = dataclasses.field(default_factory=list)

    def allowed(self) -> set[str]:
        """The hosts' initiators that may log in."""
        return set(self.hosts.values()) - set(self.fenced)


def _random(length: int) -> str:
    return "".join(secrets.choice(_CHAP_ALPHABET) for _ in range(length))


def portal(address: str, port: int) -> str:
    """``address:port``, an IPv6 address in brackets."""
    return "[%s]:%d" % (address, port) if ":" in address else "%s:%d" % (
        address, port)


class IscsiDriver(base.VolumeDriver):
    """A store's volumes as tgt targets, with fencing by persistent
    reservation and ACL."""

    VERSION = "1.1.0"
    STORAGE_PROTOCOL = "iSCSI"
    FENCING = True
    driver_opts = (*iscsi_stores.options(), *ISCSI_OPTS)

    def __init__(self, conf: cfg.ConfigOpts.GroupAttr, backend_name: str,
                 host: str, runner: tgtadm.Runner = tgtadm.run,
                 session: SessionFactory = libiscsi.Session) -> None:
        super().__init__(conf, backend_name, host)
        #: The volumes' storage: file or RBD driver (``iscsi_backing``).
        self.store = iscsi_stores.build(conf, backend_name, host)
        self.tgt = tgtadm.TgtAdm(conf.tgtadm_control_port, runner)
        self._session = session
        self.target_dir: str = conf.iscsi_target_dir
        self.fence_initiator: str = (
            conf.iscsi_fence_initiator
            or "%sfencer.%s" % (conf.target_prefix, host.lower().replace(
                "@", "-").replace("_", "-")))
        self._lock = threading.RLock()
        self._tgt_up: bool | None = None

    # -- set-up -----------------------------------------------------------
    def do_setup(self) -> None:
        """The store's set-up, then every volume's target (tgtd forgets
        them when it restarts)."""
        self.store.do_setup()
        try:
            os.makedirs(self.target_dir, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot prepare %s: %s" % (self.target_dir, exc)
            ) from exc
        if not self.tgt.ready():
            raise exception.VolumeBackendAPIException(
                data="tgtd does not answer on control port %d"
                % self.tgt.control_port)
        self.ensure_exports()

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()

    def ensure_exports(self) -> int:
        """Recreate in tgtd what the export files say (targets, LUNs,
        accounts, ACLs) and drop the exports of volumes gone; how many
        targets there are."""
        with self._lock:
            shown = self.tgt.targets()
            volumes = self.store.volume_locations()
            for volume_id in volumes:
                try:
                    self._ensure_export(volume_id, self._lun(volume_id),
                                        shown)
                except (exception.VolumeBackendAPIException,
                        exception.VolumeNotFound):
                    # NOTE(ashlar): the others are served; this one's next
                    # call tries again (and fails, if it still fails).
                    LOG.exception("Could not export volume %s", volume_id)
            for volume_id in set(self._saved_exports()) - set(volumes):
                LOG.warning("Volume %s has an export but no storage; "
                            "removing the export", volume_id)
                self._unexport(volume_id)
        LOG.info("iSCSI backend %(name)s: %(count)d targets on tgtd "
                 "(control port %(port)d)", {"name": self.backend_name,
                                             "count": len(volumes),
                                             "port": self.tgt.control_port})
        return len(volumes)

    def _ensure_export(self, volume_id: str, lun: tgtadm.Backing,
                       shown: dict[str, tgtadm.Target] | None = None) -> int:
        """Make tgtd serve the volume as its export file says; its tid."""
        export = self._load(volume_id) or self._new_export(volume_id)
        if shown is None:
            shown = self.tgt.targets()
        target = shown.get(export.iqn)
        if target is None:
            target = tgtadm.Target(self._new_target(export.iqn, shown),
                                   export.iqn)
        if tgtadm.LUN not in target.luns:
            self.tgt.add_lun(target.tid, lun)
        if export.username not in target.accounts:
            self.tgt.new_account(export.username, export.password)
            self.tgt.bind_account(target.tid, export.username)
        allowed = export.allowed() | {self.fence_initiator}
        for initiator in sorted(target.acl - allowed):
            self.tgt.unbind(target.tid, initiator)
        for initiator in sorted(allowed - target.acl):
            self.tgt.bind(target.tid, initiator)
        return target.tid

    def _new_target(self, iqn: str, shown: dict[str, tgtadm.Target]) -> int:
        """A new target's tid: one past the largest in use, again if
        another backend of this tgtd took it meanwhile."""
        for _ in range(_TID_TRIES):
            tid = max((t.tid for t in shown.values()), default=0) + 1
            try:
                self.tgt.new_target(tid, iqn)
                return tid
            except exception.VolumeBackendAPIException:
                shown.clear()
                shown.update(self.tgt.targets())
                if iqn in shown:
                    return shown[iqn].tid
        raise exception.VolumeBackendAPIException(
            data="no free tid for target %s" % iqn)

    def _apply(self, volume_id: str) -> int:
        """Make tgtd serve the volume as its export file says (under the
        lock); its tid.

        NOTE(ashlar): tgt numbers targets in the order they are made, so a
        tid is looked up by IQN for every change (one ``show``), never
        kept: after a restart of tgtd it may be another volume's.
        """
        with self._lock:
            return self._ensure_export(volume_id, self._lun(volume_id))

    def _lun(self, volume_id: str) -> tgtadm.Backing:
        """What LUN 1 of the volume's target is.

        :raises VolumeNotFound: the store has no such volume.
        """
        lun = self.store.lun(volume_id)
        if lun is None:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return lun

    # -- export files -------------------------------------------------------
    def _state_path(self, volume_id: str) -> str:
        return os.path.join(self.target_dir, "volume-%s.json" % volume_id)

    def _load(self, volume_id: str) -> Export | None:
        try:
            with open(self._state_path(volume_id)) as state:
                return Export(**json.load(state))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as exc:
            raise exception.VolumeBackendAPIException(
                data="cannot read the export of volume %s: %s"
                % (volume_id, exc)) from exc

    def _save(self, volume_id: str, export: Export) -> None:
        """Write the export file through a temporary one (mode 0600: it
        holds the CHAP secret)."""
        fd, tmp = tempfile.mkstemp(dir=self.target_dir, prefix=_TMP_PREFIX)
        try:
            with os.fdopen(fd, "w") as state:
                os.fchmod(state.fileno(), _STATE_MODE)
                json.dump(dataclasses.asdict(export), state)
                state.flush()
                os.fsync(state.fileno())
            os.replace(tmp, self._state_path(volume_id))
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise exception.VolumeBackendAPIException(
                data="cannot save the export of volume %s: %s"
                % (volume_id, exc)) from exc

    def _new_export(self, volume_id: str) -> Export:
        """A new export: the IQN and a generated CHAP account."""
        export = Export(iqn=self.conf.target_prefix + NAME_FORMAT % volume_id,
                        username=_random(CHAP_USER_LENGTH),
                        password=_random(CHAP_SECRET_LENGTH))
        self._save(volume_id, export)
        return export

    def _saved_exports(self) -> list[str]:
        """The volume ids that have an export file (a temporary file a
        crash left is removed)."""
        found = []
        for name in os.listdir(self.target_dir):
            if name.startswith("volume-") and name.endswith(".json"):
                found.append(name[len("volume-"):-len(".json")])
            elif name.startswith(_TMP_PREFIX):
                os.unlink(os.path.join(self.target_dir, name))
        return found

    def _unexport(self, volume_id: str) -> None:
        """Delete the volume's target and account and its export file."""
        export = self._load(volume_id)
        if export is None:
            return
        target = self.tgt.targets().get(export.iqn)
        if target is not None:
            self.tgt.delete_target(target.tid)
        self.tgt.delete_account(export.username)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._state_path(volume_id))
        LOG.info("Removed target %s", export.iqn)

    # -- volumes: the store's, then the target ------------------------------
    def _exported(self, volume: base.DriverVolume,
                  create: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``create()`` the volume in the store, then its target; a volume
        this call made is removed again when the target cannot be."""
        made = self.store.lun(volume.id) is None
        update = create()
        try:
            with self._lock:
                self._ensure_export(volume.id, self._lun(volume.id))
        except Exception:
            if made:
                with contextlib.suppress(Exception):
                    self.delete_volume(volume)
            raise
        return update

    def create_volume(self, volume: base.DriverVolume) -> dict[str, Any]:
        """A raw file or an image, and its target."""
        return self._exported(volume, lambda: self.store.create_volume(volume))

    def create_volume_from_snapshot(self, volume: base.DriverVolume,
                                    snapshot: base.DriverSnapshot
                                    ) -> dict[str, Any]:
        """The store's volume from the snapshot (a copy of its file, a
        clone of its image) and its target."""
        return self._exported(volume, lambda: self.store
                              .create_volume_from_snapshot(volume, snapshot))

    def create_cloned_volume(self, volume: base.DriverVolume,
                             source: base.DriverVolume) -> dict[str, Any]:
        """The store's copy or clone of the source, and its target."""
        return self._exported(volume, lambda: self.store
                              .create_cloned_volume(volume, source))

    def copy_source(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The store's (a file another file-backed iscsi backend that sees
        it copies, an image an rbd or rbd-backed iscsi backend of the same
        cluster copies), with the target as the ``connection`` any other
        backend reads."""
        return dict(self.store.copy_source(volume),
                    connection=self.copy_connection(volume))

    @property
    def copy_reader(self) -> base.CopyReader | None:
        """The store's: it makes the generic copies."""
        return self.store.copy_reader

    @copy_reader.setter
    def copy_reader(self, reader: base.CopyReader | None) -> None:
        self.store.copy_reader = reader

    def create_volume_from_copy(self, volume: base.DriverVolume,
                                source: dict[str, Any]) -> dict[str, Any]:
        """The store's copy of another backend's volume (its quick path,
        else the generic copy through this node's data path), and its
        target."""
        return self._exported(volume, lambda: self.store
                              .create_volume_from_copy(volume, source))

    def copy_connection(self, volume: base.DriverVolume) -> dict[str, Any]:
        """The target for another volume node to read, logged in as this
        node's fence initiator (``initiator``), which every target's ACL
        holds: no host is bound for it, so a move that ends leaves no
        binding behind."""
        self._lun(volume.id)
        with self._lock:
            export = self._load(volume.id) or self._new_export(volume.id)
            self._apply(volume.id)
        return dict(self._properties(volume, export), access_mode="ro",
                    driver_volume_type="iscsi",
                    initiator=self.fence_initiator)

    def delete_volume(self, volume: base.DriverVolume) -> None:
        """The target (its sessions closed, tgt's image closed), then the
        file or image."""
        with self._lock:
            self._unexport(volume.id)
        self.store.delete_volume(volume)

    def extend_volume(self, volume: base.DriverVolume, new_size: int) -> None:
        """Grow the file or image, then delete and add LUN 1 again: tgt
        reads a backing store's size only when a LUN is added.

        NOTE(ashlar): tgt drops the LUN's registrations and reservation
        with it.  Hosts keep their sessions; a handle opened later
        registers again, and until then a fence of a host rests on the ACL
        and the closed connections.
        """
        self.store.extend_volume(volume, new_size)
        with self._lock:
            tid = self._apply(volume.id)
            self.tgt.delete_lun(tid)
            self.tgt.add_lun(tid, self._lun(volume.id))

    def revert_to_snapshot(self, volume: base.DriverVolume,
                           snapshot: base.DriverSnapshot) -> None:
        """Take LUN 1 away (tgt holds the file or image open), revert in
        the store, add LUN 1 again."""
        with self._lock:
            tid = self._apply(volume.id)
            self.tgt.delete_lun(tid)
            try:
                self.store.revert_to_snapshot(volume, snapshot)
            finally:
                self.tgt.add_lun(tid, self._lun(volume.id))

    def retype(self, volume: base.DriverVolume, multiattach: bool) -> None:
        """The store's (an image's lock features follow)."""
        self.store.retype(volume, multiattach)

    def volume_locations(self) -> dict[str, str | None]:
        """The store's volumes (files or ``pool/image``)."""
        return self.store.volume_locations()

    # -- snapshots: the store's ---------------------------------------------
    def create_snapshot(self, snapshot: base.DriverSnapshot
                        ) -> dict[str, Any]:
        """A whole copy of the file, or a protected RBD snapshot."""
        return self.store.create_snapshot(snapshot)

    def delete_snapshot(self, snapshot: base.DriverSnapshot) -> None:
        """The store's snapshot, removed."""
        self.store.delete_snapshot(snapshot)

    def initialize_connection_snapshot(self, snapshot: base.DriverSnapshot,
                                       connector: dict[str, Any]
                                       ) -> dict[str, Any]:
        """The store's (a file store's snapshot file, read locally)."""
        return self.store.initialize_connection_snapshot(snapshot, connector)

    # -- existing storage: the store's --------------------------------------
    def manageable_volumes(self) -> list[dict[str, Any]]:
        return self.store.manageable_volumes()

    def manage_existing_get_size(self, ref: dict[str, Any]) -> int:
        return self.store.manage_existing_get_size(ref)

    def manage_existing(self, volume: base.DriverVolume,
                        ref: dict[str, Any]) -> dict[str, Any]:
        """The store adopts it; its target is made at its first attach."""
        return self.store.manage_existing(volume, ref)

    def unmanage(self, volume: base.DriverVolume) -> None:
        """Remove the target; the store leaves the file or image."""
        with self._lock:
            self._unexport(volume.id)
        self.store.unmanage(volume)

    def manageable_snapshots(self) -> list[dict[str, Any]]:
        return self.store.manageable_snapshots()

    def manage_existing_snapshot_get_size(self, ref: dict[str, Any]) -> int:
        return self.store.manage_existing_snapshot_get_size(ref)

    def manage_existing_snapshot(self, snapshot: base.DriverSnapshot,
                                 ref: dict[str, Any]) -> dict[str, Any]:
        return self.store.manage_existing_snapshot(snapshot, ref)

    # -- connections --------------------------------------------------------
    def initialize_connection(self, volume: base.DriverVolume,
                              connector: dict[str, Any]) -> dict[str, Any]:
        """Bind the connector's initiator to the volume's target; Cinder's
        ``iscsi`` connection_info with the target's CHAP account.

        :raises InvalidInput: the connector has no ``initiator``.
        :raises VolumeBackendAPIException: that initiator is fenced.
        """
        initiator = connector.get("initiator")
        if not initiator:
            raise exception.InvalidInput(
                reason="the connector of %s has no iSCSI initiator"
                % connector.get("host"))
        self._lun(volume.id)
        with self._lock:
            export = self._load(volume.id) or self._new_export(volume.id)
            if initiator in export.fenced:
                raise exception.VolumeBackendAPIException(
                    data="initiator %s is fenced from volume %s"
                    % (initiator, volume.id))
            export.hosts[connector.get("host") or initiator] = initiator
            self._save(volume.id, export)
            self._apply(volume.id)
        LOG.info("Volume %(id)s: %(initiator)s may log in to %(iqn)s",
                 {"id": volume.id, "initiator": initiator,
                  "iqn": export.iqn})
        return {"driver_volume_type": "iscsi",
                "data": self._properties(volume, export)}

    def _properties(self, volume: base.DriverVolume,
                    export: Export) -> dict[str, Any]:
        portals = [portal(address, self.conf.target_port) for address in (
            self.conf.target_ip_address,
            *self.conf.target_secondary_ip_addresses)]
        return {
            "target_discovered": False,
            "target_iqn": export.iqn,
            "target_iqns": [export.iqn] * len(portals),
            "target_portal": portals[0],
            "target_portals": portals,
            "target_lun": tgtadm.LUN,
            "target_luns": [tgtadm.LUN] * len(portals),
            "volume_id": volume.id,
            "auth_method": "CHAP",
            "auth_username": export.username,
            "auth_password": export.password,
            # NOTE(ashlar): tgt's rdwr LUNs are not thin-provisioned here
            # (no UNMAP), as Cinder's tgt targets by default.
            "discard": False,
            "access_mode": "rw",
        }

    def terminate_connection(self, volume: base.DriverVolume,
                             connector: dict[str, Any] | None) -> None:
        """Unbind the host's initiator (the volume service calls this
        once no other attachment of the host uses the connection); with
        no connector, every host's, whose connections are closed too."""
        with self._lock:
            export = self._load(volume.id)
            if export is None:
                return
            if connector is None:
                gone = set(export.hosts.values()) | set(export.fenced)
                export.hosts.clear()
            else:
                initiator = connector.get("initiator") or ""
                export.hosts.pop(connector.get("host") or initiator, None)
                gone = ({initiator} - set(export.hosts.values())
                        if initiator else set())
            export.fenced = sorted(set(export.fenced) - gone)
            self._save(volume.id, export)
            gone.discard(self.fence_initiator)
            if gone and self.store.lun(volume.id) is not None:
                tid = self._apply(volume.id)
                if connector is None:
                    self._disconnect(tid, gone)

    def _disconnect(self, tid: int, initiators: set[str]) -> None:
        """Close the connections of ``initiators`` (out of the ACL)."""
        for initiator in sorted(initiators):
            self.tgt.disconnect(tid, initiator)

    # -- fencing ------------------------------------------------------------
    def fence(self, volume: base.DriverVolume,
              target: base.FenceTarget) -> list[str]:
        """PREEMPT the host's reservation key, then take its initiator
        off the target's ACL and close its connections.

        :returns: the initiators cut off (what ``unfence`` lets in again).
        :raises FencingFailed: the host's initiator is not known, or
            tgtadm failed (the PREEMPT alone does not last).
        """
        with self._lock:
            export = self._load(volume.id)
            initiators = self._initiators_of(export, target)
            if export is None or not initiators:
                if target.connected:
                    raise exception.FencingFailed(
                        what="fence %s" % target.host,
                        reason="no iSCSI initiator of that host is bound "
                        "to volume %s" % volume.id)
                return []
            # NOTE(ashlar): the PREEMPT first, which refuses the host's next
            # command at once; then what lasts, recorded before it is made.
            self._preempt(volume.id, export, target.host)
            export.fenced = sorted(set(export.fenced) | initiators)
            self._save(volume.id, export)
            try:
                self._disconnect(self._apply(volume.id), initiators)
            except exception.VolumeBackendAPIException as exc:
                raise exception.FencingFailed(
                    what="fence %s" % target.host, reason=str(exc)) from exc
        LOG.info("Fenced %(host)s (%(initiators)s) from volume %(id)s",
                 {"host": target.host, "id": volume.id,
                  "initiators": ", ".join(sorted(initiators))})
        return sorted(initiators)

    @staticmethod
    def _initiators_of(export: Export | None,
                       target: base.FenceTarget) -> set[str]:
        """The host's initiator, as its connector gave it, plus the
        clients its agent registered that are initiators of the volume."""
        if export is None:
            return set()
        bound = set(export.hosts.values())
        found = {client for client in target.clients if client in bound}
        if target.host in export.hosts:
            found.add(export.hosts[target.host])
        return found

    def _preempt(self, volume_id: str, export: Export, host: str) -> None:
        """Log in as the fencing initiator, register this node's key and
        PREEMPT the host's: its next command gets RESERVATION CONFLICT.

        A failure is logged, not raised: the ACL and the closed
        connections that follow fence the host on their own.
        """
        own = libiscsi.registration_key(self.host)
        victim = libiscsi.registration_key(host)
        try:
            with self._session(
                    portal(self.conf.target_ip_address, self.conf.target_port),
                    export.iqn, tgtadm.LUN, self.fence_initiator,
                    chap=(export.username, export.password)) as session:
                session.register(own)
                session.preempt(own, victim)
        except libiscsi.ReservationConflict:
            LOG.info("Host %(host)s holds no registration on volume %(id)s "
                     "(key %(key)#x)", {"host": host, "id": volume_id,
                                        "key": victim})
        except (libiscsi.Error, OSError) as exc:
            LOG.warning("Could not PREEMPT %(host)s's key on volume %(id)s "
                        "(%(err)s); fencing it by ACL and connections",
                        {"host": host, "id": volume_id, "err": exc})

    def unfence(self, volume: base.DriverVolume, clients: list[str]) -> None:
        """Let the initiators a fence cut off log in again (those still
        attached)."""
        with self._lock:
            export = self._load(volume.id)
            if export is None:
                return
            lifted = set(clients) & set(export.fenced)
            export.fenced = sorted(set(export.fenced) - lifted)
            self._save(volume.id, export)
            try:
                self._apply(volume.id)
            except exception.VolumeBackendAPIException as exc:
                raise exception.FencingFailed(what="lift a fence",
                                              reason=str(exc)) from exc
        LOG.info("Unfenced %(initiators)s on volume %(id)s",
                 {"initiators": ", ".join(sorted(lifted)) or "nothing",
                  "id": volume.id})

    # -- capabilities -------------------------------------------------------
    def check_for_setup_error(self) -> None:
        """The store's check."""
        self.store.check_for_setup_error()

    def get_volume_stats(self, refresh: bool = False) -> dict[str, Any]:
        """The store's figures (capacity, multiattach: ``file_multiattach``
        or ``rbd_multiattach``) as an iSCSI pool that fences; ``down``
        while tgtd does not answer."""
        if refresh or self._tgt_up is None:
            self._tgt_up = self.tgt.ready()
        return iscsi_stores.iscsi_stats(self.store.get_volume_stats(refresh),
                                        self.VERSION, self.FENCING,
                                        up=self._tgt_up)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Options for oslo-config-generator (namespace ashlar.drivers.iscsi)."""
    return IscsiDriver.list_opts()
