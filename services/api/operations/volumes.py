"""Volume operations: create, show, list, update, delete, and the actions
(extend, retype, bootable, read-only, reset, force-delete, migrate).

Every status change is a compare-and-swap on the read value; the rules that
keep shared volumes safe come from ``common.states``.
"""

import uuid
from typing import Any, Callable

from oslo_config import cfg
from oslo_log import log as logging

from common import capabilities
from common import constants
from common import exception
from common import extra_specs
from common import migration
from common import quota
from common import rpc
from common import states
from common import zones
from common.db.api import groups as groups_db
from common.db.api import quotas as quotas_db
from common.db.api import snapshots as snapshots_db
from common.db.api import sources as sources_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.api import operations
from services.api.operations import sources
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
SNAP = constants.SnapshotStatus
MIGRATION = constants.MigrationStatus

DELETABLE = (STATUS.AVAILABLE, STATUS.ERROR, "error_restoring",
             STATUS.ERROR_EXTENDING, "error_managing")
_DELETE_REFUSED = ("Volume %sstatus must be available or error or "
                   "error_restoring or error_extending or error_managing and "
                   "must not be migrating, attached, belong to a group, have "
                   "snapshots, awaiting a transfer, or be disassociated from "
                   "snapshots after volume transfer.")
_MULTIATTACH_REMOVED = (
    "multiattach parameter has been removed. The default behavior is to use "
    "multiattach enabled volume types. Contact your administrator to create "
    "a multiattach enabled volume type and use it to create multiattach "
    "volumes.")
_MIGRATE_REFUSED = (
    "Volume %s must be available, without attachments, snapshots or a "
    "group and not migrating, to migrate (an attached volume's data is "
    "moved by its compute host, which Ashlar does not drive).")
_RETYPE_REFUSED = (
    "Retype needs volume to be in available or in-use state, not be part of "
    "an active migration or a consistency group, requested type has to be "
    "different that the one from the volume, and for in-use volumes "
    "front-end qos specs cannot change.")

#: Checks a type and a size against what the backends of some availability
#: zones can do; raises when none can.
EarlyCheck = Callable[[Any, Any, dict, int, tuple[str, ...] | None], None]


class Into:
    """The group a new volume joins, and the group statuses that may take
    it (``available``; ``creating`` for a group made from a source)."""

    def __init__(self, group: Any, statuses: tuple[str, ...]) -> None:
        self.group_id = group.id
        self.type_ids = groups_db.type_ids(group)
        self.zone: str | None = group.availability_zone
        self.statuses = statuses

    def check_type(self, type_id: str) -> None:
        if type_id not in self.type_ids:
            raise exception.InvalidInput(
                reason="Invalid volume_type provided: %s. The group %s does "
                       "not support this volume type." % (type_id,
                                                          self.group_id))

    def holding(self, check: volumes_db.Check) -> volumes_db.Check:
        """``check``, after locking the group in a status that takes the
        volume, in the transaction that inserts it."""
        def held(session: Any) -> None:
            groups_db.hold(session, self.group_id, self.statuses)
            check(session)
        return held


def listed_project(ctxt: Any, all_tenants: bool) -> str | None:
    """The project a list shows: every project (None) for an administrator
    asking ``all_tenants``, else the caller's own.

    :raises ProjectScopeRequired: a caller without a project asked for its
        own project's rows.
    """
    if all_tenants and ctxt.is_admin:
        return None
    return ctxt.require_project()


class VolumeOperations:
    def __init__(self, conf: cfg.ConfigOpts,
                 scheduler: scheduler_rpcapi.SchedulerAPI,
                 volume: volume_rpcapi.VolumeAPI,
                 early_check: EarlyCheck | None = None,
                 cache: Any = None) -> None:
        self.conf = conf
        self.scheduler = scheduler
        self.volume = volume
        self.early_check = early_check
        #: The capability cache (``services.api.capability_cache``), to tell
        #: whether a retype would have to move the data.
        self.cache = cache or getattr(early_check, "__self__", None)

    def get(self, ctxt: Any, volume_id: str) -> Any:
        """Return a volume ``volume:get`` lets the caller see, else
        VolumeNotFound (another project's volume does not exist for it)."""
        return operations.visible(
            ctxt, volumes_db.volume_get(ctxt, volume_id), "volume:get",
            exception.VolumeNotFound(volume_id=volume_id))

    def list(self, ctxt: Any, all_tenants: bool = False,
             tenant: str | None = None, **kwargs: Any) -> list:
        """The volumes the caller may list: its project's, or with
        ``all_tenants`` (admins) every project's, or ``tenant``'s only."""
        project = listed_project(ctxt, all_tenants) or tenant
        ctxt.can("volume:get_all", {"project_id": project})
        return volumes_db.volume_list(ctxt, project_id=project, **kwargs)

    def resolve_type(self, ctxt: Any, name_or_id: str | None
                     ) -> tuple[Any, dict]:
        """The type a create names (else the default) and its specs.

        :raises VolumeTypeNotFoundByName: no such type, or a private one
            the caller's project has no access to.
        """
        return types_db.type_resolve(
            ctxt, name_or_id or self.conf.default_volume_type,
            project_id=None if ctxt.is_admin else ctxt.project_id)

    def group(self, ctxt: Any, group_id: str) -> Any:
        """Return a group ``group:get`` lets the caller see, else
        GroupNotFound."""
        return operations.visible(
            ctxt, groups_db.group_get(ctxt, group_id), "group:get",
            exception.GroupNotFound(group_id=group_id))

    def snapshot(self, ctxt: Any, snapshot_id: str) -> Any:
        """Return a snapshot ``volume:get_snapshot`` lets the caller see,
        else SnapshotNotFound."""
        return operations.visible(
            ctxt, snapshots_db.snapshot_get(ctxt, snapshot_id),
            "volume:get_snapshot",
            exception.SnapshotNotFound(snapshot_id=snapshot_id))

    def create(self, ctxt: Any, size: int | None, name: str | None = None,
               description: str | None = None, volume_type: str | None = None,
               availability_zone: str | None = None,
               metadata: dict | None = None, multiattach: bool = False,
               snapshot_id: str | None = None,
               source_volid: str | None = None,
               group: Into | str | None = None) -> Any:
        """Write a ``creating`` row and cast it to the scheduler, or, made
        from a snapshot or a volume, to the source's volume node.

        :param group: the group the volume joins: an ``Into``, or the id
            of an ``available`` group the caller may see.  The volume goes
            to the group's zone.
        :raises GroupNotFound:
        :raises InvalidInput: the removed ``multiattach`` flag was set, or
            no size and no source, or two sources, or a type the group
            does not take.
        :raises InvalidGroup: the group is not in a status to take it.
        :raises InvalidAvailabilityZone: no volume service is in the zone,
            or the type does not allow it.
        :raises InvalidTypeAvailabilityZones: no volume service is in any
            zone the type allows.
        :raises UnsatisfiableVolumeType: no fresh pool could place the type.
        :raises UnsatisfiableSource: the source's pool cannot take it.
        """
        project = ctxt.require_project()
        ctxt.can("volume:create", {"project_id": project})
        if multiattach:
            raise exception.InvalidInput(reason=_MULTIATTACH_REMOVED)
        source = self._source(ctxt, snapshot_id, source_volid)
        if isinstance(group, str):
            group = Into(self.group(ctxt, group), ("available",))
        size = sources.checked_size(size, source)
        # NOTE(ashlar): the type, and the services table when the early
        # check has to read it, are single statements on the autocommit
        # pool: no transaction's round trips on the path of every create.
        vtype, specs = self.resolve_type(
            ctxt, volume_type or (source and source.volume_type_id))
        allowed = zones.for_volume(ctxt, self.conf, availability_zone, specs,
                                   source=source,
                                   group_zone=group.zone if group else None)
        zone = allowed[0] if len(allowed) == 1 else None
        is_multiattach = extra_specs.is_multiattach_spec(specs)
        encrypted = states.is_encrypted(specs)
        if is_multiattach:
            ctxt.can("volume:multiattach", {"project_id": project})
            if encrypted:
                raise exception.InvalidVolume(
                    reason="Multiattach cannot be used with encrypted "
                           "volumes.")
        self.check_place(ctxt, source, vtype, specs, size, allowed)
        if group is not None:
            group.check_type(vtype.id)
        change = quota.Change(vtype.name, volumes=1, gigabytes=size,
                              size=size)
        check = sources.holding(
            source, self.quota_check(project, vtype.id, change))
        row = volumes_db.volume_create(ctxt, {
            "id": str(uuid.uuid4()), "project_id": project,
            "user_id": ctxt.user_id, "display_name": name,
            "display_description": description, "size": size,
            "status": STATUS.CREATING,
            "attach_status": constants.AttachStatus.DETACHED,
            "availability_zone": zone,
            "volume_type_id": vtype.id, "multiattach": is_multiattach,
            "encrypted": encrypted, **sources.columns(source),
            "group_id": group and group.group_id,
        }, metadata, check=group.holding(check) if group else check)
        if source is None:
            self.scheduler.create_volume(ctxt, row.id)
        else:
            self._cast_from_source(ctxt, row)
        LOG.info("Volume %(id)s of %(size)s GiB accepted%(src)s",
                 {"id": row.id, "size": size,
                  "src": " from %s" % source.describe() if source else ""})
        return row

    def _cast_from_source(self, ctxt: Any, row: Any) -> None:
        """Cast the create to the source's node; a node too old to copy
        sources gets nothing, and the row goes."""
        try:
            self.volume.create_volume_from_source(ctxt, row.id, row.host)
        except rpc.ServiceTooOld:
            volumes_db.volume_destroy(ctxt, row.id)
            raise

    def _source(self, ctxt: Any, snapshot_id: str | None,
                source_volid: str | None) -> "sources.Source | None":
        """The snapshot or volume a create copies, checked as Cinder does."""
        if snapshot_id and source_volid:
            raise exception.InvalidInput(
                reason="Only one of snapshot_id and source_volid may be "
                "given.")
        if snapshot_id:
            return sources.of_snapshot(self.snapshot(ctxt, snapshot_id))
        if source_volid:
            return sources.of_volume(self.get(ctxt, source_volid))
        return None

    def check_place(self, ctxt: Any, source: "sources.Source | None",
                    vtype: Any, specs: dict, size: int,
                    zones: tuple[str, ...]) -> None:
        """The early rejection: a type no fresh pool of ``zones`` offers,
        or a source whose pool cannot take the new volume."""
        if source is not None:
            if self.cache is not None:
                self.cache.check_pool(source.pool, source.describe(), vtype,
                                      specs, size)
        elif self.early_check is not None:
            self.early_check(ctxt, vtype, specs, size, zones)

    def update(self, ctxt: Any, volume_id: str, values: dict,
               metadata: dict | None) -> Any:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        return volumes_db.volume_update(ctxt, volume_id, values, metadata)

    # -- metadata (/volumes/{id}/metadata) --------------------------------
    def metadata(self, ctxt: Any, volume_id: str) -> dict:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:get_volume_metadata", {"project_id": row.project_id})
        return volumes_db.metadata_of(row)

    def set_metadata(self, ctxt: Any, volume_id: str, metadata: dict,
                     replace: bool, item: bool = False) -> dict:
        """Merge ``metadata`` into the volume's (POST), or replace it all
        (PUT); ``item``: one key set through ``/metadata/{key}``.

        :raises InvalidVolume: the volume is in maintenance.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update_volume_metadata" if replace or item
                 else "volume:create_volume_metadata",
                 {"project_id": row.project_id})
        _refuse_metadata_change(row, "Updating")
        row = volumes_db.volume_update(ctxt, volume_id, {}, metadata,
                                       delete_metadata=replace)
        return volumes_db.metadata_of(row)

    def delete_metadata(self, ctxt: Any, volume_id: str, key: str) -> None:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:delete_volume_metadata",
                 {"project_id": row.project_id})
        _refuse_metadata_change(row, "Deleting")
        volumes_db.volume_metadata_delete(ctxt, volume_id, key)

    def delete(self, ctxt: Any, volume_id: str, force: bool = False,
               rule: str | None = None, cascade: bool = False) -> None:
        """``deleting``, then the volume service removes it.

        The compare-and-swap expects no attachment row at all, so a
        reservation racing the delete either comes first (and the delete is
        refused) or finds the volume ``deleting``.  With ``cascade`` its
        snapshots become ``deleting`` in the same transaction (each
        ``available`` or ``error``, or with ``force`` anything but
        ``restoring``) and the volume service deletes them first.

        :raises InvalidVolume: wrong status, attachments, migrating, or a
            snapshot that cannot go.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can(rule or ("volume:force_delete" if force
                          else "volume:delete"),
                 {"project_id": row.project_id})
        if row.attachment_count:
            raise exception.InvalidVolume(
                reason="Volume %s has %d attachment(s); a volume with "
                       "attachments cannot be deleted. Delete the "
                       "attachments first." % (volume_id,
                                               row.attachment_count))
        owned = snapshots_db.snapshots_of_volume(
            ctxt, volume_id) if cascade and row.snapshot_count else []
        # NOTE(ashlar): snapshots left with the giver of a volume transfer
        # (no_snapshots) are not the volume's project's to delete.
        snaps = [s.id for s in owned] if all(
            s.project_id == row.project_id for s in owned) else []
        if row.snapshot_count and not snaps:
            raise exception.InvalidVolume(
                reason=_DELETE_REFUSED % ("" if not force else " "))
        if snaps:
            self.volume.require(self.volume.CASCADE_VERSION,
                                "delete_volume (cascade)")
        expected: dict = {"attachment_count": 0,
                          "snapshot_count": len(snaps),
                          "migration_status": MIGRATION.SETTLED,
                          "group_id": None}
        if not force:
            expected["status"] = DELETABLE

        def check(session: Any) -> None:
            sources_db.refuse_if_copied(session, "volume", volume_id)
            for snapshot_id in snaps:
                sources_db.refuse_if_copied(session, "snapshot", snapshot_id)
        if not volumes_db.volume_cas(
                ctxt, volume_id, expected, {"status": STATUS.DELETING},
                check=check, then=lambda session: snapshots_db.all_deleting(
                    session, snaps, force)):
            raise exception.InvalidVolume(
                reason=_DELETE_REFUSED % ("" if not force else " "))
        if row.host is None or (row.status == STATUS.ERROR
                                and row.provider_location is None):
            # Nothing was made on a backend (drivers give a location to
            # what they make): no volume service is needed.
            volumes_db.volume_destroy(ctxt, volume_id)
        else:
            self.volume.delete_volume(ctxt, volume_id, row.host,
                                      cascade=bool(snaps))
        LOG.info("Volume %s deleting", volume_id)

    def quota_check(self, project_id: str, type_id: str,
                    change: quota.Change) -> volumes_db.Check:
        """The quota check of ``change``, for the writer transaction that
        makes it."""
        def check(session: Any) -> None:
            quotas_db.enforce(session, self.conf, project_id, type_id, change)
        return check

    # -- actions (POST /volumes/{id}/action) ------------------------------
    def _cas(self, row: Any, expected: dict, values: dict, what: str,
             ctxt: Any, check: volumes_db.Check | None = None) -> None:
        """Compare-and-swap with the read value; a lost race is a 400.

        :param check: runs first in the same transaction (a quota check).
        """
        if not volumes_db.volume_cas(ctxt, row.id, expected, values,
                                     check=check):
            now = volumes_db.volume_get(ctxt, row.id)
            raise exception.InvalidVolume(
                reason="Volume %s changed while %s was requested; its status "
                       "is now %s." % (row.id, what, now.status))

    def extend(self, ctxt: Any, volume_id: str, new_size: int,
               attached_ok: bool = False) -> None:
        """``os-extend``: ``available`` (or ``in-use`` from 3.42) ->
        ``extending``; the volume service grows it.

        :raises InvalidInput: the size does not grow.
        :raises InvalidVolume: the status does not allow it.
        """
        row = self.get(ctxt, volume_id)
        target = {"project_id": row.project_id}
        ctxt.can("volume:extend", target)
        if new_size <= row.size:
            raise exception.InvalidInput(
                reason="New size for extend must be greater than current "
                       "size. (current: %s, extended: %s)."
                       % (row.size, new_size))
        allowed = [STATUS.AVAILABLE]
        if attached_ok:
            allowed.append(STATUS.IN_USE)
            if row.status == STATUS.IN_USE:
                ctxt.can("volume:extend_attached_volume", target)
        if row.status not in allowed:
            raise exception.InvalidVolume(
                reason="Volume %s status must be %s to extend, but the "
                       "current status is %s." % (
                           volume_id, " or ".join(allowed), row.status))
        change = quota.Change(row.volume_type.name,
                              gigabytes=new_size - row.size, size=new_size)
        self._cas(row, {"status": row.status, "size": row.size},
                  {"status": STATUS.EXTENDING, "previous_status": row.status,
                   "pending_size": new_size}, "an extend", ctxt,
                  check=self.quota_check(row.project_id, row.volume_type_id,
                                         change))
        self.volume.extend_volume(ctxt, volume_id, row.host, new_size)
        LOG.info("Volume %(id)s extending to %(size)s GiB",
                 {"id": volume_id, "size": new_size})

    def revert(self, ctxt: Any, volume_id: str, snapshot_id: str) -> None:
        """``revert`` (3.40): an ``available`` volume to its latest
        snapshot; ``reverting`` and ``restoring`` until the node is done.

        :raises InvalidVolume: not available, or the snapshot is not its.
        :raises InvalidSnapshot: not its latest snapshot, or not available.
        :raises Invalid: the volume was extended since the snapshot.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:revert_to_snapshot", {"project_id": row.project_id})
        snap = self.snapshot(ctxt, snapshot_id)
        if snap.volume_id != volume_id:
            raise exception.InvalidVolume(
                reason="Snapshot %s is not a snapshot of volume %s."
                % (snapshot_id, volume_id))
        snaps = snapshots_db.snapshots_of_volume(ctxt, volume_id)
        latest = snaps[-1]
        if latest.id != snapshot_id or snap.status != SNAP.AVAILABLE:
            raise exception.InvalidSnapshot(
                reason="Snapshot %s is not the latest one of volume %s, or "
                "not available." % (snapshot_id, volume_id))
        if row.size != snap.volume_size:
            raise exception.Invalid(
                "Can't revert volume %s to its latest snapshot %s. The "
                "volume size must be equal to the snapshot size."
                % (volume_id, snapshot_id))
        if not snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                         {"status": SNAP.AVAILABLE},
                                         {"status": SNAP.RESTORING}):
            raise exception.InvalidSnapshot(
                reason="Snapshot %s changed status." % snapshot_id)
        try:
            # NOTE(ashlar): the count makes "latest" hold: a snapshot
            # made since it was read fails the swap; so does an extend.
            self._cas(row, {"status": STATUS.AVAILABLE,
                            "attachment_count": 0,
                            "migration_status": MIGRATION.SETTLED,
                            "snapshot_count": len(snaps),
                            "size": snap.volume_size},
                      {"status": STATUS.REVERTING}, "a revert", ctxt)
        except exception.InvalidVolume:
            snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                      {"status": SNAP.RESTORING},
                                      {"status": SNAP.AVAILABLE})
            raise
        try:
            self.volume.revert_to_snapshot(ctxt, volume_id, row.host,
                                           snapshot_id)
        except rpc.ServiceTooOld:
            volumes_db.volume_cas(ctxt, volume_id,
                                  {"status": STATUS.REVERTING},
                                  {"status": STATUS.AVAILABLE})
            snapshots_db.snapshot_cas(ctxt, snapshot_id,
                                      {"status": SNAP.RESTORING},
                                      {"status": SNAP.AVAILABLE})
            raise
        LOG.info("Volume %(id)s reverting to snapshot %(snap)s",
                 {"id": volume_id, "snap": snapshot_id})

    def _trusted_pools(self) -> dict[str, dict] | None:
        """The capability view's pools that count now; None without a
        view, or one not trusted (then it tells nothing)."""
        return None if self.cache is None else self.cache.trusted_pools()

    def _needs_migration(self, row: Any, specs: dict) -> bool | None:
        """Whether the volume's pool fails the new type's capability specs
        or zones; None when the capability view cannot tell."""
        if not row.host:
            return None
        pool = (self._trusted_pools() or {}).get(row.host)
        if pool is None:
            return None
        return bool(capabilities.misses(pool, specs))

    def retype(self, ctxt: Any, volume_id: str, new_type: str,
               migration_policy: str | None = None) -> None:
        """``os-retype``: the multiattach rules, then ``retyping`` and a
        cast to the volume service, which takes the new type if its pool
        satisfies it, else with ``on-demand`` moves the volume to a pool
        that does (``common.migration``).

        :raises InvalidInput: a multiattach change on a volume that is not
            available; encryption with multiattach; a move is needed but
            not allowed (``never``) or no fresh pool offers the type.
        :raises InvalidVolume: status, same type, or a move of a volume
            with attachments, snapshots or a group.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:retype", {"project_id": row.project_id})
        vtype, specs = types_db.type_resolve(
            ctxt, new_type,
            project_id=None if ctxt.is_admin else row.project_id)
        policy = migration_policy or "never"
        if (vtype.id == row.volume_type_id
                or row.migration_status not in MIGRATION.SETTLED
                or row.status not in (STATUS.AVAILABLE, STATUS.IN_USE)):
            raise exception.InvalidVolume(reason=_RETYPE_REFUSED)
        multiattach = extra_specs.is_multiattach_spec(specs)
        if multiattach and not row.multiattach:
            ctxt.can("volume:multiattach", {"project_id": row.project_id})
        needs = self._needs_migration(row, specs)
        states.check_retype(volume_id, row.status, row.multiattach,
                            multiattach, states.is_encrypted(specs),
                            row.attachment_count,
                            may_migrate=policy == "on-demand"
                            and needs is not False)
        if needs:
            self._check_move(ctxt, row, vtype, specs, policy)
        expected = {"status": row.status, "multiattach": row.multiattach,
                    "volume_type_id": row.volume_type_id,
                    "migration_status": MIGRATION.SETTLED}
        if multiattach != row.multiattach:
            expected["attachment_count"] = 0
        # NOTE(ashlar): its snapshots move to the new type's counters too;
        # the count in the swap keeps them the ones judged here.
        snaps = snapshots_db.snapshots_of_volume(ctxt, volume_id)
        expected["snapshot_count"] = len(snaps)
        change = quota.Change(
            vtype.name, volumes=1, snapshots=len(snaps),
            gigabytes=row.size + sum(snap.volume_size for snap in snaps),
            global_too=False)
        values = {"status": STATUS.RETYPING, "previous_status": row.status,
                  "pending_type_id": vtype.id}
        if policy == "on-demand" and needs is not False:
            # The node moves it if its pool does not satisfy the type.
            values["migration_status"] = MIGRATION.STARTING
        self._cas(row, expected, values,
                  "a retype", ctxt,
                  check=self.quota_check(row.project_id, vtype.id, change))
        self.volume.retype_volume(ctxt, volume_id, row.host, vtype.id, policy)
        LOG.info("Volume %(id)s retyping to %(type)s",
                 {"id": volume_id, "type": vtype.name})

    def _check_move(self, ctxt: Any, row: Any, vtype: Any, specs: dict,
                    policy: str) -> None:
        """Refuse at once a retype that would have to move the volume but
        cannot: ``never``, what a copy cannot carry, no pool to go to."""
        if policy != "on-demand":
            raise exception.InvalidInput(
                reason="Volume %s cannot take type %s where it is: its pool "
                       "does not satisfy the type, and migration_policy is "
                       "%s." % (row.id, vtype.name, policy))
        if not migration.copy_carries(row):
            raise exception.InvalidVolume(
                reason="Volume %s must move to take type %s, and a volume "
                       "moves only without attachments, snapshots or a "
                       "group (an attached volume's data is moved by its "
                       "compute host, which Ashlar does not drive)."
                       % (row.id, vtype.name))
        if self.early_check is not None:
            self.early_check(ctxt, vtype, specs, row.size,
                             zones.for_placement(
                                 specs, row.availability_zone, retype=True))

    def set_bootable(self, ctxt: Any, volume_id: str, bootable: bool) -> None:
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update", {"project_id": row.project_id})
        volumes_db.volume_update(ctxt, volume_id, {"bootable": bootable})

    def update_readonly_flag(self, ctxt: Any, volume_id: str,
                             readonly: bool) -> None:
        """Read-only applies to attachments made afterwards (``ro`` mode and
        ``access_mode``); only an ``available`` volume may change it."""
        row = self.get(ctxt, volume_id)
        ctxt.can("volume:update_readonly_flag",
                 {"project_id": row.project_id})
        if row.status != STATUS.AVAILABLE:
            raise exception.InvalidVolume(
                reason="Volume status must be available to update readonly "
                       "flag.")
        self._cas(row, {"status": STATUS.AVAILABLE},
                  {"readonly": readonly}, "a read-only change", ctxt)

    def reset_status(self, ctxt: Any, volume_id: str, attachments: Any,
                     status: str | None = None,
                     attach_status: str | None = None,
                     migration_status: str | None = None) -> None:
        """Admin ``os-reset_status``.

        ``attach_status: detached`` force-deletes every attachment, each
        terminating its own backend connection (Cinder only drops the rows).

        :param attachments: the AttachmentOperations.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_admin_actions:reset_status",
                 {"project_id": row.project_id})
        if status == STATUS.DELETING:
            raise exception.InvalidVolume(reason="Cannot reset-state to "
                                                 "deleting")
        if status == STATUS.IN_USE and not row.attachment_count:
            raise exception.InvalidVolume(
                reason="Cannot reset-state to in-use because volume does not "
                       "have any attachments.")
        if attach_status == constants.AttachStatus.DETACHED:
            attachments.delete_all(ctxt, volume_id)
            row = volumes_db.volume_get(ctxt, volume_id)
        values: dict = {}
        if status:
            # An extend or retype in flight is over, whatever it did.
            values.update(status=status, pending_size=None,
                          pending_type_id=None)
        if attach_status:
            values["attach_status"] = attach_status
        if migration_status:
            values["migration_status"] = (
                None if migration_status.lower() == "none"
                else migration_status)
        if values:
            self._cas(row, {"status": row.status,
                            "attach_status": row.attach_status}, values,
                      "a reset", ctxt)
        LOG.info("Volume %(id)s reset to %(values)s",
                 {"id": volume_id, "values": values})

    def migrate(self, ctxt: Any, volume_id: str, host: str | None,
                cluster: str | None = None) -> None:
        """Admin ``os-migrate_volume``: move an available volume, with its
        type, to pool (or backend) ``host``; ``maintenance`` until it is
        there (``common.migration``).

        :raises InvalidInput: no host, or a cluster (Ashlar has none).
        :raises InvalidHost: the volume's own backend, or one the
            capability view knows nothing of.
        :raises InvalidVolume: several attachments (a copy cannot follow
            writes from several hosts); status, attachments, snapshots, a
            group, or a move in progress.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_admin_actions:migrate_volume",
                 {"project_id": row.project_id})
        states.check_migration(volume_id, row.attachment_count)
        if cluster or not host:
            raise exception.InvalidInput(
                reason="Ashlar has no clusters: name the destination "
                       "host@backend#pool." if cluster
                else "Must specify host or cluster.")
        self._check_destination(row, host)
        if (row.status != STATUS.AVAILABLE or not migration.copy_carries(row)
                or row.migration_status not in MIGRATION.SETTLED):
            raise exception.InvalidVolume(reason=_MIGRATE_REFUSED % row.id)
        self.volume.require(self.volume.MIGRATION_VERSION, "migrate_volume")
        self._cas(row, {"status": STATUS.AVAILABLE, "host": row.host,
                        "attachment_count": 0, "snapshot_count": 0,
                        "group_id": None,
                        "migration_status": row.migration_status},
                  {"status": STATUS.MAINTENANCE,
                   "previous_status": STATUS.AVAILABLE,
                   "migration_status": MIGRATION.STARTING},
                  "a migration", ctxt)
        self.volume.migrate_volume(ctxt, volume_id, row.host, host)
        LOG.info("Volume %(id)s migrating to %(host)s",
                 {"id": volume_id, "host": host})

    def _check_destination(self, row: Any, host: str) -> None:
        """Cinder's refusals of a destination: the volume's own backend,
        one no fresh report names (when the view can tell)."""
        backend = volume_rpcapi.backend_of(host)
        if backend == volume_rpcapi.backend_of(row.host or ""):
            raise exception.InvalidHost(
                reason="Destination host must be different than the "
                       "current host.")
        pools = self._trusted_pools()
        if pools is None:
            return
        if host not in pools and backend not in {
                volume_rpcapi.backend_of(name) for name in pools}:
            raise exception.InvalidHost(
                reason="No available service named %s" % host)


def _refuse_metadata_change(row: Any, doing: str) -> None:
    """Cinder's refusal of a metadata change while the volume is in
    maintenance (Ashlar never uploads to an image)."""
    if row.status == STATUS.MAINTENANCE:
        raise exception.InvalidVolume(
            reason="%s volume metadata is not allowed for volumes in %s "
                   "status." % (doing, row.status))
