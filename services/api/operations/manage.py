"""Manage and unmanage: existing storage adopted as a volume or a snapshot,
and a volume or snapshot forgotten with its storage left (Cinder's
``manage_existing``, ``get_manageable_*`` and ``unmanage_only`` deletes).

A manage names a backend (``host@backend[#pool]``, or a cluster) and a
driver's ``ref``.  Unlike Cinder, the api asks the backend at once for the
ref's size (a call), so a ref that names nothing is a 400 and the quota is
checked with the real size in the transaction that inserts the row; the
row is ``managing`` (shown ``creating``) until the backend has renamed the
storage (a cast).  An unmanage is a delete's compare-and-swap to
``unmanaging`` (shown ``deleting``); the backend then drops the row only.
"""

import functools
import json
import re
import uuid
from typing import Any

from oslo_config import cfg
from oslo_log import log as logging

from common import attach_rules
from common import constants
from common import exception
from common import quota
from common import states
from common.context import RequestContext
from common.db import models
from common.db.api import services as services_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.api import operations
from services.api.operations import snapshots as snapshot_ops
from services.api.operations import volumes as volume_ops
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
#: ``volume-<uuid>...`` (``snapshot-<uuid>...``): the name of a volume's
#: (snapshot's) storage on every backend.
_STORAGE_NAME = re.compile(
    r"^(volume|snapshot)-"
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
#: What a manageable listing sorts by.
SORT_KEYS = ("reference", "size")
_UNMANAGE_REFUSED = (
    "Volume status must be available or error or error_restoring or "
    "error_extending or error_managing and must not be migrating, attached, "
    "belong to a group, have snapshots, awaiting a transfer, or be "
    "disassociated from snapshots after volume transfer.")


class ManageOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 volumes: volume_ops.VolumeOperations,
                 snapshots: snapshot_ops.SnapshotOperations,
                 volume: volume_rpcapi.VolumeAPI) -> None:
        self.conf = conf
        self.volumes = volumes
        self.snapshots = snapshots
        self.volume = volume

    # -- volumes -----------------------------------------------------------
    def manage_volume(self, ctxt: RequestContext, host: str | None,
                      cluster: str | None, ref: Any,
                      name: str | None = None,
                      description: str | None = None,
                      volume_type: str | None = None,
                      availability_zone: str | None = None,
                      bootable: bool = False,
                      metadata: dict[str, str] | None = None) -> Any:
        """Write a ``managing`` row of the ref's size and cast the
        adoption to its backend.

        :raises InvalidVolume: the ref names an Ashlar volume's storage.
        :raises ManageExistingInvalidReference: it names nothing there.
        :raises ServiceUnavailable: no such backend, or it is down or
            disabled.
        :raises InvalidVolumeType: no such type, or an encrypted one.
        :raises QuotaError: the project's quota is exceeded.
        """
        project = ctxt.require_project()
        ctxt.can("volume_extension:volume_manage", {"project_id": project})
        _refuse_managed(ctxt, ref)
        backend, zone = self._backend(ctxt, host, cluster, manage=True)
        vtype, specs = self._type(ctxt, volume_type)
        self.volume.require(self.volume.MANAGE_VERSION, "manage_existing")
        size = self.volume.manage_existing_get_size(ctxt, backend, ref)
        values = {
            "id": str(uuid.uuid4()), "project_id": project,
            "user_id": ctxt.user_id, "display_name": name,
            "display_description": description, "size": size,
            "status": STATUS.MANAGING,
            "attach_status": constants.AttachStatus.DETACHED,
            "host": cluster or host, "cluster_name":
                cluster.partition("#")[0] if cluster else None,
            "availability_zone": availability_zone or zone,
            "volume_type_id": vtype.id, "bootable": bootable,
            "multiattach": self.volumes.multiattach_of(ctxt, project,
                                                       specs, False),
            "encrypted": False}
        change = quota.Change(vtype.name, volumes=1, gigabytes=size,
                              size=size)
        row = volumes_db.volume_create(
            ctxt, values, metadata, check=self.volumes.quota_check(
                project, vtype.id, change))
        self.volume.manage_existing(ctxt, row.id, backend, ref)
        LOG.info("Volume %(id)s of %(size)s GiB managing %(ref)s on "
                 "%(host)s", {"id": row.id, "size": size, "ref": ref,
                              "host": backend})
        return row

    def _type(self, ctxt: RequestContext, name_or_id: str | None
              ) -> tuple[Any, dict[str, str | None]]:
        """The type a manage names (else the default), not encrypted."""
        try:
            vtype, specs = self.volumes.resolve_type(ctxt, name_or_id)
        except exception.NotFound:
            raise exception.InvalidVolumeType(
                reason="Cannot find requested '%s' volume type" % name_or_id)
        if attach_rules.is_encrypted(specs):
            raise exception.InvalidVolumeType(
                reason="Managing to an encrypted volume type is not "
                       "supported.")
        return vtype, specs

    def unmanage_volume(self, ctxt: RequestContext, volume_id: str) -> None:
        """``unmanaging`` as a delete would be ``deleting``; the backend
        then drops the row and leaves the storage.

        :raises InvalidVolume: attached, with snapshots, in a group,
            migrating, or not in a status a delete starts from.
        """
        row = self.volumes.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_unmanage",
                 {"project_id": row.project_id})
        if row.encrypted:
            raise exception.Invalid(
                reason="Unmanaging encrypted volumes is not supported.")
        if not states.backend_may_hold(row.host):
            raise exception.InvalidVolume(
                reason="Volume %s was never placed on a backend: delete it "
                       "instead." % volume_id)
        self.volume.require(self.volume.MANAGE_VERSION, "unmanage_volume")
        if not volumes_db.volume_cas(ctxt, volume_id, {
                "attachment_count": 0, "snapshot_count": 0,
                "migration_status": states.MIGRATION_SETTLED,
                "group_id": None, "status": states.VOLUME_DELETABLE},
                {"status": STATUS.UNMANAGING}):
            raise exception.InvalidVolume(reason=_UNMANAGE_REFUSED)
        self.volume.unmanage_volume(ctxt, volume_id, row.host)
        LOG.info("Volume %s unmanaging", volume_id)

    def manageable(self, ctxt: RequestContext, host: str | None,
                   cluster: str | None, snapshot: bool, marker: str | None,
                   limit: int | None, offset: int | None,
                   sort: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """A page of what the backend could adopt, sorted (Cinder's
        ``paginate_entries_list``).

        :raises InvalidInput: a marker that is not JSON, or not found.
        """
        ctxt.can("snapshot_extension:list_manageable" if snapshot
                 else "volume_extension:list_manageable", {})
        backend, _zone = self._backend(ctxt, host, cluster, manage=False)
        self.volume.require(self.volume.MANAGE_VERSION, "get_manageable")
        entries = (self.volume.get_manageable_snapshots(ctxt, backend)
                   if snapshot
                   else self.volume.get_manageable_volumes(ctxt, backend))
        return paginate(entries, marker, limit, offset or 0, sort)

    def _backend(self, ctxt: RequestContext, host: str | None,
                 cluster: str | None, manage: bool) -> tuple[str, str]:
        """The backend (``host@backend`` or ``cluster@backend``) and the
        zone of its service.

        :raises ServiceUnavailable: manage: no such backend, or it is
            down or disabled.
        :raises HostNotFound: a listing's unknown backend.
        """
        name = (cluster or host or "").partition("#")[0]
        rows = [row for row in services_db.service_list(
                    ctxt, binary=constants.VOLUME_BINARY)
                if name in (row.host, row.cluster_name)]
        if not rows and not manage:
            raise exception.HostNotFound(host=cluster or host)
        if name not in services_db.running_backends(
                ctxt, self.conf.service_down_time):
            raise exception.ServiceUnavailable(
                reason="%s '%s' not found" % ("Cluster" if cluster
                                              else "Host", cluster or host)
                if not rows else "%s is down or disabled" % name)
        return name, rows[0].availability_zone

    # -- snapshots ---------------------------------------------------------
    def manage_snapshot(self, ctxt: RequestContext, volume_id: str, ref: Any,
                        name: str | None = None,
                        description: str | None = None,
                        metadata: dict[str, str] | None = None
                        ) -> models.Snapshot:
        """Write a ``managing`` snapshot of the volume and cast the
        adoption to the volume's backend.

        :raises ManageExistingInvalidReference: the ref names nothing.
        :raises InvalidVolume: the volume is not ``available`` or
            ``in-use``.
        """
        volume = self.volumes.get(ctxt, volume_id)
        ctxt.can("snapshot_extension:snapshot_manage",
                 {"project_id": volume.project_id})
        _refuse_managed(ctxt, ref)
        backend, _zone = self._backend(ctxt, volume.host, None, manage=True)
        self.volume.require(self.volume.MANAGE_VERSION,
                            "manage_existing_snapshot")
        self.volume.manage_existing_get_size(ctxt, backend, ref,
                                             snapshot=True)
        row = self.snapshots.insert(
            ctxt, volume, SNAP.MANAGING, states.VOLUME_SNAPSHOTTABLE_FORCED,
            name, description, metadata)
        self.volume.manage_existing_snapshot(ctxt, row.id, backend, ref)
        LOG.info("Snapshot %(id)s of volume %(vol)s managing %(ref)s",
                 {"id": row.id, "vol": volume_id, "ref": ref})
        return row

    def unmanage_snapshot(self, ctxt: RequestContext,
                          snapshot_id: str) -> None:
        """``unmanaging``, then the backend drops the row only.

        :raises InvalidSnapshot: not ``available`` or ``error``, or a
            group snapshot's member.
        """
        row = self.snapshots.get(ctxt, snapshot_id)
        ctxt.can("snapshot_extension:snapshot_unmanage",
                 {"project_id": row.project_id})
        self.volume.require(self.volume.MANAGE_VERSION, "unmanage_snapshot")
        if row.group_snapshot_id or not snapshots_db.snapshot_cas(
                ctxt, snapshot_id, {"status": states.SNAPSHOT_DELETABLE},
                {"status": SNAP.UNMANAGING}):
            raise exception.InvalidSnapshot(
                reason="Snapshot status must be available or error and "
                       "must not be part of a group.")
        self.volume.unmanage_snapshot(
            ctxt, snapshot_id, operations.placed(row.volume.host,
                                                 row.volume_id))
        LOG.info("Snapshot %s unmanaging", snapshot_id)


def _refuse_managed(ctxt: RequestContext, ref: Any) -> None:
    """Cinder's check, for snapshots too: a ``source-name`` that is the
    storage of an existing volume (or snapshot).

    :raises InvalidVolume: it is.
    """
    name = ref.get("source-name") if isinstance(ref, dict) else None
    match = _STORAGE_NAME.match(name) if isinstance(name, str) else None
    if match is None:
        return
    try:
        if match[1] == "volume":
            volumes_db.volume_get(ctxt, match[2])
        else:
            snapshots_db.snapshot_get(ctxt, match[2])
    except (exception.VolumeNotFound, exception.SnapshotNotFound):
        return
    raise exception.InvalidVolume(
        reason="Unable to manage existing %s. The %s is already managed"
        % (match[1], match[1]))


def paginate(entries: list[dict[str, Any]], marker: str | None,
             limit: int | None, offset: int,
             sort: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Sort (a dict value by its least value, as Cinder), then the page
    after the entry whose ``reference`` is the JSON ``marker``."""
    def key_of(value: Any) -> Any:
        return sorted(value.values())[0] if isinstance(value, dict) else value

    def compare(left: dict[str, Any], right: dict[str, Any]) -> int:
        for key, direction in sort:
            a, b = key_of(left[key]), key_of(right[key])
            if a != b:
                return (-1 if a < b else 1) * (1 if direction == "asc"
                                               else -1)
        return 0
    ordered = sorted(entries, key=functools.cmp_to_key(compare))
    start = 0
    if marker:
        try:
            wanted = json.loads(marker)
        except ValueError:
            raise exception.InvalidInput(
                reason="marker %s can not be analysed, please use json "
                       "like format" % marker)
        start = next((i + 1 for i, entry in enumerate(ordered)
                      if entry["reference"] == wanted), -1)
        if start < 0:
            raise exception.InvalidInput(reason="marker not found: %s"
                                         % marker)
    first = start + offset
    return ordered[first:first + limit if limit is not None else None]
