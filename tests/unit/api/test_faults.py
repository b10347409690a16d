"""Cinder's fault envelope."""

import pytest

from services.api import faults


@pytest.mark.parametrize(("status", "name"), [
    (400, "badRequest"),
    (401, "unauthorized"),
    (403, "forbidden"),
    (404, "itemNotFound"),
    (405, "badMethod"),
    (409, "conflictingRequest"),
    (413, "overLimit"),
    (415, "badMediaType"),
    (501, "notImplemented"),
    (503, "serviceUnavailable"),
    (406, "computeFault"),
    (500, "computeFault"),
    (502, "computeFault"),
])
def test_fault_name(status, name):
    assert faults.fault_name(status) == name


def test_fault_body():
    assert faults.fault_body(404, "Volume x could not be found.") == {
        "itemNotFound": {"code": 404,
                         "message": "Volume x could not be found."}}


def test_fault_body_extra_keys():
    body = faults.fault_body(413, "VolumeLimitExceeded: ...", retryAfter="0")
    assert body == {"overLimit": {"code": 413,
                                  "message": "VolumeLimitExceeded: ...",
                                  "retryAfter": "0"}}


def test_generic_messages():
    assert faults.GENERIC_BAD_REQUEST == (
        "The server could not comply with the request since it is either "
        "malformed or otherwise incorrect.")
    assert faults.GENERIC_SERVER_ERROR == (
        "The server has either erred or is incapable of performing the "
        "requested operation.")
    assert faults.GENERIC_NOT_FOUND == "The resource could not be found."
