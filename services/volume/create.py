"""Create a volume on this backend: ``creating`` -> ``available``.

Empty, or from its source (a snapshot or another volume) on the source's
backend, where the api placed it without a scheduler; a failure is
``error`` with the backend's reason and a user message.
"""

from typing import Any, Callable

from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common import messages
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import snapshots

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus


def create(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
           volume_id: str) -> bool:
    """Make the volume (in hand) if it is still ``creating``.

    :returns: whether the backend's capacity changed.
    """
    row = volume_backend.volume_in(ctxt, volume_id, STATUS.CREATING)
    if row is None or not _source_pool_fits(here, ctxt, row):
        return False
    update = here.driver_call(ctxt, row, "create", STATUS.ERROR,
                              _maker(here, ctxt, row),
                              messages.CREATE_FAILED)
    if update is None:
        return False
    values = dict(update, status=STATUS.AVAILABLE,
                  service_uuid=here.service_uuid)
    if not volumes_db.volume_cas(ctxt, volume_id,
                                 {"status": STATUS.CREATING}, values):
        LOG.warning("Volume %s changed status while being created",
                    volume_id)
    LOG.info("Created volume %(id)s on %(host)s",
             {"id": volume_id, "host": here.service_host})
    return True


def _source_pool_fits(here: volume_backend.Backend,
                      ctxt: ashlar_context.RequestContext, row: Any) -> bool:
    """A copy is made where its source is, placed by the api without a
    scheduler: refuse (``error``) a type this pool does not satisfy,
    which the api lets through when its view of the pool was stale."""
    if not (row.snapshot_id or row.source_volid):
        return True
    specs = types_db.specs_of(types_db.type_get(ctxt, row.volume_type_id))
    missing = here.missing(row, specs)
    if not missing:
        return True
    messages.fail_volume(
        ctxt, here.conf.message_ttl, row, {"status": STATUS.CREATING}, {
            "status": STATUS.ERROR, "error_reason": "The source's "
            "backend %s does not offer %s, which the volume's type "
            "requires." % (here.service_host, ", ".join(missing))},
        messages.NO_BACKEND)
    return False


def _maker(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
           row: Any) -> Callable[[], dict]:
    """The driver call that makes ``row``: empty, or from its source."""
    volume = volume_backend.driver_volume(row)
    if row.snapshot_id:
        return lambda: here.driver.create_volume_from_snapshot(
            volume, snapshots.driver_snapshot(
                snapshots_db.snapshot_get(ctxt, row.snapshot_id)))
    if row.source_volid:
        return lambda: here.driver.create_cloned_volume(
            volume, volume_backend.driver_volume(
                volumes_db.volume_get(ctxt, row.source_volid)))
    return lambda: here.driver.create_volume(volume)
