"""Extend a volume on this backend: ``extending`` -> what its attachments
say, at the new size; a failure is ``error_extending`` with the backend's
reason and a user message."""

from oslo_log import log as logging

from common import constants
from common import context as ashlar_context
from common import exception
from common import messages
from common.db.api import attachments as attachments_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend

LOG = logging.getLogger(__name__)
STATUS = constants.VolumeStatus


def extend(here: volume_backend.Backend, ctxt: ashlar_context.RequestContext,
           volume_id: str, new_size: int) -> bool:
    """Grow the volume to ``new_size`` GiB if it is still ``extending``.

    :returns: whether it grew (the backend's capacity changed).
    """
    try:
        row = volumes_db.volume_get(ctxt, volume_id)
    except exception.VolumeNotFound:
        return False
    if row.status != STATUS.EXTENDING:
        return False
    try:
        here.driver.extend_volume(volume_backend.driver_volume(row), new_size)
    except Exception as exc:
        LOG.exception("Driver failed to extend volume %s", volume_id)
        messages.fail_volume(ctxt, here.conf.message_ttl, row,
                             {"status": STATUS.EXTENDING},
                             {"status": STATUS.ERROR_EXTENDING,
                              "pending_size": None,
                              "error_reason": "Backend %s failed to "
                              "extend the volume: %s"
                              % (here.service_host, exc)},
                             messages.EXTEND_FAILED)
        return False
    attachments_db.volume_leave_status(
        ctxt, volume_id, STATUS.EXTENDING,
        {"size": new_size, "previous_status": None,
         "pending_size": None})
    LOG.info("Extended volume %(id)s to %(size)s GiB",
             {"id": volume_id, "size": new_size})
    return True
