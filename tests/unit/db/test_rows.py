"""The row Protocols of ``common.db.api.rows`` against what the functions
that say they return them return, and against the models: a column added,
renamed or dropped must show in the Protocol too, or a type checker would
pass code that fails (or refuse code that works)."""

import uuid

import sqlalchemy as sa

from common import attach_rules
from common import states
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api import fencing as fencing_db
from common.db.api import rows
from common.db.api import services as services_db
from common.db.api import timestamps
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from common.db.api.attachments import statements

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

database = fixtures.database

#: The relationships a ``VolumeRow`` has besides the volume's columns.
_VOLUME_RELATIONS = {"volume_type", "volume_metadata", "attachments"}


def _members(protocol: type) -> set[str]:
    """The read-only members (properties) a row Protocol declares."""
    return {name for klass in protocol.__mro__
            for name, value in vars(klass).items()
            if isinstance(value, property)}


def _columns(model: type) -> set[str]:
    return {column.key for column in model.__table__.columns}


def _attached_volume():
    vol = fixtures.make_volume(multiattach=True)
    status, transition = states.on_reserve(True)
    row = fixtures.reserve(
        vol.id, attach_rules.ReserveGuard(multiattach=True, limit=8),
        {"id": str(uuid.uuid4()), "attach_status": status,
         "transition": transition, "attach_mode": "rw",
         "attached_host": "h1", "instance_uuid": None},
        connector={"host": "h1"})
    return vol, row


def test_the_protocols_say_every_column_of_their_table():
    assert _members(rows.AttachmentRow) == _columns(models.VolumeAttachment)
    assert _members(rows.VolumeRow) == (_columns(models.Volume)
                                        | _VOLUME_RELATIONS)
    assert _members(rows.VolumeBrief) == {column.key
                                          for column in statements.BRIEF}
    assert _members(rows.AttachmentWithConnector) == (
        _columns(models.VolumeAttachment) | {"has_connector"})
    assert _members(rows.VolumeState) == {column.key
                                          for column in statements.STATE}


def test_the_models_fit_the_protocols_of_their_rows():
    for protocol, model in ((rows.VolumeRow, models.Volume),
                            (rows.AttachmentRow, models.VolumeAttachment),
                            (rows.ResolvedType, models.VolumeType),
                            (rows.ServiceLiveness, models.Service),
                            (rows.MetadataItem, models.VolumeMetadata)):
        members = _members(protocol)
        assert members and members <= set(sa.inspect(model).attrs.keys()), \
            protocol


def test_the_volume_reads_return_what_their_protocols_say():
    vol, att = _attached_volume()
    volumes_db.volume_update(fixtures.admin(), vol.id, {}, {"k": "v"})
    volume = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert _members(rows.VolumeRow) <= set(vars(volume))
    assert _members(rows.TypeName) <= set(vars(volume.volume_type))
    [item] = volume.volume_metadata
    assert _members(rows.MetadataItem) <= set(vars(item))
    [attachment] = volume.attachments
    assert _members(rows.AttachmentRow) <= set(attachment._asdict())
    assert _members(rows.AttachmentRow) <= set(vars(att))
    brief = attachments_db.volume_brief(fixtures.admin(), vol.id)
    assert _members(rows.VolumeBrief) <= set(brief._asdict())


def test_the_attachment_reads_return_what_their_protocols_say():
    vol, att = _attached_volume()
    ctxt = fixtures.admin()
    row = attachments_db.attachment_get(ctxt, att.id)
    assert _members(rows.AttachmentRow) <= set(vars(row))
    row, volume, _shared = attachments_db.attachment_with_volume(ctxt, att.id)
    assert _members(rows.AttachmentWithConnector) <= set(vars(row))
    assert _members(rows.VolumeBrief) <= set(vars(volume))
    volume, _specs = attachments_db.volume_and_specs(ctxt, vol.id)
    assert _members(rows.VolumeBrief) <= set(vars(volume))
    now, connector, _holders = attachments_db.disconnect_state(
        ctxt, vol.id, att.id, "h1")
    assert _members(rows.AttachmentStatus) <= set(vars(now))
    assert connector == {"host": "h1"}
    gone = attachments_db.attachment_destroy(
        ctxt, vol.id, att.id, {"attach_status": att.attach_status})
    assert gone is not None
    assert set(gone) == set(rows.Destroyed.__annotations__)


def test_the_other_core_reads_return_what_their_protocols_say():
    ctxt = fixtures.admin()
    vol, att = _attached_volume()
    assert attachments_db.attachment_record(
        ctxt, vol.id, att.id, {"attach_status": att.attach_status},
        {"fenced_at": timestamps.utcnow()})
    fenced = fencing_db.fenced_row_of_host(ctxt, vol.id, "h1")
    assert fenced is not None
    assert _members(rows.FencedRow) <= set(fenced._asdict())
    services_db.service_register(ctxt, "node1@b1", "ashlar-volume",
                                 "ashlar-volume", "nova")
    [service] = services_db.service_liveness(ctxt, "ashlar-volume")
    assert _members(rows.ServiceLiveness) <= set(service._asdict())
    vtype, _specs = types_db.type_resolve(ctxt, "__DEFAULT__")
    assert _members(rows.ResolvedType) <= set(vars(vtype))
