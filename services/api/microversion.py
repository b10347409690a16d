"""Block Storage microversions: the version list and the request header.

``VERSIONS`` is Cinder's REST API version history (openstack/cinder
``cinder/api/openstack/rest_api_version_history.rst``), one line per
microversion, cut at the maximum Ashlar advertises.  Raising the maximum means
changing ``_MAX`` and implementing what the newly covered lines describe.

``parse_header`` follows Cinder's own parser
(``cinder/api/openstack/wsgi.py`` ``Request.set_api_version_request``) rather
than ``microversion_parse``, because clients rely on its quirks: a
case-sensitive substring match on ``volume``, the first such element wins, no
legacy headers, and no header means 3.0 rather than latest.

A falcon middleware calls it once per request::

    try:
        req.context.api_version = microversion.parse_header(req.headers)
    except microversion.VersionError as exc:
        resp.status = exc.status
        resp.media = exc.body
        resp.set_headers(exc.headers)
        resp.complete = True
        return
    # ... and in process_response, for every v3 response:
    resp.set_headers(microversion.response_headers(req.context.api_version))
"""

import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, NamedTuple

from services.api import faults

HEADER = "OpenStack-API-Version"
SERVICE_TYPE = "volume"

#: (version, what Cinder changed in it), oldest first.
_HISTORY: tuple[tuple[str, str], ...] = (
    ("3.0", "Microversion baseline: all v2 APIs; versions document lists min/max."),
    ("3.1", "Volume upload-to-image accepts visibility and protected."),
    ("3.2", "Volume list 'bootable' filter parsed strictly (bad value: 400)."),
    ("3.3", "User messages API: GET/DELETE /messages."),
    ("3.4", "Volume list 'glance_metadata' filter."),
    ("3.5", "Messages pagination, sorting and filters."),
    ("3.6", "Consistency group update accepts empty name (not in Ashlar)."),
    ("3.7", "Clusters API; 'cluster' field in the service list."),
    ("3.8", "Manageable volume/snapshot listings (not in Ashlar)."),
    ("3.9", "Backup update (not in Ashlar)."),
    ("3.10", "Volume list 'group_id' filter."),
    ("3.11", "Group types and group specs (not in Ashlar)."),
    ("3.12", "GET /volumes/summary."),
    ("3.13", "Generic volume groups: 'group_id' on volume create and detail."),
    ("3.14", "Group snapshots, group from source (not in Ashlar)."),
    ("3.15", "ETag on volume metadata (not in Ashlar)."),
    ("3.16", "os-migrate_volume accepts 'cluster'."),
    ("3.17", "Manageable listings accept 'cluster' (not in Ashlar)."),
    ("3.18", "Backup project attribute (not in Ashlar)."),
    ("3.19", "Group snapshot reset-status (not in Ashlar)."),
    ("3.20", "Group reset-status (not in Ashlar)."),
    ("3.21", "'provider_id' in volume detail (admin)."),
    ("3.22", "Snapshot list metadata filter (not in Ashlar)."),
    ("3.23", "'force' query parameter on volume delete."),
    ("3.24", "POST /workers/cleanup (not in Ashlar)."),
    ("3.25", "'volumes' field in group views (not in Ashlar)."),
    ("3.26", "Services failover action; freeze/thaw accept 'cluster'."),
    ("3.27", "Attachments API: create/list/detail/show/update/delete."),
    ("3.28", "Filters on scheduler-stats/get_pools."),
    ("3.29", "Group snapshot filter/sort/pagination (not in Ashlar)."),
    ("3.30", "Snapshot sort by name."),
    ("3.31", "Configurable resource filters: list filters are checked."),
    ("3.32", "Services set-log and get-log actions."),
    ("3.33", "GET /resource_filters."),
    ("3.34", "Like filters ('key~') on volume and attachment lists."),
    ("3.35", "'volume_type' filter on get_pools."),
    ("3.36", "Metadata in the volume summary."),
    ("3.37", "Backup sort by name (not in Ashlar)."),
    ("3.38", "Replication groups (not in Ashlar)."),
    ("3.39", "Admin 'project_id' filter on limits."),
    ("3.40", "Revert a volume to its latest snapshot."),
    ("3.41", "'user_id' in snapshot views."),
    ("3.42", "os-extend of in-use volumes."),
    ("3.43", "Backup metadata (not in Ashlar)."),
    ("3.44", "Attachment os-complete action."),
    ("3.45", "'count' in volume lists (with_count)."),
    ("3.46", "Create from a Nova instance-snapshot image."),
    ("3.47", "Volume create from a backup ('backup_id')."),
    ("3.48", "'shared_targets' and 'service_uuid' in volume detail."),
    ("3.49", "'backend_state' in the service list."),
    ("3.50", "Multiattach capability marker (no wire change)."),
    ("3.51", "Cross-AZ backups (not in Ashlar)."),
    ("3.52", "'RESKEY:availability_zones' reserved; type list 'extra_specs' filter."),
    ("3.53", "Strict volume create/update schemas; an empty update is a 400."),
    ("3.54", "'mode' (rw/ro) on attachment create."),
    ("3.55", "Transfers with snapshots (not in Ashlar)."),
    ("3.56", "'user_id' in backup detail (not in Ashlar)."),
    ("3.57", "Transfer project and 'accepted' fields (not in Ashlar)."),
    ("3.58", "'project_id' in group views (not in Ashlar)."),
    ("3.59", "Transfer pagination (not in Ashlar)."),
    ("3.60", "Time-comparison filters on volume list created_at/updated_at."),
    ("3.61", "'cluster_name' in volume detail (admin)."),
    ("3.62", "Per-project default volume type API."),
    ("3.63", "'volume_type_id' in volume detail; 'volume_type' always a name."),
    ("3.64", "'encryption_key_id' in volume detail of encrypted volumes."),
    ("3.65", "'consumes_quota' volume field and filter."),
    ("3.66", "Snapshots of in-use volumes without 'force'."),
    ("3.67", "project_id optional in URLs (announcement only)."),
    ("3.68", "os-reimage volume action."),
    ("3.69", "'shared_targets' may be null (tri-state)."),
    ("3.70", "Transfer of encrypted volumes (not in Ashlar)."),
    ("3.71", "os-extend_volume_completion action."),
)

#: The highest microversion Ashlar advertises and accepts.
#: NOTE(ashlar): of 3.68-3.71, 3.68's os-reimage is refused (no images),
#: 3.69 allows ``shared_targets`` to be null (Ashlar always says true),
#: 3.70 concerns transfers (not served), and 3.71's
#: os-extend_volume_completion is refused (no extend waits for a host).
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
    def body(self) -> dict[str, dict[str, Any]]:
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
