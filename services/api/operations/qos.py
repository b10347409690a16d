"""QoS specs operations (``/qos-specs``, admin by default): create, show,
list, set and unset keys, delete, and associate with volume types.

``consumer`` says who applies the limits: ``front-end`` (the hypervisor;
given to compute hosts in an attachment's ``connection_info``,
``services.volume.attach.front_end_qos``), ``back-end`` (the storage;
kept, not enforced by Ashlar's drivers) or ``both``.
"""

import builtins
import uuid
from typing import Any

from oslo_log import log as logging

from common import exception
from common.context import RequestContext
from common.db import models
from common.db.api import qos as qos_db

LOG = logging.getLogger(__name__)
CONSUMERS = ("front-end", "back-end", "both")
_RULE = "volume_extension:qos_specs_manage:%s"


def _consumer(value: str | None) -> str | None:
    if value is not None and value not in CONSUMERS:
        raise exception.InvalidInput(
            reason="Valid consumer of QoS specs are: %s" % list(CONSUMERS))
    return value


class QoSOperations:
    def create(self, ctxt: RequestContext, name: str,
               specs: dict[str, str]) -> models.QoSSpecs:
        """:raises QoSSpecsExists: the name is taken (409)."""
        ctxt.can(_RULE % "create")
        specs = dict(specs)
        consumer = _consumer(specs.pop("consumer", None)) or "back-end"
        row: models.QoSSpecs = qos_db.qos_create(ctxt, {
            "id": str(uuid.uuid4()), "name": name.strip(),
            "consumer": consumer}, specs)
        LOG.info("QoS specs %(id)s (%(name)s) created",
                 {"id": row.id, "name": row.name})
        return row

    def get(self, ctxt: RequestContext, qos_id: str) -> models.QoSSpecs:
        ctxt.can(_RULE % "get")
        row: models.QoSSpecs = qos_db.qos_get(ctxt, qos_id)
        return row

    def list(self, ctxt: RequestContext,
             **kwargs: Any) -> list[models.QoSSpecs]:
        ctxt.can(_RULE % "get_all")
        rows: list[models.QoSSpecs] = qos_db.qos_list(ctxt, **kwargs)
        return rows

    def set_keys(self, ctxt: RequestContext, qos_id: str,
                 specs: dict[str, str]) -> dict[str, str]:
        """Set keys (``consumer`` changes the consumer); the keys given."""
        ctxt.can(_RULE % "update")
        values = dict(specs)
        consumer = _consumer(values.pop("consumer", None))
        qos_db.qos_update(ctxt, qos_id, values, consumer)
        return specs

    def unset_keys(self, ctxt: RequestContext, qos_id: str,
                   keys: builtins.list[str]) -> None:
        """:raises QoSSpecsKeyNotFound: a key is not set (none goes)."""
        ctxt.can(_RULE % "update")
        qos_db.qos_update(ctxt, qos_id, {}, delete_keys=keys)

    def delete(self, ctxt: RequestContext, qos_id: str, force: bool) -> None:
        """:raises QoSSpecsInUse: associated, without ``force`` (400)."""
        ctxt.can(_RULE % "delete")
        qos_db.qos_destroy(ctxt, qos_id, force)
        LOG.info("QoS specs %s deleted", qos_id)

    def associations(self, ctxt: RequestContext,
                     qos_id: str) -> builtins.list[models.VolumeType]:
        ctxt.can(_RULE % "get")
        types: builtins.list[models.VolumeType] = qos_db.qos_associations(
            ctxt, qos_id)
        return types

    def associate(self, ctxt: RequestContext, qos_id: str,
                  type_id: str | None) -> None:
        """:raises InvalidVolumeType: the type has other specs."""
        ctxt.can(_RULE % "update")
        qos_db.qos_associate(ctxt, qos_id, _type_id(type_id))

    def disassociate(self, ctxt: RequestContext, qos_id: str,
                     type_id: str | None, every: bool = False) -> None:
        """One type's association, or (``every``) all of them."""
        ctxt.can(_RULE % "update")
        qos_db.qos_disassociate(ctxt, qos_id,
                                None if every else _type_id(type_id))


def _type_id(type_id: str | None) -> str:
    if not type_id:
        raise exception.InvalidInput(
            reason="Volume Type id must not be None.")
    return type_id
