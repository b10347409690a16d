"""Block Storage microversions: the version list, their names and the header.

``VERSIONS`` is Cinder's REST API version history (openstack/cinder
``cinder/api/openstack/rest_api_version_history.rst``), one line per
microversion, cut at the maximum Ashlar advertises.  A note in parentheses
says where Ashlar differs: "not in Ashlar" for a feature it does not serve,
otherwise what it does instead.  Raising the maximum means changing ``_MAX``
and implementing (or noting) what the newly covered lines describe.

Code checks a microversion by its name, never by a bare number: the names
below ``MAX_VERSION`` are Cinder's (``cinder/api/microversions.py``), one for
each version Ashlar checks (``tests/unit/api/test_microversion.py`` fails on
an ``APIVersion(3, N)`` anywhere else in ``services/``).

``parse_header`` follows Cinder's own parser
(``cinder/api/openstack/wsgi.py`` ``Request.set_api_version_request``) rather
than ``microversion_parse``, because clients rely on its quirks: a
case-sensitive substring match on ``volume``, the first such element wins, no
legacy headers, and no header means 3.0 rather than latest.
``services.api.middleware.Microversion`` calls it once per request and adds
``response_headers`` to every v3 answer.
"""

import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import NamedTuple

from services.api import faults

HEADER = "OpenStack-API-Version"
SERVICE_TYPE = "volume"

#: (version, what Cinder changed in it (and where Ashlar differs)), oldest
#: first.
_HISTORY: tuple[tuple[str, str], ...] = (
    ("3.0", "Microversion baseline: all v2 APIs; versions document lists min/max."),
    ("3.1", "Volume upload-to-image accepts visibility and protected "
            "(not in Ashlar: no images)."),
    ("3.2", "Volume list 'bootable' filter parsed strictly (bad value: 400; "
            "Ashlar: at every version)."),
    ("3.3", "User messages API: GET/DELETE /messages."),
    ("3.4", "Volume list 'glance_metadata' filter (Ashlar: matches no "
            "volume)."),
    ("3.5", "Messages pagination, sorting and filters."),
    ("3.6", "Consistency group update accepts empty name (not in Ashlar)."),
    ("3.7", "Clusters API: GET/PUT /clusters; 'cluster' in the service "
            "list."),
    ("3.8", "Manageable volume/snapshot listings; /manageable_volumes and "
            "/manageable_snapshots."),
    ("3.9", "Backup update: PUT /backups/{id} (name, description)."),
    ("3.10", "Volume list 'group_id' filter (Ashlar: at every version)."),
    ("3.11", "Group types and group specs."),
    ("3.12", "GET /volumes/summary."),
    ("3.13", "Generic volume groups: 'group_id' on volume create and detail."),
    ("3.14", "Group snapshots, group from source."),
    ("3.15", "ETag on volume metadata (not in Ashlar)."),
    ("3.16", "os-migrate_volume accepts 'cluster' (Ashlar refuses one)."),
    ("3.17", "Manageable listings accept 'cluster'."),
    ("3.18", "Backup project attribute (admins: 'os-backup-project-attr:"
             "project_id')."),
    ("3.19", "Group snapshot reset-status."),
    ("3.20", "Group reset-status."),
    ("3.21", "'provider_id' in volume detail (admin; Ashlar: null)."),
    ("3.22", "Snapshot list metadata filter (not in Ashlar)."),
    ("3.23", "'force' query parameter on volume delete."),
    ("3.24", "POST /workers/cleanup (Ashlar: a live volume service runs "
             "its sweep of interrupted work now; schedulers hold none)."),
    ("3.25", "'volumes' field in group views."),
    ("3.26", "Services failover action; freeze/thaw accept 'cluster' "
             "(not in Ashlar: no replication); replication fields in "
             "cluster views (Ashlar: disabled)."),
    ("3.27", "Attachments API: create/list/detail/show/update/delete."),
    ("3.28", "Filters on scheduler-stats/get_pools."),
    ("3.29", "Group snapshot filter/sort/pagination (Ashlar: at every "
             "version)."),
    ("3.30", "Snapshot sort by name (Ashlar: at every version)."),
    ("3.31", "Configurable resource filters: list filters are checked "
             "(not in Ashlar: unknown list filters are ignored)."),
    ("3.32", "Services set-log and get-log actions (not in Ashlar)."),
    ("3.33", "GET /resource_filters (not in Ashlar; get_pools checks its "
             "filters from this version)."),
    ("3.34", "Like filters ('key~') on volume and attachment lists "
             "(not in Ashlar)."),
    ("3.35", "'volume_type' filter on get_pools."),
    ("3.36", "Metadata in the volume summary."),
    ("3.37", "Backup sort by name (not in Ashlar)."),
    ("3.38", "Replication groups (not in Ashlar; group views show "
             "'replication_status' null)."),
    ("3.39", "Admin 'project_id' filter on limits."),
    ("3.40", "Revert a volume to its latest snapshot."),
    ("3.41", "'user_id' in snapshot views."),
    ("3.42", "os-extend of in-use volumes."),
    ("3.43", "Backup metadata: on create, update and detail."),
    ("3.44", "Attachment os-complete action."),
    ("3.45", "'count' in volume lists (with_count)."),
    ("3.46", "Create from a Nova instance-snapshot image (not in Ashlar: no "
             "images)."),
    ("3.47", "Volume create from a backup ('backup_id'; Ashlar refuses it: "
             "no backups)."),
    ("3.48", "'shared_targets' and 'service_uuid' in volume detail."),
    ("3.49", "'backend_state' in the service list."),
    ("3.50", "Multiattach capability marker (no wire change)."),
    ("3.51", "Cross-AZ backups (not in Ashlar)."),
    ("3.52", "'RESKEY:availability_zones' reserved; type list 'extra_specs' "
             "filter (not in Ashlar)."),
    ("3.53", "Strict volume create/update schemas; an empty update is a 400."),
    ("3.54", "'mode' (rw/ro) on attachment create."),
    ("3.55", "Transfers with snapshots; /volume-transfers."),
    ("3.56", "'user_id' in backup detail."),
    ("3.57", "Transfer project and 'accepted' fields."),
    ("3.58", "'project_id' in group and group snapshot views."),
    ("3.59", "Transfer pagination (Ashlar: at every version)."),
    ("3.60", "Time-comparison filters on volume list created_at/updated_at "
             "(not in Ashlar)."),
    ("3.61", "'cluster_name' in volume detail (admin)."),
    ("3.62", "Per-project default volume type API (not in Ashlar)."),
    ("3.63", "'volume_type_id' in volume detail; 'volume_type' always a name."),
    ("3.64", "'encryption_key_id' in volume detail of encrypted volumes "
             "(Ashlar makes no keys: never shown)."),
    ("3.65", "'consumes_quota' volume field and filter."),
    ("3.66", "Snapshots of in-use volumes without 'force'."),
    ("3.67", "project_id optional in URLs (announcement only)."),
    ("3.68", "os-reimage volume action (Ashlar refuses it: no images)."),
    ("3.69", "'shared_targets' may be null (tri-state; Ashlar: always true)."),
    ("3.70", "Transfer of encrypted volumes (Ashlar makes no keys: nothing "
             "to refuse)."),
    ("3.71", "os-extend_volume_completion action (Ashlar refuses it)."),
)

#: The highest microversion Ashlar advertises and accepts.
#: NOTE(ashlar): of 3.68-3.71, 3.68's os-reimage is refused (no images),
#: 3.69 allows ``shared_targets`` to be null (Ashlar always says true),
#: 3.70 lets encrypted volumes with a key be transferred (Ashlar makes no
#: keys), and 3.71's os-extend_volume_completion is refused (no extend
#: waits for a host).
_MAX = "3.71"

VERSIONS: tuple[tuple[str, str], ...] = _HISTORY[
    : [version for version, _comment in _HISTORY].index(_MAX) + 1
]

_FORMAT = re.compile(r"([1-9]\d*)\.([1-9]\d*|0)")
_LATEST = "latest"


class VersionError(Exception):
    """A rejected ``OpenStack-API-Version`` header.

    It carries the whole error response: ``status``, ``body`` and ``headers``
    (empty unless the response must echo a version).
    """

    status: int = HTTPStatus.BAD_REQUEST

    def __init__(self, message: str, echo: "APIVersion | None" = None) -> None:
        super().__init__(message)
        self.message = message
        self.echo = echo

    @property
    def body(self) -> dict[str, dict[str, object]]:
        """Return the fault body of the response."""
        return faults.fault_body(self.status, self.message)

    @property
    def headers(self) -> dict[str, str]:
        """Return the ``OpenStack-API-Version``/``Vary`` headers, if any."""
        return response_headers(self.echo) if self.echo is not None else {}


class BadVersionHeader(VersionError):
    """No ``volume`` element, or one without exactly two tokens.

    NOTE: Cinder answers the wrong token count with a 500; a 400 says better
    that the client is at fault.
    """

    def __init__(self) -> None:
        super().__init__(faults.bad_request(
            "The OpenStack-API-Version header must name a 'volume' "
            "version: 'volume <MajorNum.MinorNum>' or 'volume latest'."))


class InvalidVersionString(VersionError):
    """The version is neither ``latest`` nor ``MajorNum.MinorNum``."""

    def __init__(self, version: str) -> None:
        super().__init__(f"API Version String {version} is of invalid format. "
                         "Must be of format MajorNum.MinorNum.")


class VersionNotAcceptable(VersionError):
    """A well-formed version outside MIN_VERSION..MAX_VERSION (406)."""

    status = HTTPStatus.NOT_ACCEPTABLE

    def __init__(self, version: "APIVersion") -> None:
        super().__init__(f"Version {version} is not supported by the API. "
                         f"Minimum is {MIN_VERSION} and maximum is "
                         f"{MAX_VERSION}.", echo=version)


class APIVersion(NamedTuple):
    """A microversion; instances compare as ``(major, minor)`` tuples."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> "APIVersion":
        """Parse ``"3.N"``, or ``"latest"`` (lower case only) for the maximum.

        :raises InvalidVersionString: for anything else, e.g. ``3``, ``3.01``.
        """
        if text == _LATEST:
            return MAX_VERSION
        match = _FORMAT.fullmatch(text)
        if match is None:
            raise InvalidVersionString(text)
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


MIN_VERSION = APIVersion.parse(VERSIONS[0][0])
MAX_VERSION = APIVersion.parse(VERSIONS[-1][0])

# -- Named microversions ------------------------------------------------------
# Each version Ashlar checks, under Cinder's name (cinder/api/microversions.py;
# _HISTORY above says what it changed).  Compare a request's version with
# these, e.g. ``if version >= microversion.NEW_ATTACH``; a new check gets a
# line here, in version order.
MESSAGES = APIVersion(3, 3)
VOLUME_LIST_GLANCE_METADATA = APIVersion(3, 4)
MESSAGES_PAGINATION = APIVersion(3, 5)
CLUSTER_SUPPORT = APIVersion(3, 7)
MANAGE_EXISTING_LIST = APIVersion(3, 8)
BACKUP_UPDATE = APIVersion(3, 9)
GROUP_TYPE = APIVersion(3, 11)
VOLUME_SUMMARY = APIVersion(3, 12)
GROUP_VOLUME = APIVersion(3, 13)
GROUP_SNAPSHOTS = APIVersion(3, 14)
VOLUME_MIGRATE_CLUSTER = APIVersion(3, 16)
MANAGE_EXISTING_CLUSTER = APIVersion(3, 17)
BACKUP_PROJECT = APIVersion(3, 18)
GROUP_SNAPSHOT_RESET_STATUS = APIVersion(3, 19)
GROUP_VOLUME_RESET_STATUS = APIVersion(3, 20)
VOLUME_DETAIL_PROVIDER_ID = APIVersion(3, 21)
VOLUME_DELETE_FORCE = APIVersion(3, 23)
WORKERS_CLEANUP = APIVersion(3, 24)
GROUP_VOLUME_LIST = APIVersion(3, 25)
REPLICATION_CLUSTER = APIVersion(3, 26)
NEW_ATTACH = APIVersion(3, 27)
POOL_FILTER = APIVersion(3, 28)
RESOURCE_FILTER_CONFIG = APIVersion(3, 33)
POOL_TYPE_FILTER = APIVersion(3, 35)
VOLUME_SUMMARY_METADATA = APIVersion(3, 36)
GROUP_REPLICATION = APIVersion(3, 38)
LIMITS_ADMIN_FILTER = APIVersion(3, 39)
VOLUME_REVERT = APIVersion(3, 40)
SNAPSHOT_LIST_USER_ID = APIVersion(3, 41)
VOLUME_EXTEND_INUSE = APIVersion(3, 42)
BACKUP_METADATA = APIVersion(3, 43)
NEW_ATTACH_COMPLETION = APIVersion(3, 44)
SUPPORT_COUNT_INFO = APIVersion(3, 45)
VOLUME_CREATE_FROM_BACKUP = APIVersion(3, 47)
VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS = APIVersion(3, 48)
BACKEND_STATE_REPORT = APIVersion(3, 49)
SUPPORT_VOLUME_SCHEMA_CHANGES = APIVersion(3, 53)
ATTACHMENT_CREATE_MODE_ARG = APIVersion(3, 54)
TRANSFER_WITH_SNAPSHOTS = APIVersion(3, 55)
BACKUP_PROJECT_USER_ID = APIVersion(3, 56)
TRANSFER_WITH_HISTORY = APIVersion(3, 57)
GROUP_GROUPSNAPSHOT_PROJECT_ID = APIVersion(3, 58)
VOLUME_CLUSTER_NAME = APIVersion(3, 61)
VOLUME_TYPE_ID_IN_VOLUME_DETAIL = APIVersion(3, 63)
USE_QUOTA = APIVersion(3, 65)
SNAPSHOT_IN_USE = APIVersion(3, 66)
SUPPORT_REIMAGE_VOLUME = APIVersion(3, 68)
EXTEND_VOLUME_COMPLETION = APIVersion(3, 71)


def parse_header(headers: Mapping[str, str]) -> APIVersion:
    """Return the microversion a request asks for.

    :param headers: the request headers; names are matched case-insensitively
        (falcon's ``req.headers`` upper-cases them).
    :returns: the requested version, or MIN_VERSION without the header.
    :raises BadVersionHeader: no element contains ``volume``, or the first
        one that does is not exactly two whitespace-separated tokens.
    :raises InvalidVersionString: the version token is malformed.
    :raises VersionNotAcceptable: the version is out of range.
    """
    value = _header_value(headers)
    if value is None:
        return MIN_VERSION
    element = next((e for e in value.split(",") if SERVICE_TYPE in e), None)
    tokens = element.split() if element is not None else []
    if len(tokens) != 2:
        raise BadVersionHeader()
    version = APIVersion.parse(tokens[1])
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise VersionNotAcceptable(version)
    return version


def response_headers(version: APIVersion) -> dict[str, str]:
    """Return the headers that report the version a response was made at.

    Cinder leaves them out for "legacy" versions, whose string contains
    ``1.0`` or ``2.0``; only a 406 can carry such a version.  The caller
    should append to an existing ``Vary`` rather than overwrite it.
    """
    text = str(version)
    if "1.0" in text or "2.0" in text:
        return {}
    return {HEADER: f"{SERVICE_TYPE} {text}", "Vary": HEADER}


def _header_value(headers: Mapping[str, str]) -> str | None:
    """Return the OpenStack-API-Version header, whatever its case."""
    wanted = HEADER.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)
