"""Map exceptions to Cinder's fault envelope, once, for the whole app."""

from typing import Any

import falcon
import oslo_messaging as messaging
from oslo_db import exception as db_exc
from oslo_log import log as logging

from common import exception
from common import rpc
from services.api import faults

LOG = logging.getLogger(__name__)


def _respond(resp: falcon.Response, status: int, message: str) -> None:
    resp.status = falcon.code_to_http_status(status)
    extra = {}
    if status == 413:
        # Cinder's overLimit carries a retry hint in the body and a header.
        extra["retryAfter"] = "0"
        resp.set_header("Retry-After", "0")
    resp.media = faults.fault_body(status, message, **extra)
    resp.content_type = falcon.MEDIA_JSON


def handle_domain(req: falcon.Request, resp: falcon.Response,
                  ex: exception.AshlarException,
                  params: dict[str, Any]) -> None:
    """A domain exception: its own code and user message."""
    if ex.code >= 500 and not ex.safe:
        LOG.error("%(cls)s: %(msg)s", {"cls": type(ex).__name__, "msg": ex.msg})
        _respond(resp, ex.code, faults.GENERIC_SERVER_ERROR)
        return
    _respond(resp, ex.code, ex.user_message())


def handle_http(req: falcon.Request, resp: falcon.Response,
                ex: falcon.HTTPError, params: dict[str, Any]) -> None:
    """falcon's own errors (unrouted path, bad method) in Cinder's envelope.

    NOTE(ashlar): Cinder answers unknown paths and unsupported methods with a
    plain webob 404 page (never a 405); Ashlar keeps the 404 but in the fault
    envelope, which every client parses.
    """
    if ex.status_code in (404, 405):
        _respond(resp, 404, ex.description or faults.GENERIC_NOT_FOUND)
        return
    _respond(resp, ex.status_code, ex.description or ex.title)
    resp.set_headers(ex.headers or {})


def handle_unexpected(req: falcon.Request, resp: falcon.Response,
                      ex: Exception, params: dict[str, Any]) -> None:
    """Anything else is a logged 500 with Cinder's generic text."""
    if isinstance(ex, falcon.HTTPError):
        handle_http(req, resp, ex, params)
        return
    LOG.exception("Unexpected error on %(method)s %(path)s",
                  {"method": req.method, "path": req.path})
    _respond(resp, 500, faults.GENERIC_SERVER_ERROR)


#: A 503's message while the database cannot be reached.
DATABASE_DOWN = "The database is unreachable; try again."


def handle_database_down(req: falcon.Request, resp: falcon.Response,
                         ex: db_exc.DBConnectionError,
                         params: dict[str, Any]) -> None:
    """The database is restarting or failing over: a 503 that clients
    retry, not a 500 (the failed transaction was rolled back)."""
    LOG.error("Database unreachable on %(method)s %(path)s: %(err)s",
              {"method": req.method, "path": req.path, "err": ex})
    resp.set_header("Retry-After", "1")
    _respond(resp, 503, DATABASE_DOWN)


#: A 503's message when a transaction kept losing races it was retried on.
DATABASE_BUSY = "The database is busy with concurrent changes; try again."


def handle_database_busy(req: falcon.Request, resp: falcon.Response,
                         ex: db_exc.DBDeadlock,
                         params: dict[str, Any]) -> None:
    """A writer transaction lost a deadlock (or Galera's certification)
    more often than ``engine.retry_on_deadlock`` retries it: rolled back,
    nothing changed, a 503 that clients retry, not a 500."""
    LOG.error("Database deadlock persisted on %(method)s %(path)s: %(err)s",
              {"method": req.method, "path": req.path, "err": ex})
    resp.set_header("Retry-After", "1")
    _respond(resp, 503, DATABASE_BUSY)


def handle_remote(req: falcon.Request, resp: falcon.Response,
                  ex: messaging.RemoteError, params: dict[str, Any]) -> None:
    """An error of the service that answered a call: a 503 when it lost
    the database (a writer's failover), else a 500."""
    if ex.exc_type == rpc.REMOTE_DATABASE_DOWN:
        LOG.error("Database unreachable behind %(method)s %(path)s: "
                  "%(err)s", {"method": req.method, "path": req.path,
                              "err": ex.value})
        resp.set_header("Retry-After", "1")
        _respond(resp, 503, DATABASE_DOWN)
        return
    handle_unexpected(req, resp, ex, params)


#: A 503's message when a call to another service was not answered.
UNANSWERED = "A service this request needs did not answer in time."


def handle_unanswered(req: falcon.Request, resp: falcon.Response,
                      ex: messaging.MessagingTimeout,
                      params: dict[str, Any]) -> None:
    """A call no scheduler or volume service answered (none runs, or all
    are busy): a 503, not a 500; operations whose call may have done
    something say what became of it themselves."""
    LOG.error("No answer behind %(method)s %(path)s: %(err)s",
              {"method": req.method, "path": req.path, "err": ex})
    _respond(resp, 503, UNANSWERED)


#: A 400's message for a value the database refused to store.
DATA_REFUSED = ("A value cannot be stored: it is too long, out of range, or "
                "holds characters the database cannot keep.")


def handle_data_error(req: falcon.Request, resp: falcon.Response,
                      ex: db_exc.DBDataError, params: dict[str, Any]) -> None:
    """The database refused a value the request gave (the transaction was
    rolled back): the caller's to change, a 400, not a 500."""
    LOG.warning("Database refused a value on %(method)s %(path)s: %(err)s",
                {"method": req.method, "path": req.path, "err": ex})
    _respond(resp, 400, DATA_REFUSED)


def register(app: falcon.App) -> None:
    # falcon picks the most specific handler by the exception's class.
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_http)
    app.add_error_handler(exception.AshlarException, handle_domain)
    app.add_error_handler(db_exc.DBConnectionError, handle_database_down)
    app.add_error_handler(db_exc.DBDeadlock, handle_database_busy)
    app.add_error_handler(db_exc.DBDataError, handle_data_error)
    app.add_error_handler(messaging.RemoteError, handle_remote)
    app.add_error_handler(messaging.MessagingTimeout, handle_unanswered)
