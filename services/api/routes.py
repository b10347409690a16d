"""The one route table: every path Ashlar serves and what serves it.

Each row of ``ROUTES`` is a path (after ``middleware.ProjectInUrl`` took the
project out), the resource class that serves it, what its constructor takes
in order (operations by their ``app.OPERATIONS`` name, or ``SETTINGS``),
then constants by keyword.  ``route_table`` builds the resources.

How to add a resource:
  1. a class in ``resources/<name>.py`` whose ``__init__`` takes what it uses;
  2. a row per path in ``ROUTES``: path, class, what it uses (in order);
  3. new business logic: its operations class as a row of ``app.OPERATIONS``.
  The unit tests then ask for each new path in ``openapi.yaml``.
"""

from collections.abc import Callable, Mapping
from typing import NamedTuple

from oslo_config import cfg

from services.api import microversion as mv
from services.api.resources import attachments
from services.api.resources import availability_zones
from services.api.resources import backends
from services.api.resources import backups
from services.api.resources import clusters
from services.api.resources import encryption
from services.api.resources import extensions
from services.api.resources import group_types
from services.api.resources import groups
from services.api.resources import limits
from services.api.resources import manage
from services.api.resources import messages
from services.api.resources import metadata
from services.api.resources import qos
from services.api.resources import quotas
from services.api.resources import snapshots
from services.api.resources import transfers
from services.api.resources import types
from services.api.resources import versions
from services.api.resources import volume_actions
from services.api.resources import volumes

#: What a resource may use besides operations, read from the config.
SETTINGS = ("conf", "max_limit")


class Route(NamedTuple):
    """One path, and how to build the resource that serves it."""

    path: str
    resource: Callable[..., object]
    #: Names of what the constructor takes, in order (see ``SETTINGS``).
    uses: tuple[str, ...]
    #: Keyword arguments that are the same in every worker.
    constants: Mapping[str, object]


def route(path: str, resource: Callable[..., object], *uses: str,
          **constants: object) -> Route:
    """A row of ``ROUTES``: ``resource(*uses, **constants)`` serves path."""
    return Route(path, resource, uses, constants)


ROUTES: tuple[Route, ...] = (
    # Version discovery and the API's own description.
    route("/", versions.Versions),
    route("/v3", versions.Versions, status="200 OK"),
    route("/openapi.yaml", versions.OpenAPI),
    route("/v3/extensions", extensions.Extensions),
    # Volumes, their actions and metadata.
    route("/v3/volumes", volumes.Collection, "volumes", "max_limit"),
    route("/v3/volumes/detail", volumes.Detail, "volumes", "max_limit"),
    route("/v3/volumes/summary", limits.VolumeSummary, "usage"),
    route("/v3/volumes/{volume_id}", volumes.Item, "volumes"),
    route("/v3/volumes/{volume_id}/action", volume_actions.Action,
          "volumes", "attachments", "manage"),
    route("/v3/volumes/{volume_id}/metadata", metadata.Metadata, "volumes"),
    route("/v3/volumes/{volume_id}/metadata/{key}", metadata.MetadataItem,
          "volumes", missing=volumes.missing_key),
    # Attachments (3.27+) and Ashlar's fencing of a compute host.
    route("/v3/attachments", attachments.Collection,
          "attachments", "max_limit"),
    route("/v3/attachments/detail", attachments.Detail,
          "attachments", "max_limit"),
    route("/v3/attachments/{attachment_id}", attachments.Item,
          "attachments"),
    route("/v3/attachments/{attachment_id}/action", attachments.Action,
          "attachments", "fencing"),
    route("/v3/ashlar-fencing/{action}", attachments.HostFence, "fencing"),
    # Snapshots, their metadata and admin actions.
    route("/v3/snapshots", snapshots.Collection, "snapshots", "max_limit"),
    route("/v3/snapshots/detail", snapshots.Detail,
          "snapshots", "max_limit"),
    route("/v3/snapshots/{snapshot_id}", snapshots.Item, "snapshots"),
    route("/v3/snapshots/{snapshot_id}/metadata", metadata.Metadata,
          "snapshots"),
    route("/v3/snapshots/{snapshot_id}/metadata/{key}",
          metadata.MetadataItem, "snapshots",
          missing=snapshots.missing_key),
    route("/v3/snapshots/{snapshot_id}/action", snapshots.Action,
          "snapshots", "manage"),
    # Existing storage adopted (manage); 3.8+ under the newer names.
    route("/v3/os-volume-manage", manage.Volumes, "manage", "max_limit"),
    route("/v3/os-volume-manage/detail", manage.VolumeList,
          "manage", "max_limit", detail=True),
    route("/v3/manageable_volumes", manage.Volumes, "manage", "max_limit",
          since=mv.MANAGE_EXISTING_LIST),
    route("/v3/manageable_volumes/detail", manage.VolumeList,
          "manage", "max_limit", detail=True, since=mv.MANAGE_EXISTING_LIST),
    route("/v3/os-snapshot-manage", manage.Snapshots, "manage", "max_limit"),
    route("/v3/os-snapshot-manage/detail", manage.SnapshotList,
          "manage", "max_limit", detail=True),
    route("/v3/manageable_snapshots", manage.Snapshots, "manage",
          "max_limit", since=mv.MANAGE_EXISTING_LIST),
    route("/v3/manageable_snapshots/detail", manage.SnapshotList,
          "manage", "max_limit", detail=True, since=mv.MANAGE_EXISTING_LIST),
    # Backups (the backup service's).
    route("/v3/backups", backups.Collection, "backups", "max_limit"),
    route("/v3/backups/detail", backups.Detail, "backups", "max_limit"),
    route("/v3/backups/import_record", backups.ImportRecord, "backups"),
    route("/v3/backups/{backup_id}", backups.Item, "backups"),
    route("/v3/backups/{backup_id}/restore", backups.Restore, "backups"),
    route("/v3/backups/{backup_id}/action", backups.Action, "backups"),
    route("/v3/backups/{backup_id}/export_record", backups.ExportRecord,
          "backups"),
    # Volume types, their extra specs, access and encryption.
    route("/v3/types", types.Collection, "types"),
    route("/v3/types/{type_id}", types.Item, "types", "conf"),
    route("/v3/types/{type_id}/extra_specs", types.ExtraSpecs, "types"),
    route("/v3/types/{type_id}/extra_specs/{key}", types.ExtraSpec,
          "types"),
    route("/v3/types/{type_id}/os-volume-type-access", types.Access,
          "types"),
    route("/v3/types/{type_id}/action", types.Action, "types"),
    route("/v3/types/{type_id}/encryption", encryption.Encryption,
          "encryption"),
    route("/v3/types/{type_id}/encryption/{encryption_id}",
          encryption.EncryptionItem, "encryption"),
    # QoS specs and their associations with types.
    route("/v3/qos-specs", qos.Collection, "qos", "max_limit"),
    route("/v3/qos-specs/{qos_id}", qos.Item, "qos"),
    route("/v3/qos-specs/{qos_id}/delete_keys", qos.DeleteKeys, "qos"),
    route("/v3/qos-specs/{qos_id}/associations", qos.Associations, "qos"),
    route("/v3/qos-specs/{qos_id}/associate", qos.Association, "qos",
          action="associate"),
    route("/v3/qos-specs/{qos_id}/disassociate", qos.Association, "qos",
          action="disassociate"),
    route("/v3/qos-specs/{qos_id}/disassociate_all", qos.Association,
          "qos", action="disassociate_all"),
    # Services, hosts, pools and what the backends report.
    route("/v3/os-services", backends.Services, "backends"),
    route("/v3/os-services/{action}", backends.ServiceAction, "backends"),
    route("/v3/os-hosts", backends.Hosts, "backends"),
    route("/v3/os-hosts/{host_name}", backends.Host, "backends"),
    route("/v3/scheduler-stats/get_pools", backends.Pools, "backends"),
    route("/v3/capabilities/{host}", backends.Capabilities, "backends"),
    route("/v3/os-availability-zone", availability_zones.AvailabilityZones,
          "usage"),
    # Clusters of volume services (3.7+) and the operator's cleanup (3.24+).
    route("/v3/clusters", clusters.Collection, "clusters"),
    route("/v3/clusters/detail", clusters.Collection, "clusters",
          detail=True),
    route("/v3/clusters/{name}", clusters.Item, "clusters"),
    route("/v3/workers/cleanup", clusters.Cleanup, "clusters"),
    # Limits and quotas.
    route("/v3/limits", limits.Limits, "usage"),
    route("/v3/os-quota-sets/{project_id}", quotas.QuotaSet, "quotas"),
    route("/v3/os-quota-sets/{project_id}/defaults", quotas.QuotaDefaults,
          "quotas"),
    route("/v3/os-quota-class-sets/{class_name}", quotas.QuotaClassSet,
          "quotas"),
    # User messages (3.3+).
    route("/v3/messages", messages.Collection, "messages", "max_limit"),
    route("/v3/messages/{message_id}", messages.Item, "messages"),
    # Transfers: the old spelling at every version, the new one from 3.55.
    route("/v3/os-volume-transfer", transfers.Collection,
          "transfers", "max_limit"),
    route("/v3/os-volume-transfer/detail", transfers.Detail,
          "transfers", "max_limit"),
    route("/v3/os-volume-transfer/{transfer_id}", transfers.Item,
          "transfers"),
    route("/v3/os-volume-transfer/{transfer_id}/accept", transfers.Accept,
          "transfers"),
    route("/v3/volume-transfers", transfers.Collection,
          "transfers", "max_limit", since=mv.TRANSFER_WITH_SNAPSHOTS),
    route("/v3/volume-transfers/detail", transfers.Detail,
          "transfers", "max_limit", since=mv.TRANSFER_WITH_SNAPSHOTS),
    route("/v3/volume-transfers/{transfer_id}", transfers.Item,
          "transfers", since=mv.TRANSFER_WITH_SNAPSHOTS),
    route("/v3/volume-transfers/{transfer_id}/accept", transfers.Accept,
          "transfers", since=mv.TRANSFER_WITH_SNAPSHOTS),
    # Group types (3.11+), groups (3.13+) and group snapshots (3.14+).
    route("/v3/group_types", group_types.Collection,
          "group_types", "max_limit"),
    route("/v3/group_types/{group_type_id}", group_types.Item,
          "group_types"),
    route("/v3/group_types/{group_type_id}/group_specs", group_types.Specs,
          "group_types"),
    route("/v3/group_types/{group_type_id}/group_specs/{key}",
          group_types.Spec, "group_types"),
    route("/v3/groups", groups.Groups, "groups", "max_limit"),
    route("/v3/groups/detail", groups.GroupList, "groups", "max_limit",
          detail=True),
    route("/v3/groups/action", groups.FromSource, "groups"),
    route("/v3/groups/{group_id}", groups.Group, "groups"),
    route("/v3/groups/{group_id}/action", groups.GroupAction, "groups"),
    route("/v3/group_snapshots", groups.GroupSnapshots,
          "group_snapshots", "max_limit"),
    route("/v3/group_snapshots/detail", groups.GroupSnapshotList,
          "group_snapshots", "max_limit", detail=True),
    route("/v3/group_snapshots/{group_snapshot_id}", groups.GroupSnapshot,
          "group_snapshots"),
    route("/v3/group_snapshots/{group_snapshot_id}/action",
          groups.GroupSnapshotAction, "group_snapshots"),
)

#: The first segments after ``/v3/``: a URL's segment there that is none of
#: these is a project id (``middleware.ProjectInUrl``).
COLLECTIONS = frozenset(row.path.split("/")[2] for row in ROUTES
                        if row.path.startswith("/v3/"))


def route_table(ops: object, conf: cfg.ConfigOpts
                ) -> list[tuple[str, object]]:
    """Return (path, resource) pairs, each resource built as its row says.

    :param ops: the operations, one attribute per ``app.OPERATIONS`` name.
    :param conf: the config (``SETTINGS`` come from it).
    """
    settings = {"conf": conf, "max_limit": conf.api.max_limit}

    def use(name: str) -> object:
        return settings[name] if name in settings else getattr(ops, name)
    return [(row.path, row.resource(*map(use, row.uses), **row.constants))
            for row in ROUTES]
