"""The OpenAPI document of Ashlar's REST API: ``services/api/openapi.yaml``.

Paths, parameters and response schemas are written by hand in the YAML.
The request-body schemas (``components/schemas/*Request``) are generated
from ``services/api/schemas`` at the maximum microversion; run
``python -m services.api.openapi`` after changing a schema to rewrite them.
``tests/unit/api/test_openapi.py`` keeps the document true: every route and
method of ``routes.py`` is documented and nothing else, the body schemas
equal the generated ones, and the document is valid OpenAPI 3.1.
``tests/compat/test_openapi.py`` checks real responses against it.

The API serves the file itself at ``GET /openapi.yaml``.
"""

import os
from typing import Any

from services.api import microversion
from services.api import validation
from services.api.schemas import Schema, Versioned
from services.api.schemas import attachments as attachment_schemas
from services.api.schemas import backups as backup_schemas
from services.api.schemas import clusters as cluster_schemas
from services.api.schemas import encryption as encryption_schemas
from services.api.schemas import groups as group_schemas
from services.api.schemas import manage as manage_schemas
from services.api.schemas import metadata as metadata_schemas
from services.api.schemas import qos as qos_schemas
from services.api.schemas import quotas as quota_schemas
from services.api.schemas import services as service_schemas
from services.api.schemas import snapshots as snapshot_schemas
from services.api.schemas import transfers as transfer_schemas
from services.api.schemas import types as type_schemas
from services.api.schemas import volumes as volume_schemas

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "openapi.yaml")
MEDIA_TYPE = "application/yaml"


def _volume_actions() -> dict[str, Versioned]:
    """The volume actions the API serves (resources/volume_actions.py)."""
    try:
        from services.api.resources import volume_actions
    except ImportError:
        return {}
    return dict(sorted(volume_actions.ACTIONS.items()))


def _at_max(table: Versioned) -> Schema:
    return validation.schema_for(table, microversion.MAX_VERSION)


def _one_of(actions: dict[str, Versioned]) -> Schema:
    return {"oneOf": [_at_max(table) for _name, table in
                      sorted(actions.items())]}


def body_schemas() -> dict[str, Schema]:
    """Return ``{component name: request body schema}`` at the maximum."""
    return {
        "VolumeCreateRequest": _at_max(volume_schemas.CREATE),
        "VolumeUpdateRequest": _at_max(volume_schemas.UPDATE),
        "VolumeActionRequest": _one_of(_volume_actions()),
        "MetadataRequest": _at_max(metadata_schemas.METADATA),
        "MetadataItemRequest": _at_max(metadata_schemas.METADATA_ITEM),
        "AttachmentCreateRequest": _at_max(attachment_schemas.CREATE),
        "AttachmentUpdateRequest": _at_max(attachment_schemas.UPDATE),
        "AttachmentActionRequest": _one_of(attachment_schemas.ACTIONS),
        "HostFenceRequest": _at_max(attachment_schemas.HOST_FENCE),
        "TypeCreateRequest": _at_max(type_schemas.CREATE),
        "TypeUpdateRequest": _at_max(type_schemas.UPDATE),
        "ExtraSpecsCreateRequest": _at_max(type_schemas.EXTRA_SPECS_CREATE),
        "ExtraSpecUpdateRequest": _at_max(type_schemas.EXTRA_SPEC_UPDATE),
        "TypeActionRequest": _one_of(type_schemas.ACTIONS),
        "QuotaSetUpdateRequest": _at_max(quota_schemas.UPDATE),
        "QuotaClassSetUpdateRequest": _at_max(quota_schemas.CLASS_UPDATE),
        "ServiceActionRequest": _at_max(
            service_schemas.ACTIONS["disable-log-reason"]),
        # NOTE: anyOf: an enable's body is a valid disable's too.
        "ClusterUpdateRequest": {"anyOf": [_at_max(cluster_schemas.ENABLE),
                                           _at_max(cluster_schemas.DISABLE)]},
        "WorkersCleanupRequest": _at_max(cluster_schemas.CLEANUP),
        "SnapshotCreateRequest": _at_max(snapshot_schemas.CREATE),
        "BackupCreateRequest": _at_max(backup_schemas.CREATE),
        "ManageVolumeRequest": _at_max(manage_schemas.MANAGE_VOLUME),
        "ManageSnapshotRequest": _at_max(manage_schemas.MANAGE_SNAPSHOT),
        "BackupRestoreRequest": _at_max(backup_schemas.RESTORE),
        "BackupUpdateRequest": _at_max(backup_schemas.UPDATE),
        "BackupActionRequest": _one_of(backup_schemas.ACTIONS),
        "BackupImportRecordRequest": _at_max(backup_schemas.IMPORT_RECORD),
        "SnapshotUpdateRequest": _at_max(snapshot_schemas.UPDATE),
        "SnapshotActionRequest": _one_of(snapshot_schemas.ACTIONS),
        "TypeEncryptionCreateRequest": _at_max(encryption_schemas.CREATE),
        "TypeEncryptionUpdateRequest": _at_max(encryption_schemas.UPDATE),
        "QoSSpecsCreateRequest": _at_max(qos_schemas.CREATE),
        "QoSSpecsSetRequest": _at_max(qos_schemas.SET),
        "QoSSpecsUnsetRequest": _at_max(qos_schemas.UNSET),
        "TransferCreateRequest": _at_max(transfer_schemas.CREATE),
        "TransferCreateWithSnapshotsRequest": _at_max(
            transfer_schemas.CREATE_WITH_SNAPSHOTS),
        "TransferAcceptRequest": _at_max(transfer_schemas.ACCEPT),
        "GroupTypeCreateRequest": _at_max(group_schemas.TYPE_CREATE),
        "GroupTypeUpdateRequest": _at_max(group_schemas.TYPE_UPDATE),
        "GroupSpecsCreateRequest": _at_max(group_schemas.SPECS_CREATE),
        "GroupSpecUpdateRequest": _at_max(group_schemas.SPEC_UPDATE),
        "GroupCreateRequest": _at_max(group_schemas.CREATE),
        "GroupUpdateRequest": _at_max(group_schemas.UPDATE),
        "GroupActionRequest": _one_of(group_schemas.ACTIONS),
        "GroupFromSourceRequest": _one_of(group_schemas.FROM_SOURCE),
        "GroupSnapshotCreateRequest": _at_max(group_schemas.SNAPSHOT_CREATE),
        "GroupSnapshotActionRequest": _one_of(
            group_schemas.SNAPSHOT_ACTIONS),
    }


def read_text() -> str:
    with open(PATH, encoding="utf-8") as stream:
        return stream.read()


def load() -> dict[str, Any]:
    """Return the document as a dict."""
    import yaml
    return yaml.safe_load(read_text())


def _rewrite() -> None:
    """Replace the generated body schemas in the YAML file."""
    import yaml
    text = read_text()
    marker = "    # -- generated request bodies"
    head = text[:text.index(marker)]
    generated = yaml.safe_dump(
        {"x": body_schemas()}, sort_keys=False, default_flow_style=False,
        width=79, allow_unicode=True).split("\n", 1)[1]
    indented = "".join("  " + line + "\n" if line else "\n"
                       for line in generated.splitlines())
    with open(PATH, "w", encoding="utf-8") as stream:
        stream.write(head + marker + " (python -m services.api.openapi);"
                     " do not edit below\n" + indented)


if __name__ == "__main__":
    _rewrite()
