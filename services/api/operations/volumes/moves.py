"""Retype and migrate: the actions that may move a volume's data to another
pool (``common.migration``), judged where the capability view can tell
(the cache's trusted pools) and refused at once where it says no."""

from typing import Any

from oslo_log import log as logging

from common import attach_rules
from common import capabilities
from common import constants
from common import exception
from common import extra_specs
from common import migration
from common import quota
from common import states
from common import zones
from common.context import RequestContext
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from services.api.operations.volumes import base
from services.volume import rpcapi as volume_rpcapi

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus
MIGRATION = constants.MigrationStatus

_MIGRATE_REFUSED = (
    "Volume %s must be available, without attachments, snapshots or a "
    "group and not migrating, to migrate (an attached volume's data is "
    "moved by its compute host, which Ashlar does not drive).")
_RETYPE_REFUSED = (
    "Retype needs volume to be in available or in-use state, not be part of "
    "an active migration or a consistency group, requested type has to be "
    "different that the one from the volume, and for in-use volumes "
    "front-end qos specs cannot change.")


class Moves(base.VolumeBase):
    """``os-retype`` and ``os-migrate_volume``."""

    def retype(self, ctxt: RequestContext, volume_id: str, new_type: str,
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
                or row.migration_status not in states.MIGRATION_SETTLED
                or row.status not in states.VOLUME_RETYPABLE):
            raise exception.InvalidVolume(reason=_RETYPE_REFUSED)
        multiattach = extra_specs.is_multiattach_spec(specs)
        if multiattach and not row.multiattach:
            ctxt.can("volume:multiattach", {"project_id": row.project_id})
        needs = self._needs_migration(row, specs)
        may_move = policy == "on-demand" and needs is not False
        attach_rules.check_retype(volume_id, row.status, row.multiattach,
                            multiattach, attach_rules.is_encrypted(specs),
                            row.attachment_count, may_migrate=may_move)
        if needs:
            self._check_move(ctxt, row, vtype, specs, policy)
        self._start_retype(ctxt, row, vtype, multiattach, may_move)
        self.volume.retype_volume(ctxt, volume_id, row.host, vtype.id, policy)
        LOG.info("Volume %(id)s retyping to %(type)s",
                 {"id": volume_id, "type": vtype.name})

    def _start_retype(self, ctxt: RequestContext, row: Any, vtype: Any,
                      multiattach: bool, may_move: bool) -> None:
        """``retyping``, in one transaction with the new type's quota
        check of the volume and its snapshots.

        :param may_move: the node moves it if its pool does not satisfy
            the type.
        """
        expected = {"status": row.status, "multiattach": row.multiattach,
                    "volume_type_id": row.volume_type_id,
                    "migration_status": states.MIGRATION_SETTLED}
        if multiattach != row.multiattach:
            expected["attachment_count"] = 0
        # NOTE(ashlar): its snapshots move to the new type's counters too;
        # the count in the swap keeps them the ones judged here.
        snaps = snapshots_db.snapshots_of_volume(ctxt, row.id)
        expected["snapshot_count"] = len(snaps)
        change = quota.Change(
            vtype.name, volumes=1, snapshots=len(snaps),
            gigabytes=row.size + sum(snap.volume_size for snap in snaps),
            global_too=False)
        values = {"status": STATUS.RETYPING, "previous_status": row.status,
                  "pending_type_id": vtype.id}
        if may_move:
            values["migration_status"] = MIGRATION.STARTING
        self._cas(row, expected, values,
                  "a retype", ctxt,
                  check=self.quota_check(row.project_id, vtype.id, change))

    def _trusted_pools(self) -> dict[str, dict[str, Any]] | None:
        """The capability view's pools that count now; None without a
        view, or one not trusted (then it tells nothing)."""
        return None if self.cache is None else self.cache.trusted_pools()

    def _needs_migration(self, row: Any,
                         specs: dict[str, str | None]) -> bool | None:
        """Whether the volume's pool fails the new type's capability specs
        or zones; None when the capability view cannot tell."""
        if not row.host:
            return None
        pool = (self._trusted_pools() or {}).get(row.host)
        if pool is None:
            return None
        return bool(capabilities.misses(pool, specs))

    def _check_move(self, ctxt: RequestContext, row: Any, vtype: Any,
                    specs: dict[str, str | None], policy: str) -> None:
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

    def migrate(self, ctxt: RequestContext, volume_id: str, host: str | None,
                cluster: str | None = None) -> None:
        """Admin ``os-migrate_volume``: move an available volume, with its
        type, to pool (or backend) ``host``; ``maintenance`` until it is
        there (``common.migration``).

        :raises InvalidInput: no host, or a cluster (not served).
        :raises InvalidHost: the volume's own backend, or one the
            capability view knows nothing of.
        :raises InvalidVolume: several attachments (a copy cannot follow
            writes from several hosts); status, attachments, snapshots, a
            group, or a move in progress.
        """
        row = self.get(ctxt, volume_id)
        ctxt.can("volume_extension:volume_admin_actions:migrate_volume",
                 {"project_id": row.project_id})
        attach_rules.check_migration(volume_id, row.attachment_count)
        if cluster or not host:
            raise exception.InvalidInput(
                reason="Migrating to a cluster is not served: name the "
                       "destination host@backend#pool." if cluster
                else "Must specify host or cluster.")
        self._check_destination(row, host)
        if (row.status != STATUS.AVAILABLE or not migration.copy_carries(row)
                or row.migration_status not in states.MIGRATION_SETTLED):
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
