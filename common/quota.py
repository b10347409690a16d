"""Quotas as Cinder has them: the resources, how a limit is found, and the
check of a change against what a project has.

A limit is the project's own (``quotas``), else the ``default`` quota
class's (``quota_classes``), else the configured default; -1 is
unlimited.  What a project has is not a counter that could drift: it is
counted from the volumes and snapshots themselves, in the transaction that
adds to them, under the project's lock row (``common/db/api/quotas.py``).
A snapshot counts in ``snapshots`` and, with its ``volume_size``, in
``gigabytes``, and in those of its volume's type, as in Cinder.  An extend
or a retype in flight counts at its target (``pending_size``,
``pending_type_id``) until the volume service settles it.
"""

from dataclasses import dataclass

from oslo_config import cfg

from common import exception

VOLUMES = "volumes"
GIGABYTES = "gigabytes"
SNAPSHOTS = "snapshots"
PER_VOLUME = "per_volume_gigabytes"
GROUPS = "groups"
BACKUPS = "backups"
BACKUP_GIGABYTES = "backup_gigabytes"
#: Resources of every project, in Cinder's order, and their options.
GLOBAL = {VOLUMES: "quota_volumes", PER_VOLUME: "per_volume_size_limit",
          SNAPSHOTS: "quota_snapshots", GIGABYTES: "quota_gigabytes",
          BACKUPS: "quota_backups",
          BACKUP_GIGABYTES: "quota_backup_gigabytes",
          GROUPS: "quota_groups"}
#: Resources of each volume type: ``<resource>_<type name>``.
PER_TYPE = (VOLUMES, GIGABYTES, SNAPSHOTS)
UNLIMITED = -1
DEFAULT_CLASS = "default"


def type_resource(resource: str, type_name: str) -> str:
    return "%s_%s" % (resource, type_name)


def resources(type_names: list[str]) -> list[str]:
    """Every resource name, the per-type ones of ``type_names`` included."""
    return list(GLOBAL) + [type_resource(r, name) for name in type_names
                           for r in PER_TYPE]


def defaults(conf: cfg.ConfigOpts, names: list[str],
             class_limits: dict[str, int]) -> dict[str, int]:
    """The default limit of each resource in ``names``: the default
    class's, else the configured one (per-type resources: unlimited)."""
    return {name: class_limits.get(name, getattr(conf, GLOBAL[name])
                                   if name in GLOBAL else UNLIMITED)
            for name in names}


def limits(conf: cfg.ConfigOpts, names: list[str],
           class_limits: dict[str, int],
           project_limits: dict[str, int]) -> dict[str, int]:
    """The limit of each resource in ``names`` for one project."""
    found = defaults(conf, names, class_limits)
    found.update((k, v) for k, v in project_limits.items() if k in found)
    return found


@dataclass
class Usage:
    """What a project has: volumes, GiB (of volumes and snapshots) and
    snapshots, in all and of one type."""

    volumes: int = 0
    gigabytes: int = 0
    type_volumes: int = 0
    type_gigabytes: int = 0
    snapshots: int = 0
    type_snapshots: int = 0


@dataclass
class Change:
    """What an operation adds: volumes, snapshots and GiB, to the project
    and to the type ``type_name``'s counters (``global_too=False``: the
    type's only, a retype), and the size of the largest volume it makes
    (``size``).  A snapshot's create is ``Change(type of its volume,
    snapshots=1, gigabytes=volume size)``."""

    type_name: str
    volumes: int = 0
    gigabytes: int = 0
    size: int | None = None
    global_too: bool = True
    snapshots: int = 0

    def counters(self) -> dict[str, int]:
        """Resource name -> what this change adds to it."""
        added = {type_resource(VOLUMES, self.type_name): self.volumes,
                 type_resource(GIGABYTES, self.type_name): self.gigabytes,
                 type_resource(SNAPSHOTS, self.type_name): self.snapshots}
        if self.global_too:
            added.update({VOLUMES: self.volumes, GIGABYTES: self.gigabytes,
                          SNAPSHOTS: self.snapshots})
        return {name: value for name, value in added.items() if value > 0}

    def names(self) -> list[str]:
        return list(self.counters()) + [PER_VOLUME]


def needs_count(change: Change, found: dict[str, int]) -> bool:
    """Whether any counter the change adds to is limited."""
    return any(found[name] != UNLIMITED for name in change.counters())


def check_size(change: Change, found: dict[str, int]) -> None:
    """:raises VolumeSizeExceedsLimit: larger than per_volume_gigabytes."""
    limit = found.get(PER_VOLUME, UNLIMITED)
    if change.size is not None and limit != UNLIMITED and \
            change.size > limit:
        raise exception.VolumeSizeExceedsLimit(size=change.size, limit=limit)


def check(change: Change, found: dict[str, int], usage: Usage) -> None:
    """Refuse a change that takes a counter over its limit.

    :raises VolumeLimitExceeded: too many volumes (of the type).
    :raises SnapshotLimitExceeded: too many snapshots (of the type).
    :raises VolumeSizeExceedsAvailableQuota: too many GiB (of the type).
    """
    volumes = type_resource(VOLUMES, change.type_name)
    snapshots = type_resource(SNAPSHOTS, change.type_name)
    have = {VOLUMES: usage.volumes, GIGABYTES: usage.gigabytes,
            SNAPSHOTS: usage.snapshots, volumes: usage.type_volumes,
            type_resource(GIGABYTES, change.type_name): usage.type_gigabytes,
            snapshots: usage.type_snapshots}
    for name, added in change.counters().items():
        limit = found[name]
        if limit == UNLIMITED or have[name] + added <= limit:
            continue
        if name in (VOLUMES, volumes):
            raise exception.VolumeLimitExceeded(allowed=limit, name=name)
        if name in (SNAPSHOTS, snapshots):
            raise exception.SnapshotLimitExceeded(allowed=limit, name=name)
        raise exception.VolumeSizeExceedsAvailableQuota(
            name=name, requested=added, quota=limit, consumed=have[name])
