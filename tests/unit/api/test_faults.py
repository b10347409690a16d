"""Cinder's fault envelope, and the answer while the database is down."""

import falcon
import pytest
from falcon import testing
import oslo_messaging as messaging
from oslo_db import exception as db_exc

from services.api import errors
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


def _get(resource):
    """GET a route served by ``resource`` in an app with our handlers."""
    app = falcon.App()
    errors.register(app)
    app.add_route("/v3/volumes", resource)
    return testing.TestClient(app).simulate_get("/v3/volumes")


def test_an_unreachable_database_is_a_503_clients_retry():
    class Down:
        def on_get(self, req, resp):
            raise db_exc.DBConnectionError("connection refused")

    resp = _get(Down())
    assert resp.status_code == 503
    assert resp.headers["Retry-After"] == "1"
    assert resp.json == {"serviceUnavailable": {
        "code": 503, "message": errors.DATABASE_DOWN}}


def test_a_deadlock_that_outlasted_its_retries_is_a_503():
    class Busy:
        def on_get(self, req, resp):
            raise db_exc.DBDeadlock("Deadlock found when trying to get lock")

    resp = _get(Busy())
    assert resp.status_code == 503
    assert resp.headers["Retry-After"] == "1"
    assert resp.json == {"serviceUnavailable": {
        "code": 503, "message": errors.DATABASE_BUSY}}


@pytest.mark.parametrize("headers", [{"X-Why": "because"},
                                     [("X-Why", "because")]])
def test_a_falcon_errors_headers_are_kept_in_either_form(headers):
    class Refusing:
        def on_get(self, req, resp):
            raise falcon.HTTPError(falcon.HTTP_409, headers=headers)

    resp = _get(Refusing())
    assert resp.status_code == 409
    assert resp.headers["X-Why"] == "because"


def test_a_value_the_database_refuses_is_a_400():
    """E.g. a character beyond the BMP in a utf8mb3 table of an older
    MySQL: the caller's value, not a server error."""
    class Refused:
        def on_get(self, req, resp):
            raise db_exc.DBDataError("Incorrect string value")

    resp = _get(Refused())
    assert resp.status_code == 400
    assert resp.json == {"badRequest": {
        "code": 400, "message": errors.DATA_REFUSED}}


def test_a_call_nobody_answered_is_a_503():
    """E.g. ``GET /os-services`` asks a scheduler for its pools' states;
    with no scheduler running that is a 503 in Cinder's envelope."""
    class Unanswered:
        def on_get(self, req, resp):
            raise messaging.MessagingTimeout("Timed out waiting for a reply")

    resp = _get(Unanswered())
    assert resp.status_code == 503
    assert resp.json == {"serviceUnavailable": {
        "code": 503, "message": errors.UNANSWERED}}
