"""Cinder's fault envelope: ``{"<faultName>": {"code": N, "message": "..."}}``.

The fault name depends only on the HTTP status (openstack/cinder
``cinder/api/openstack/wsgi.py`` ``Fault._fault_names``); any status without
an entry, 406 and 500 included, is a ``computeFault``.  The generic texts are
the explanations webob gives when Cinder raises a bare ``HTTPBadRequest``,
``HTTPNotFound`` or hides an unexpected exception behind a 500.
"""

from http import HTTPStatus

FAULT_NAMES: dict[int, str] = {
    HTTPStatus.BAD_REQUEST: "badRequest",
    HTTPStatus.UNAUTHORIZED: "unauthorized",
    HTTPStatus.FORBIDDEN: "forbidden",
    HTTPStatus.NOT_FOUND: "itemNotFound",
    HTTPStatus.METHOD_NOT_ALLOWED: "badMethod",
    HTTPStatus.CONFLICT: "conflictingRequest",
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: "overLimit",
    HTTPStatus.UNSUPPORTED_MEDIA_TYPE: "badMediaType",
    HTTPStatus.NOT_IMPLEMENTED: "notImplemented",
    HTTPStatus.SERVICE_UNAVAILABLE: "serviceUnavailable",
}
DEFAULT_FAULT_NAME = "computeFault"

#: Cinder's 400 without a specific explanation (e.g. an MV header with no
#: ``volume``); Ashlar adds what is at fault (``bad_request``).
GENERIC_BAD_REQUEST = ("The server could not comply with the request since "
                       "it is either malformed or otherwise incorrect.")
#: 404 for a method that does not exist at the requested microversion.
GENERIC_NOT_FOUND = "The resource could not be found."
#: 500 for any exception that is not safe to show.
GENERIC_SERVER_ERROR = ("The server has either erred or is incapable of "
                        "performing the requested operation.")


def bad_request(at_fault: str) -> str:
    """Cinder's generic 400 text, then what is at fault (which Cinder does
    not say)."""
    return "%s %s" % (GENERIC_BAD_REQUEST, at_fault)


def fault_name(status: int) -> str:
    """Return Cinder's fault key for an HTTP status code."""
    return FAULT_NAMES.get(status, DEFAULT_FAULT_NAME)


def fault_body(status: int, message: str,
               **extra: object) -> dict[str, dict[str, object]]:
    """Build the JSON body of an error response.

    :param status: the HTTP status code of the response.
    :param message: the text shown to the caller.
    :param extra: further keys of the inner object, e.g. ``retryAfter="0"``
        for a 413.
    :returns: ``{fault_name(status): {"code": status, "message": message, ...}}``
    """
    return {fault_name(status): {"code": int(status), "message": message, **extra}}
