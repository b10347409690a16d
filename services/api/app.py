"""Build the falcon application and everything it needs in this process.

``OPERATIONS`` is the business layer's table (each operations class and
what it is built from); ``build_operations`` starts a worker around it
(RPC clients, capability cache, the operations, the RPC door, the warm-up)
and ``create_app`` serves ``routes.ROUTES`` over the operations.
"""

import functools
from collections.abc import Callable
from types import SimpleNamespace

import falcon
import oslo_messaging as messaging
from oslo_config import cfg

from common import exception
from common import policy
from common import quota
from common import warmup
from common.db.api import attachments as attachments_db
from common.db.api import fencing as fencing_db
from common.db.api import services as services_db
from common.db.api import sources as sources_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.api import capability_cache
from services.api import errors
from services.api import middleware
from services.api import routes
from services.api import rpc_door
from services.api.operations import attachments as attachment_ops
from services.api.operations import backups as backup_ops
from services.api.operations import encryption as encryption_ops
from services.api.operations import fencing as fencing_ops
from services.api.operations import group_snapshots as gsnap_ops
from services.api.operations import group_types as gtype_ops
from services.api.operations import groups as group_ops
from services.api.operations import manage as manage_ops
from services.api.operations import messages as message_ops
from services.api.operations import backends as backend_ops
from services.api.operations import clusters as cluster_ops
from services.api.operations import qos as qos_ops
from services.api.operations import quotas as quota_ops
from services.api.operations import snapshots as snapshot_ops
from services.api.operations import transfers as transfer_ops
from services.api.operations import types as type_ops
from services.api.operations import usage as usage_ops
from services.api.operations import volumes as volume_ops
from services.backup import rpcapi as backup_rpcapi
from services.scheduler import rpcapi as scheduler_rpcapi
from services.volume import rpcapi as volume_rpcapi

#: What the operations are built from besides each other: the config, the
#: scheduler's, the volume service's and the backup service's RPC clients,
#: and the capability
#: cache's early check of a create's type (None: no early check).
GIVEN = ("conf", "scheduler_rpc", "volume_rpc", "backup_rpc", "early_check")

#: The business layer, one row per operations object, in build order:
#: (name, class, what its constructor takes in order: GIVEN names or the
#: names of rows above).  Routes (``routes.ROUTES``) use them by name.
OPERATIONS: tuple[tuple[str, Callable[..., object], *tuple[str, ...]],
                 ...] = (
    ("volumes", volume_ops.VolumeOperations,
     "conf", "scheduler_rpc", "volume_rpc", "early_check"),
    ("attachments", attachment_ops.AttachmentOperations, "conf", "volume_rpc"),
    ("group_types", gtype_ops.GroupTypeOperations),
    ("groups", group_ops.GroupOperations,
     "conf", "volumes", "group_types", "volume_rpc"),
    ("types", type_ops.TypeOperations),
    ("backends", backend_ops.BackendOperations, "conf", "scheduler_rpc"),
    ("clusters", cluster_ops.ClusterOperations, "conf", "volume_rpc"),
    ("usage", usage_ops.UsageOperations, "conf"),
    ("quotas", quota_ops.QuotaOperations, "conf"),
    ("snapshots", snapshot_ops.SnapshotOperations,
     "conf", "volumes", "volume_rpc"),
    ("fencing", fencing_ops.FencingOperations, "volume_rpc", "attachments"),
    ("manage", manage_ops.ManageOperations,
     "conf", "volumes", "snapshots", "volume_rpc"),
    ("messages", message_ops.MessageOperations),
    ("transfers", transfer_ops.TransferOperations, "volumes"),
    ("qos", qos_ops.QoSOperations),
    ("encryption", encryption_ops.EncryptionOperations),
    ("group_snapshots", gsnap_ops.GroupSnapshotOperations,
     "groups", "volumes", "volume_rpc"),
    ("backups", backup_ops.BackupOperations,
     "conf", "volumes", "backup_rpc", "volume_rpc"),
)


class Operations(SimpleNamespace):
    """The business layer, shared by REST resources and the RPC door: one
    attribute per ``OPERATIONS`` row, ``cache`` (the capability cache) and
    ``door`` (the RPC door's server for compute agents), once started."""

    volumes: volume_ops.VolumeOperations
    attachments: attachment_ops.AttachmentOperations
    group_types: gtype_ops.GroupTypeOperations
    groups: group_ops.GroupOperations
    types: type_ops.TypeOperations
    backends: backend_ops.BackendOperations
    clusters: cluster_ops.ClusterOperations
    usage: usage_ops.UsageOperations
    quotas: quota_ops.QuotaOperations
    snapshots: snapshot_ops.SnapshotOperations
    fencing: fencing_ops.FencingOperations
    manage: manage_ops.ManageOperations
    messages: message_ops.MessageOperations
    transfers: transfer_ops.TransferOperations
    qos: qos_ops.QoSOperations
    encryption: encryption_ops.EncryptionOperations
    group_snapshots: gsnap_ops.GroupSnapshotOperations
    backups: backup_ops.BackupOperations
    cache: capability_cache.CapabilityCache | None = None
    door: messaging.MessageHandlingServer | None = None

    def stop(self) -> None:
        """Stop the RPC servers this worker runs (cache listener, door)."""
        if self.cache is not None:
            self.cache.stop()
        if self.door is not None:
            self.door.stop()
            self.door.wait()


def make_operations(**given: object) -> Operations:
    """Build the ``OPERATIONS`` rows in order.

    :param given: every ``GIVEN`` name's object.
    """
    built = dict(given)
    for name, make, *uses in OPERATIONS:
        built[name] = make(*(built[use] for use in uses))
    return Operations(**{name: built[name] for name, *_row in OPERATIONS})


def build_operations(conf: cfg.ConfigOpts) -> Operations:
    """Create RPC clients, the capability cache and the operations.

    Call it in the process that serves (after gunicorn's fork): the cache
    and the RPC door for compute agents start RPC servers of their own.
    """
    scheduler = scheduler_rpcapi.SchedulerAPI(conf)
    volume = volume_rpcapi.VolumeAPI(conf)
    cache = capability_cache.CapabilityCache(conf, scheduler, volume=volume)
    cache.start()
    # NOTE(ashlar): gunicorn builds the app in each worker before the worker
    # accepts a connection: waiting here keeps a cold worker from taking
    # (and accepting) creates that a warm one would refuse at once.
    cache.wait_warm()
    ops = make_operations(conf=conf, scheduler_rpc=scheduler,
                          volume_rpc=volume,
                          backup_rpc=backup_rpcapi.BackupAPI(conf),
                          early_check=cache.check_type)
    ops.cache = cache
    ops.door = rpc_door.start(conf, ops.attachments, ops.fencing)
    _warm_up(ops.volumes)
    return ops


def _warm_up(volumes: volume_ops.VolumeOperations) -> None:
    """Before the worker accepts its first connection: the policy, the
    reads of the volume and attachment calls, a reservation of a volume no
    row has (the writer's connection; nothing is written), and the checks
    of a create's and a delete's transaction (rolled back)."""
    quota_check = volumes.quota_check(
        warmup.NO_SUCH_ID, warmup.NO_SUCH_ID,
        quota.Change("warm-up", volumes=1, gigabytes=1, size=1))
    in_a_transaction = [
        lambda context, _no_id: quota_check(context.connection),
        lambda context, no_id: sources_db.refuse_if_copied(
            context.connection, "volume", no_id),
        volumes_db.volume_get]
    warmup.warm([volumes_db.volume_get, types_db.type_resolve,
                 attachments_db.attachment_get,
                 attachments_db.attachment_with_volume,
                 functools.partial(attachments_db.attachment_with_volume,
                                   shared=True),
                 functools.partial(attachments_db.attachment_reserve,
                                   decide=_no_decision),
                 functools.partial(fencing_db.fenced_row_of_host,
                                   host="warm-up"),
                 services_db.service_liveness, services_db.running_hosts,
                 services_db.warm_running],
                steps=[policy.get_enforcer,
                       functools.partial(warmup.undone, in_a_transaction)])


def _no_decision(volume: object, type_specs: dict
                 ) -> attachments_db.Reservation:
    """The warm-up's reservation: its volume is found in no row, so there
    is nothing to decide."""
    raise exception.VolumeNotFound(volume_id=warmup.NO_SUCH_ID)


def create_app(conf: cfg.ConfigOpts, ops: Operations) -> falcon.App:
    # NOTE(ashlar): request id first so every failure carries it; the project
    # segment leaves the path before routing; a bad microversion answers
    # before auth, as in Cinder.
    stack: list[middleware.Middleware] = [
        middleware.RequestId(),
        middleware.NoNul(),
        middleware.ProjectInUrl(routes.COLLECTIONS),
        middleware.Microversion(),
        middleware.Identity(conf)]
    app = falcon.App(middleware=stack)
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    # Cinder echoes this Accept value as the Content-Type of a JSON answer.
    app.resp_options.media_handlers[middleware.VND_JSON] = \
        falcon.media.JSONHandler()
    errors.register(app)
    for path, resource in routes.route_table(ops, conf):
        app.add_route(path, resource)
    return app
